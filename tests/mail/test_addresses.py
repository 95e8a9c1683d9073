"""Recipient addresses: validation without DNS, typo refusal, header-injection refusal."""

from __future__ import annotations

import pytest

from h0.errors import InvalidRequest
from h0.mail.compose.addresses import check_address, parse_recipients, suggest_domain


def test_given_a_plain_address_when_checked_then_it_is_valid_and_normalised():
    checked = check_address(" Bob@Example.com ")
    assert checked.valid and checked.normalized == "Bob@example.com"


@pytest.mark.parametrize(
    "text", ["not-an-address", "a@", "@example.com", "a@@example.com", "a b@example.com", "a@localhost"]
)
def test_given_a_malformed_address_when_checked_then_it_is_invalid_with_a_reason(text):
    checked = check_address(text)
    assert not checked.valid and checked.reason


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("a@gmial.com", "a@gmail.com"),
        ("a@hotmial.com", "a@hotmail.com"),
        ("a@yahooo.com", "a@yahoo.com"),
        ("a@outlok.com", "a@outlook.com"),
        ("a@googlemial.com", "a@googlemail.com"),
        ("a@protonmial.com", "a@protonmail.com"),
    ],
)
def test_given_a_misspelled_popular_domain_when_checked_then_the_fix_is_suggested(typo, meant):
    checked = check_address(typo)
    assert not checked.valid
    assert checked.suggestion == meant
    assert "did you mean" in checked.reason


@pytest.mark.parametrize("domain", ["gmail.com", "example.com", "aol.com", "aal.com", "mail.ru", "gmx.de"])
def test_given_a_real_or_unrelated_domain_then_no_typo_is_suspected(domain):
    assert suggest_domain(domain) is None


def test_given_an_internationalised_domain_then_it_is_sent_as_punycode():
    [address] = parse_recipients("to", "Jürgen <j@bücher.de>")
    assert address.addr_spec == "j@xn--bcher-kva.de"
    assert address.display_name == "Jürgen"


def test_given_a_non_ascii_local_part_then_it_is_refused_before_sending():
    with pytest.raises(InvalidRequest) as caught:
        parse_recipients("to", "jürgen@example.com")
    assert "non-ASCII" in caught.value.message


def test_given_comma_separated_or_list_recipients_then_all_are_parsed():
    assert [a.addr_spec for a in parse_recipients("to", "a@example.com, B <b@example.org>")] == [
        "a@example.com",
        "b@example.org",
    ]
    assert [a.addr_spec for a in parse_recipients("cc", ["a@example.com", '"Doe, Jane" <j@example.org>'])] == [
        "a@example.com",
        "j@example.org",
    ]
    assert parse_recipients("bcc", None) == []


@pytest.mark.parametrize(
    "value",
    [
        "bob@example.com\r\nBcc: evil@x.com",
        "bob@example.com\nBcc: evil@x.com",
        "Bob\r <bob@example.com>",
        "bob@example.com\u2028Bcc: evil@x.com",
        ["ok@example.com", "bob@example.com\r\nX: y"],
        "=?utf-8?q?Bob=0D=0ABcc:_evil@x.com?= <bob@example.com>",
        "=?utf-8?b?Qm9iDQo=?= <bob@example.com>",
        "=?utf-8?q?Bob=07?= <bob@example.com>",
    ],
)
def test_given_a_line_break_in_a_recipient_then_header_injection_is_refused(value):
    with pytest.raises(InvalidRequest) as caught:
        parse_recipients("to", value)
    assert "line break" in caught.value.message


def test_given_an_encoded_display_name_then_the_address_carries_its_decoded_text():
    (address,) = parse_recipients("to", "=?utf-8?q?Jos=C3=A9=2C_M=C3=BCller?= <jose@example.com>")
    assert address.display_name == "José, Müller" and address.addr_spec == "jose@example.com"


def test_given_several_bad_addresses_then_every_problem_is_reported_at_once():
    with pytest.raises(InvalidRequest) as caught:
        parse_recipients("to", "ok@example.com, nope, a@gmial.com")
    problems = caught.value.details["problems"]
    assert [p["address"] for p in problems] == ["nope", "a@gmial.com"]
    assert problems[1]["suggestion"] == "a@gmail.com"


def test_given_a_suspected_typo_and_allow_typo_domains_then_the_address_is_accepted():
    [address] = parse_recipients("to", "a@gmial.com", allow_typo_domains=True)
    assert address.addr_spec == "a@gmial.com"
