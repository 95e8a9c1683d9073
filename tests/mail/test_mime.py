"""Building messages: alternatives, RFC 2047, UTF-8, attachments attached with their type, threading headers."""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest

from h0.errors import InvalidRequest
from h0.mail.compose.addresses import parse_recipients
from h0.mail.compose.attachments import load_attachments
from h0.mail.compose.mime import compose, normalize_message_id, raw_bytes, reply_headers
from h0.mail.incoming.htmltext import html_to_text
from h0.vault.paths import PathResolver


def roundtrip(msg):
    return BytesParser(policy=policy.default).parsebytes(raw_bytes(msg))


def test_given_non_ascii_names_subject_and_body_then_headers_are_rfc2047_and_the_body_utf8():
    msg = compose(
        to=parse_recipients("to", "José Müller <jose@example.com>"), subject="Grüße — Résumé", body="Héllo wörld\n"
    )
    wire = raw_bytes(msg)
    assert wire.isascii(), "headers encoded per RFC 2047, body quoted-printable: survives any relay"
    assert b"=?utf-8?" in wire
    parsed = roundtrip(msg)
    assert str(parsed["Subject"]) == "Grüße — Résumé"
    assert parsed["To"].addresses[0].display_name == "José Müller"
    assert parsed.get_body(("plain",)).get_content() == "Héllo wörld\r\n"  # CRLF on the wire


def test_given_an_html_body_then_plain_and_html_are_alternatives():
    msg = roundtrip(
        compose(to=parse_recipients("to", "a@example.com"), subject="S", body="plain", html_body="<b>html</b>")
    )
    assert msg.get_content_type() == "multipart/alternative"
    assert msg.get_body(("plain",)).get_content().strip() == "plain"
    assert msg.get_body(("html",)).get_content().strip() == "<b>html</b>"


@pytest.mark.parametrize(
    "subject",
    [
        "Hi\r\nBcc: evil@x.com",
        "Hi\nthere",
        "Hi\rthere",
        "Hi\tthere",
        "Hi\x1b[31m",
        "=?utf-8?q?Hi=0D=0ABcc:_evil@x.com?=",
        "Hi =?utf-8?b?DQpCY2M6IGV2aWxAeC5jb20=?=",
    ],
)
def test_given_a_subject_with_a_line_break_then_it_is_refused(subject):
    with pytest.raises(InvalidRequest):
        compose(to=parse_recipients("to", "a@example.com"), subject=subject, body="b")


@pytest.mark.parametrize("body", ["", "   \n\t "])
def test_given_an_empty_body_then_nothing_is_built(body):
    with pytest.raises(InvalidRequest):
        compose(to=parse_recipients("to", "a@example.com"), subject="S", body=body)


def test_given_a_message_whose_serialisation_would_add_a_header_then_raw_bytes_refuses_it():
    """Backends get bytes only through raw_bytes, which parses them back: the email package of
    CPython < 3.13 writes an encoded word's CR LF as a real line break (CVE-2024-6923)."""
    from email.message import EmailMessage

    message = EmailMessage(policy=policy.SMTP)
    message["To"] = "a@example.com"
    message["Subject"] = "=?utf-8?q?Hi=0D=0ABcc:_evil@x.com?="
    message.set_content("b")
    with pytest.raises(InvalidRequest) as refused:
        raw_bytes(message)
    assert refused.value.details["reason"] == "header_check"


def test_given_a_message_id_with_or_without_brackets_then_it_is_normalised():
    assert normalize_message_id("abc@h0.local") == "<abc@h0.local>"
    assert normalize_message_id(" <abc@h0.local> ") == "<abc@h0.local>"
    for bad in ("no-at-sign", "<a@b>\r\nBcc: x@y", "a b@c", "<a@b"):
        with pytest.raises(InvalidRequest):
            normalize_message_id(bad)


def test_given_an_original_with_references_then_the_reply_chains_them():
    assert reply_headers("<b@x>", "<a@x>") == ("<b@x>", "<a@x> <b@x>")
    assert reply_headers("b@x", None) == ("<b@x>", "<b@x>")
    assert reply_headers(None, None) == (None, None)


def test_given_reply_headers_then_the_message_carries_them_with_angle_brackets():
    in_reply_to, references = reply_headers("<orig@example.com>", None)
    msg = roundtrip(
        compose(
            to=parse_recipients("to", "a@example.com"),
            subject="Re: S",
            body="b",
            message_id="mine@h0.local",
            in_reply_to=in_reply_to,
            references=references,
        )
    )
    assert msg["In-Reply-To"] == "<orig@example.com>"
    assert msg["References"] == "<orig@example.com>"
    assert msg["Message-ID"] == "<mine@h0.local>"


def test_given_vault_attachments_then_they_are_attached_with_their_type(vault_dir: Path):
    (vault_dir / "Done" / "report.pdf").write_bytes(b"%PDF-1.4 fake")
    (vault_dir / "Done" / "notes é.txt").write_text("hello", encoding="utf-8")
    files = load_attachments(PathResolver(vault_dir), ["Done/report.pdf", "Done/notes é.txt"])
    msg = roundtrip(
        compose(to=parse_recipients("to", "a@example.com"), subject="S", body="see attached", attachments=files)
    )
    parts = {p.get_filename(): p for p in msg.iter_attachments()}
    assert parts["report.pdf"].get_content_type() == "application/pdf"
    assert parts["report.pdf"].get_content() == b"%PDF-1.4 fake"
    assert parts["notes é.txt"].get_content_type() == "text/plain"


def test_given_html_only_mail_then_it_reads_as_text():
    html = (
        "<html><head><style>p{color:red}</style><title>t</title></head><body>"
        "<h1>Invoice</h1><p>Dear&nbsp;Ann,<br>please pay &euro;10.</p>"
        "<ul><li>one</li><li>two</li></ul><p>See <a href='https://x.example/pay'>the page</a>.</p>"
        "<script>alert(1)</script></body></html>"
    )
    text = html_to_text(html)
    assert "color:red" not in text and "alert" not in text
    assert "Invoice" in text and "Dear Ann,\nplease pay €10." in text
    assert "- one\n- two" in text
    assert "the page (https://x.example/pay)" in text


def test_given_images_and_unsafe_links_in_html_then_the_text_names_images_and_drops_unsafe_targets():
    text = html_to_text(
        '<img src="https://t.example/p.gif" width=1><img alt="Logo" src="https://t.example/l.png">'
        '<a href="javascript:alert(1)">Claim</a> <a href="data:text/html,x">Data</a>'
    )
    assert text == "[image: Logo]Claim Data"
