"""One reader per kind of value: an address list is split one way, whoever reads it.

Two parsers of the same bytes will one day disagree, and an attacker looks for exactly that: a report
that shows one recipient where the message has two, an attack check that reads another sender than
the one the reply goes to. The sources are read with `ast` (the style of tests/test_layers.py): the
standard library's address parsers are called only by the one reader of each kind of text —
`h0/vault/values.py` (`split_addresses`: a note's values, settings, a draft's recipients, a sender
line) and `h0/mail/headers.py` (`header_addresses`: a raw header, encoded words held aside first).
Then hostile address lists are read by every entry point, which must agree.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from h0.errors import InvalidRequest
from h0.mail.compose.addresses import other_address_in_name, parse_recipients
from h0.mail.headers import addresses_shown, header_addresses
from h0.vault.values import addresses, named_addresses

ROOT = Path(__file__).resolve().parents[1]
H0 = ROOT / "h0"
PARSERS = frozenset({"getaddresses", "parseaddr"})
# The one reader of each kind of address text.
READERS = frozenset({"h0/vault/values.py", "h0/mail/headers.py"})
# Left on purpose, each with why.
LEFT = {
    # Drafting's context assembly belongs to another part of issue 42 (relevance); route it to
    # h0.vault.values.named_addresses when that part is merged.
    "h0/drafting/context.py": "another engineer's module in this issue",
}


def parser_calls(source: str) -> list[int]:
    """Lines that call or import the standard library's address parsers."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.ImportFrom)
            and any(alias.name in PARSERS for alias in node.names)
            or isinstance(node, ast.Attribute)
            and node.attr in PARSERS
        ):
            found.append(node.lineno)
    return found


def test_address_parsers_are_called_only_by_the_one_reader() -> None:
    """Given every module of h0/, when its source is read, then only the readers use getaddresses/parseaddr."""
    offenders = {}
    for path in sorted(H0.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in READERS or rel in LEFT:
            continue
        if lines := parser_calls(path.read_text(encoding="utf-8")):
            offenders[rel] = lines
    assert offenders == {}, f"address lists parsed outside the one reader: {offenders}"


def test_the_checker_finds_a_parser_call() -> None:
    """The source check is not vacuous: both spellings of a call are found."""
    assert parser_calls("from email.utils import getaddresses\n") == [1]
    assert parser_calls("import email.utils\nemail.utils.parseaddr(x)\n") == [2]
    assert parser_calls("def f(x):\n    return x.split(',')\n") == []


HOSTILE = [
    # A display name holding a comma: split on "," it is two recipients.
    '"Smith, Jo" <jo@example.com>, ceo@example.org',
    # A display name that shows another address than the real one.
    '"ceo@bank.example" <evil@attacker.example>',
    # Angle brackets and a group.
    "Team: a@example.com, b@example.com;, c@example.com",
    # Semicolons, as Outlook writes lists.
    "a@example.com; b@example.com",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_address_lists_read_alike_by_every_entry_point(value: str) -> None:
    """Given a hostile address list, when the note model, the header reader and the send path read it,
    then they name the same addresses in the same order."""
    from_note = addresses(value)
    from_header = [addr for _, addr in header_addresses(value)]
    assert from_note == from_header
    assert from_note, "every value here names at least one address"
    try:
        sent_to = [a.addr_spec for a in parse_recipients("to", value)]
    except InvalidRequest:
        return  # the send path refuses the whole list: nothing goes anywhere the report does not show
    assert sent_to == from_note


def test_a_header_address_with_list_punctuation_reads_alike_once_in_a_note() -> None:
    """Given a raw header whose address hides list punctuation, the header reader drops it (mail in) and
    what ingest writes on the note is then read the same by the note model."""
    value = '"odd,local"@example.com, plain@example.com'
    from_header = [addr for _, addr in header_addresses(value)]
    assert from_header == ["oddlocal@example.com", "plain@example.com"]
    assert addresses(", ".join(from_header)) == from_header


def test_a_comma_inside_a_name_is_one_recipient_everywhere() -> None:
    """Given `"Smith, Jo" <jo@…>`, then every reader sees one person there, not two."""
    value = '"Smith, Jo" <jo@example.com>'
    assert named_addresses(value) == [("Smith, Jo", "jo@example.com")]
    assert header_addresses(value) == [("Smith, Jo", "jo@example.com")]
    assert [a.addr_spec for a in parse_recipients("to", value)] == ["jo@example.com"]


def test_a_name_that_shows_another_address_is_read_one_way() -> None:
    """Given a display name that shows an address, the send path and the attack checks read the same one,
    compatibility forms (a fullwidth at sign) included."""
    assert addresses_shown("CEO ceo@Bank.example") == ["ceo@bank.example"]
    assert addresses_shown("ceo\uff20bank.example") == ["ceo@bank.example"]
    assert other_address_in_name("ceo\uff20bank.example", "evil@attacker.example") == "ceo@bank.example"
    assert other_address_in_name("Evil@Attacker.example", "evil@attacker.example") is None
    with pytest.raises(InvalidRequest):
        parse_recipients("to", '"ceo@bank.example" <evil@attacker.example>')
