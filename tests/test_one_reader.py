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
LEFT: dict[str, str] = {}


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


# -- dates: one reader of a note's (and H0's own records') times, one of a mail Date header --------------

DATE_PARSERS = frozenset({"fromisoformat", "parsedate_to_datetime", "strptime"})
DATE_READERS = frozenset({"h0/vault/dates.py", "h0/mail/headers.py", "h0/mail/providers/query_terms.py"})
DATE_LEFT = {
    "h0/report/": "the reports are another engineer's part of this issue (status, `h0 log`)",
    "h0/mcp/vault_calendar.py": "the vault server's modules are another engineer's part of this issue",
    "h0/vault/frontmatter/write.py": "the writer checks how YAML will read a string it writes back, not a time",
    "h0/vault/audit.py": "an audit file's day from its own name (`h0_2026-05-12.jsonl`), not a time",
    "h0/mail/providers/auth.py": "google-auth's token file writes its expiry naive UTC: that file's own format",
    "h0/mail/providers/outlook_wire.py": "Graph's wire format (seven fraction digits), read where the wire is typed",
    "h0/retry.py": "an HTTP Retry-After date (RFC 9110), not a mail or note date",
    "h0/drafting/scheduling.py": "the sender's zone of a Date header (`-0000` says none), not a time",
    "h0/calendar/proposal.py": "a proposed slot must carry its offset to be compared as an instant (naive: not one)",
    "h0/calendar/checks.py": "a day written in an email's words (`2026-05-12`), not a time",
}


def date_parser_calls(source: str) -> list[int]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.ImportFrom) and any(alias.name in DATE_PARSERS for alias in node.names)) or (
            isinstance(node, ast.Attribute) and node.attr in DATE_PARSERS
        ):
            found.append(node.lineno)
    return found


def test_dates_are_parsed_only_by_the_one_reader() -> None:
    """Given every module of h0/, when its source is read, then only the date readers parse a date, save
    the places named in DATE_LEFT with why."""
    offenders = {}
    for path in sorted(H0.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in DATE_READERS or any(rel.startswith(left) for left in DATE_LEFT):
            continue
        if lines := date_parser_calls(path.read_text(encoding="utf-8")):
            offenders[rel] = lines
    assert offenders == {}, f"dates parsed outside the one reader: {offenders}"
    assert date_parser_calls("import datetime as dt\ndt.datetime.fromisoformat(x)\n") == [2]


@pytest.fixture
def owner_zone(monkeypatch: pytest.MonkeyPatch):
    """The owner's machine in New York (UTC-4 in May), so a naive time read as UTC shows."""
    import time

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_naive_time_is_the_owners_zone_for_every_reader(owner_zone: None) -> None:
    """Given `sent_at: 2026-05-12 09:00` (no offset) on a note, when past replies, the learning chart and
    the filing read it, then each reads nine o'clock in the owner's zone (13:00 UTC), as the note model does."""
    import datetime as dt

    from h0.drafting.pastreply import epoch
    from h0.mail.filing import note_time
    from h0.vault.dates import note_epoch, read_time

    nine_local = dt.datetime(2026, 5, 12, 13, 0, tzinfo=dt.UTC).timestamp()
    assert note_epoch("2026-05-12 09:00", "sent_at") == nine_local
    assert epoch("2026-05-12 09:00") == nine_local
    assert epoch(dt.datetime(2026, 5, 12, 9, 0)) == nine_local
    assert read_time("2026-05-12T09:00:00") == dt.datetime(2026, 5, 12, 13, 0, tzinfo=dt.UTC)
    assert note_time("2026-05-12T09:00:00") == "2026-05-12T13:00:00Z"
    assert read_time("2026-05-12T09:00:00Z") == dt.datetime(2026, 5, 12, 9, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize("hostile", ["0001-01-01", "tomorrow-ish", "2026-02-30T10:00:00Z", "9999-12-31", [1], {"a": 1}])
def test_a_hostile_time_is_unknown_never_a_crash(hostile: object) -> None:
    """Given a time out of range, impossible or not a time, every reader says 'unknown'."""
    from h0.drafting.pastreply import epoch
    from h0.vault.dates import read_time

    assert read_time(hostile) is None
    assert epoch(hostile) == 0.0


def test_an_audit_line_with_a_naive_timestamp_is_read_not_a_crash(tmp_path: Path) -> None:
    """Given an audit line someone wrote without an offset, reading the log since a time compares it
    (the owner's zone) instead of raising TypeError on naive against aware."""
    import datetime as dt
    import json

    from h0.vault.audit import AuditLog

    log = AuditLog(tmp_path, "h0")
    log.write("sent", path="Done/a.md")
    path = log.path_for(dt.datetime.now(dt.UTC).date())
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"timestamp": "2999-01-01T00:00:00", "event": "sent", "path": "Done/b.md"}) + "\n")
        handle.write(json.dumps({"timestamp": "not a time", "event": "sent", "path": "Done/c.md"}) + "\n")
    since = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    assert [r["path"] for r in log.records(since)] == ["Done/a.md", "Done/b.md"]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("Tue, 12 May 2026 09:00:00 +0200", "2026-05-12T07:00:00Z"),
        ("Tue, 12 May 2026 09:00:00 -0000", "2026-05-12T09:00:00Z"),
        ("not a date", None),
        ("Tue, 12 May 99999 09:00:00 +0000", None),
        ("", None),
    ],
)
def test_a_date_header_is_read_one_way(header: str, expected: str | None) -> None:
    """Given a Date header (hostile ones included), the header reader and the fetched message's date agree:
    UTC, `-0000` as UTC, unreadable as unknown."""
    import datetime as dt
    from email.message import EmailMessage

    from h0.mail.headers import header_date
    from h0.mail.incoming.email_views import iso_date
    from h0.mail.providers.backend import Fetched

    when = header_date(header)
    assert (when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if when else None) == expected
    headers = EmailMessage()
    if header:
        headers["Date"] = header
    shown = iso_date(Fetched(id="1", thread_id=None, headers=headers))
    assert (shown[:19] + "Z" if shown else None) == expected


# -- the owner: only h0/mail/owner.py says who wrote a message ---------------------------------------------

OWNER_ROOMS = ("h0/mail/", "h0/handlers/", "h0/drafting/", "h0/state/", "h0/followup/", "h0/triage/")
# A label or folder name (a lower-case "sent" is a send's state or a note's status, H0's own word).
SENT_WORDS = frozenset({"SENT", "Sent", "Sent Items", "Sent Mail", "Sent Messages"})


def owner_decisions(source: str) -> list[int]:
    """Lines that compare with a Sent label or folder name, or test membership in the owner's addresses."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        sent = any(isinstance(o, ast.Constant) and str(o.value).strip() in SENT_WORDS for o in operands)
        own = any(
            isinstance(o, ast.Call) and getattr(o.func, "id", getattr(o.func, "attr", "")) == "owner_addresses"
            for o in node.comparators
        )
        if sent or own:
            found.append(node.lineno)
    return found


def test_only_the_owner_authority_decides_from_a_sent_label_or_the_owners_address() -> None:
    """Given the rooms that ask who wrote a message, when their sources are read, then none compares a
    label or folder with SENT or a sender with the owner's addresses: they ask h0.mail.owner."""
    offenders = {}
    for path in sorted(H0.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "h0/mail/owner.py" or not rel.startswith(OWNER_ROOMS):
            continue
        if lines := owner_decisions(path.read_text(encoding="utf-8")):
            offenders[rel] = lines
    assert offenders == {}, f"authorship decided outside h0/mail/owner.py: {offenders}"
    assert owner_decisions('ok = "SENT" in labels\n') == [1]
    assert owner_decisions("mine = sender in owner_addresses(settings)\n") == [1]
