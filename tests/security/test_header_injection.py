"""Issue 9, class 2: no header injection, whatever the Python version.

RFC 2047 encoded words that decode to CR, LF or another control character — in a subject or a
display name, in a draft or in an email a stranger sent — never become an extra header or an
extra recipient on the wire. This machine's CPython (3.11) re-folds such words into real line
breaks (CVE-2024-6923); these tests pass because H0 checks what the words decode to and then
the serialised bytes, not because the interpreter is patched.
"""

from __future__ import annotations

import base64
import re
from collections import Counter
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.utils import getaddresses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from h0.config import load_settings
from h0.errors import InvalidRequest
from h0.handlers.ingest import ingest_new_mail
from h0.handlers.reply import reply_subject
from h0.handlers.triage import triage_email
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.mail.compose.addresses import parse_recipients
from h0.mail.compose.mime import compose, raw_bytes
from h0.mail.headers import (
    check_header_text,
    clean_address_header,
    clean_header_text,
    decode_words,
    hides_control,
    remove_controls,
)
from h0.mail.providers.gmail_wire import fetched_from_resource
from h0.triage import Triager, ensure_rules_file
from h0.vault import Vault
from h0.vault.last_change import Arrival
from tests.fakes.fake_gmail import FakeGmail
from tests.properties import examples
from tests.security.conftest import approve_draft, handler_context

# Every character a header parser, a terminal or a Markdown renderer may take for a line end or act on.
CONTROLS = [
    "\r\n",
    "\r",
    "\n",
    "\x00",
    "\x07",
    "\x1b",
    "\t",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x7f",
    "\x85",
    "\x9b",
    "\u2028",
    "\u2029",
]
INJECTED = ["Bcc: eve@evil.example", "Cc: eve@evil.example", "X-Evil: 1", "To: eve@evil.example", ""]
SAFE_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Zl", "Zp", "Cs")), max_size=40)


def encoded_word(text: str, encoding: str = "q", charset: str = "utf-8") -> str:
    """`text` as one RFC 2047 encoded word, as a sender's mail program (or an attacker) writes it."""
    data = text.encode("utf-8") if charset.lower() in ("utf-8", "bogus-8bit") else text.encode(charset, "replace")
    if encoding.lower() == "b":
        payload = base64.b64encode(data).decode("ascii")
    else:  # every byte but letters and digits as =XX: valid in a subject and in a display name alike
        payload = "".join(chr(b) if chr(b).isascii() and chr(b).isalnum() else f"={b:02X}" for b in data)
    return f"=?{charset}?{encoding}?{payload}?="


@st.composite
def hostile_values(draw) -> str:
    """A header value with an encoded word (possibly nested, possibly among others) hiding a control."""
    control = draw(st.sampled_from(CONTROLS))
    inner = draw(SAFE_TEXT) + control + draw(st.sampled_from(INJECTED))
    encoding = draw(st.sampled_from(["q", "b", "Q", "B"]))
    charset = draw(st.sampled_from(["utf-8", "UTF-8", "bogus-8bit"] + (["iso-8859-1"] if control.isascii() else [])))
    word = encoded_word(inner, encoding, charset)
    for _ in range(draw(st.integers(0, 2))):  # a word that decodes to another word
        word = encoded_word(word, draw(st.sampled_from(["q", "b"])))
    before = draw(st.sampled_from(["", "Hi ", "Re: ", encoded_word("Hello") + " "]))
    after = draw(st.sampled_from(["", " there", " " + encoded_word("world", "b")]))
    return before + word + after


def wire_headers(raw: bytes) -> EmailMessage:
    """The header block as a receiving server parses it."""
    return BytesHeaderParser(policy=policy.default).parsebytes(raw)  # type: ignore[return-value]


def names(headers: EmailMessage) -> Counter:
    return Counter(name.lower() for name in headers)


def read_back(to: list[Address], subject: str) -> tuple[list[tuple[str, str]], str]:
    """(To as read, subject as read) when the email package serialises them unchecked: display names
    and subject without whitespace (folding may move it), addresses as they are."""
    naive = EmailMessage(policy=policy.SMTP)
    naive["To"] = [
        Address(display_name=" ".join(a.display_name.split()), username=a.username, domain=a.domain) for a in to
    ]
    naive["Subject"] = subject
    naive.set_content("x")
    parsed = wire_headers(naive.as_bytes(policy=policy.SMTP))
    return [as_read(a) for a in parsed["To"].addresses], "".join(str(parsed["Subject"]).split())


def as_read(address: Address) -> tuple[str, str]:
    return "".join(address.display_name.split()), address.addr_spec


BASE_NAMES = Counter(
    {
        "to": 1,
        "subject": 1,
        "date": 1,
        "message-id": 1,
        "content-type": 1,
        "content-transfer-encoding": 1,
        "mime-version": 1,
    }
)
TO = [Address(username="bob", domain="example.com")]


# -- mail out: compose ------------------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(subject=hostile_values())
def test_given_a_subject_hiding_a_control_in_an_encoded_word_when_composed_then_it_is_refused(subject: str):
    """Given a subject whose encoded word decodes to a control character, When composed, Then
    compose refuses it (InvalidRequest) — nothing is built that could be sent."""
    with pytest.raises(InvalidRequest) as refused:
        compose(to=TO, subject=subject, body="Hello")
    assert "header injection refused" in refused.value.message


@settings(max_examples=examples(300), deadline=None)
@given(name=hostile_values(), field=st.sampled_from(["to", "cc", "bcc"]))
def test_given_a_display_name_hiding_a_control_when_composed_or_parsed_then_it_is_refused(name: str, field: str):
    """Given a To/Cc/Bcc display name that decodes to a control character, When parsed from a draft's
    text or composed from an Address, Then both refuse it."""
    with pytest.raises(InvalidRequest):
        parse_recipients(field, f"{name} <eve@example.com>")
    recipients = {"to": TO, field: [Address(display_name=name, username="eve", domain="example.com")]}
    with pytest.raises(InvalidRequest):
        compose(subject="Hello", body="Hi", **recipients)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    subject=SAFE_TEXT.filter(str.strip),
    names_=st.lists(SAFE_TEXT, min_size=1, max_size=3),
    with_bcc=st.booleans(),
    encode=st.booleans(),
)
def test_given_any_clean_subject_and_names_when_composed_then_the_wire_carries_exactly_the_headers_set(
    subject: str, names_: list[str], with_bcc: bool, encode: bool
):
    """Given any subject and display names free of controls (some as encoded words), When composed and
    serialised, Then the header block has exactly the expected names, each once, no Bcc unless one
    was set, and the recipients (addresses and display names) are the ones meant."""
    meant_subject = "".join(subject.split())
    if encode:
        subject = encoded_word(subject)
    to = [Address(display_name=n, username=f"p{i}", domain="example.com") for i, n in enumerate(names_)]
    bcc = [Address(display_name="Hidden", username="h", domain="example.org")] if with_bcc else []
    try:
        message = compose(to=to, bcc=bcc, subject=subject, body="Hello")
    except InvalidRequest:
        # Refused only where this Python's own serialisation would have changed what is read: CPython
        # 3.11 can encode the comma after a non-ASCII name when it folds (a recipient vanishes), or
        # split an encoded word across a fold (a garbled name or subject).
        assert read_back(to, subject) != ([as_read(a) for a in to], meant_subject)
        return
    parsed = wire_headers(raw_bytes(message))
    assert names(parsed) == BASE_NAMES + (Counter({"bcc": 1}) if with_bcc else Counter())
    assert [a.addr_spec for a in parsed["To"].addresses] == [a.addr_spec for a in to]
    assert ["".join(a.display_name.split()) for a in parsed["To"].addresses] == ["".join(n.split()) for n in names_]
    assert not hides_control(str(parsed["Subject"]))


@settings(max_examples=examples(200), deadline=None)
@given(subject=hostile_values())
def test_given_a_message_built_around_the_checks_when_serialised_then_the_wire_check_still_refuses_it(subject: str):
    """Given a message whose subject skipped compose's checks (set straight on an EmailMessage), When a
    backend asks for its bytes, Then raw_bytes either refuses it or the bytes carry exactly the
    headers set — the check is on the serialised message, not on trust in the email package."""
    message = EmailMessage(policy=policy.SMTP)
    message["To"] = "bob@example.com"
    try:
        message["Subject"] = subject
    except ValueError:
        return  # the email package refused it itself
    message.set_content("Hello")
    try:
        raw = raw_bytes(message)
    except InvalidRequest:
        return
    parsed = wire_headers(raw)
    assert names(parsed) == Counter(
        {"to": 1, "subject": 1, "content-type": 1, "content-transfer-encoding": 1, "mime-version": 1}
    )
    assert [a.addr_spec for a in parsed["To"].addresses] == ["bob@example.com"]


def test_given_the_cve_2024_6923_subject_then_this_python_would_inject_but_h0_refuses():
    """The attack is real on this interpreter (the email package writes a Bcc line), and H0 refuses it."""
    subject = "=?utf-8?q?Hi=0D=0ABcc:_eve@evil.example?="
    naive = EmailMessage(policy=policy.SMTP)
    naive["To"] = "bob@example.com"
    naive["Subject"] = subject
    naive.set_content("Hello")
    injected = "bcc" in names(wire_headers(naive.as_bytes(policy=policy.SMTP)))
    with pytest.raises(InvalidRequest):
        raw_bytes(naive)
    with pytest.raises(InvalidRequest):
        compose(to=TO, subject=subject, body="Hello")
    with pytest.raises(InvalidRequest):
        check_header_text("subject", subject)
    if not injected:  # a fixed interpreter (3.13+): the refusal above still holds
        pytest.skip("this Python no longer re-folds encoded words into line breaks")


# -- mail in: what Gmail hands over ---------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(subject=hostile_values(), name=hostile_values())
def test_given_hostile_subject_and_display_name_from_gmail_then_the_fetched_headers_hold_no_control(
    subject: str, name: str
):
    """Given a Gmail message resource whose Subject and From display name decode to control characters,
    When translated into a Fetched, Then every header value H0 exposes (subject, from, to) is one clean
    line, the sender's address is unchanged, and nothing raises."""
    resource = {
        "id": "m1",
        "threadId": "t1",
        "payload": {
            "mimeType": "text/plain",
            "headers": [
                {"name": "Subject", "value": subject},
                {"name": "From", "value": f"{name} <eve@evil.example>"},
                {"name": "To", "value": f"{name} <me@example.com>, other@example.com"},
            ],
            "body": {"size": 0, "data": ""},
        },
    }
    headers = fetched_from_resource(resource).headers
    for field in ("Subject", "From", "To"):
        assert not hides_control(str(headers[field])), field
    assert [a.addr_spec for a in headers["From"].addresses] == ["eve@evil.example"]
    assert [a.addr_spec for a in headers["To"].addresses] == ["me@example.com", "other@example.com"]


@settings(max_examples=examples(300), deadline=None)
@given(value=st.one_of(hostile_values(), st.text(max_size=60)))
def test_given_any_text_then_cleaning_never_raises_leaves_no_control_and_is_stable(value: str):
    cleaned = clean_header_text(value)
    assert not hides_control(cleaned)
    assert clean_header_text(cleaned) == cleaned
    assert not hides_control(clean_address_header(f"{value} <a@example.com>"))
    assert not hides_control(reply_subject(value)) and reply_subject(value).startswith("Re: ")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # A comma and an address inside an encoded word stay inside the one name they belong to.
        (
            "=?utf-8?q?Smith=2C_Bob_=3Ceve@evil.example=3E?= <bob@example.com>",
            [("Smith, Bob <eve@evil.example>", "bob@example.com")],
        ),
        ("=?utf-8?q?a,b?= <c@example.com>, d@example.com", [("a,b", "c@example.com"), ("", "d@example.com")]),
        ('"=?utf-8?q?Quoted?=" <q@example.com>', [("Quoted", "q@example.com")]),
        (
            "=?utf-8?Q?J=C3=B6rg?= <j@example.de>, =?iso-8859-1?q?Andr=E9?= <a@example.fr>",
            [("Jörg", "j@example.de"), ("André", "a@example.fr")],
        ),
        # Something that only looks like one word (spaces in it) hides no address behind it.
        (
            "=?a, b <c@example.com>, ?q?zz?= <x@example.com>",
            [("", "=a"), ("b", "c@example.com"), ("?q?zz?=", "x@example.com")],
        ),
        # An address is never decoded: no encoded word is left in it to be decoded later.
        ("=?utf-8?q?x?=@evil.example", [("", "=utf-8?q?x?=@evil.example")]),
        ("Group: a@example.com, b@example.com;", [("", "a@example.com"), ("", "b@example.com")]),
        ("a@example.com (Old Style)", [("Old Style", "a@example.com")]),
    ],
)
def test_given_an_address_list_with_encoded_words_when_cleaned_then_each_name_stays_with_its_own_address(
    value: str, expected: list[tuple[str, str]]
):
    cleaned = clean_address_header(value)
    assert getaddresses([cleaned]) == expected
    assert clean_address_header(cleaned) == cleaned


# -- the real paths: ingest → note → triage draft → approval → send -----------------------------------


HOSTILE_SUBJECTS = [
    "=?utf-8?q?Lunch=0D=0ABcc:_eve@evil.example?=",
    "Lunch =?utf-8?b?DQpCY2M6IGV2ZUBldmlsLmV4YW1wbGU=?= plans",
    "=?utf-8?q?=3D=3Futf-8=3Fq=3FLunch=3D0D=3D0ABcc:=5Feve@evil.example=3F=3D?=",  # a word inside a word
    "=?utf-8?q?Lunch=E2=80=A8Bcc:_eve@evil.example?=",  # U+2028
    "=?utf-8?q?Lunch=07=1B[31m_today?=",  # BEL, ESC
    "=?bogus?q?Lunch=0ABcc:_eve@evil.example?=",
]


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(subject=hostile_values(), name=hostile_values())
def test_given_any_hostile_subject_and_sender_name_when_ingested_then_the_note_holds_clean_lines(
    vault_dir: Path, gmail: FakeGmail, mail: MailService, subject: str, name: str
):
    """Given emails whose raw Subject and From display name are encoded words hiding controls, When
    ingested through the real ingest path (mail service, Gmail client, fake Gmail), Then each note's
    subject and sender are clean lines, the sender's address survives, and nothing fails."""
    gmail.add_message(extra_headers=[("Subject", subject), ("From", f"{name} <eve@evil.example>")], body="Hi")
    report = ingest_new_mail(handler_context(vault_dir, LocalMail(mail)))
    assert report.failed == 0 and len(report.written) == 1
    frontmatter = Vault(vault_dir).read_note(report.written[0]).frontmatter
    assert not hides_control(frontmatter["subject"]) and not hides_control(frontmatter["from"])
    assert [addr for _, addr in getaddresses([frontmatter["from"]])] == ["eve@evil.example"]
    assert not hides_control(reply_subject(frontmatter["subject"]))


@pytest.mark.parametrize("subject", HOSTILE_SUBJECTS)
def test_given_an_email_with_an_injecting_subject_when_ingested_triaged_and_the_reply_approved_then_no_extra_header_is_sent(
    vault_dir: Path, gmail: FakeGmail, mail: MailService, subject: str
):
    """Given an email whose raw Subject is an encoded word decoding to a line break (or BEL/ESC),
    When ingested through the real ingest path, Then the note's subject is one clean line; When
    triage drafts the reply and the human approves it, Then the message on the wire has exactly one
    of each expected header — no Bcc, no Cc, no extra header — and goes to the sender only."""
    gmail.add_message(
        sender="Dana Rivera <dana@example.com>",
        message_id="<q1@mail.example.com>",
        extra_headers=[("Subject", subject)],
        body="Are we still on for lunch?",
    )
    ctx = handler_context(vault_dir, LocalMail(mail))
    report = ingest_new_mail(ctx)
    assert report.failed == 0 and len(report.written) == 1
    (note_path,) = report.written
    note = Vault(vault_dir).read_note(note_path)
    assert "Lunch" in note.frontmatter["subject"] and not hides_control(note.frontmatter["subject"])
    assert note.frontmatter["from"] == "Dana Rivera <dana@example.com>"

    outcome = triage_email(note_path, ctx)
    draft = outcome.data["draft_path"]
    assert draft, outcome
    draft_subject = Vault(vault_dir).read_note(draft).frontmatter["subject"]
    assert draft_subject.startswith("Re: ") and not hides_control(draft_subject)

    result = mail.send_approved_draft(f"Approved/{Path(draft).name}", approve_draft(vault_dir, draft), Arrival("moved"))
    (sent,) = gmail.sent
    wire = wire_headers(sent.raw)
    assert names(wire) == BASE_NAMES + Counter({"in-reply-to": 1, "references": 1})
    assert [a.addr_spec for a in wire["To"].addresses] == ["dana@example.com"]
    assert str(wire["Subject"]) == draft_subject and result.rfc822_message_id == str(wire["Message-ID"])


@pytest.mark.parametrize(
    "display_name",
    [
        "=?utf-8?q?Dana=0D=0ABcc:_eve@evil.example?=",
        "=?utf-8?b?RGFuYQ0KQ2M6IGV2ZUBldmlsLmV4YW1wbGU=?=",
        "=?utf-8?q?eve@evil.example=2C_Dana?=",  # a decoded comma must not make a second address
    ],
)
def test_given_an_email_whose_sender_name_injects_when_ingested_and_replied_to_then_only_the_sender_receives_it(
    vault_dir: Path, gmail: FakeGmail, mail: MailService, display_name: str
):
    """Given a From display name that decodes to CR LF and a header (or to a comma and an address), When
    the email is ingested and the reply approved, Then the note's `from` is one line with the real
    address, and the reply goes to that address alone with no extra header."""
    gmail.add_message(
        extra_headers=[("From", f"{display_name} <dana@example.com>")], subject="Lunch", body="Are we still on?"
    )
    ctx = handler_context(vault_dir, LocalMail(mail))
    (note_path,) = ingest_new_mail(ctx).written
    sender = Vault(vault_dir).read_note(note_path).frontmatter["from"]
    assert not hides_control(sender) and sender.endswith("<dana@example.com>")
    draft = triage_email(note_path, ctx).data["draft_path"]
    mail.send_approved_draft(f"Approved/{Path(draft).name}", approve_draft(vault_dir, draft), Arrival("moved"))
    (sent,) = gmail.sent
    wire = wire_headers(sent.raw)
    assert names(wire) == BASE_NAMES + Counter({"in-reply-to": 1, "references": 1})
    assert [a.addr_spec for a in wire["To"].addresses] == ["dana@example.com"]


def test_given_tool_results_for_a_hostile_email_then_list_and_get_show_clean_lines(gmail: FakeGmail, mail: MailService):
    """get_email and list_emails — what any MCP client sees — carry the cleaned subject and sender too."""
    msg = gmail.add_message(
        extra_headers=[
            ("Subject", HOSTILE_SUBJECTS[0]),
            ("From", "=?utf-8?q?Eve=0D=0ABcc:_x@evil.example?= <eve@evil.example>"),
        ]
    )
    got = mail.get_email(msg)
    (listed,) = mail.list_emails("in:inbox", 10).emails
    for value in (got.subject, got.sender, listed.subject, listed.sender):
        assert not hides_control(value) and "\n" not in value
    assert got.subject == listed.subject == "Lunch Bcc: eve@evil.example"


def test_given_the_running_daemon_when_an_injecting_subject_arrives_and_the_reply_is_approved_then_no_extra_header_leaves(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """End to end through `h0 watch`'s daemon (real MCP servers, real inotify): Given an email whose raw
    Subject decodes to CR LF + Bcc, When it is ingested, triaged and its reply approved by a move into
    Approved/, Then exactly one message leaves, to the sender alone, with one of each expected header."""
    from tests.pipeline.harness import approve, edit_template, frontmatter, running_daemon, wait_until

    overrides = {
        "mail_backend": "gmail",
        "gmail_token_path": token_path,
        "gmail_api_endpoint": gmail.api_endpoint,
        "gmail_token_uri": gmail.token_uri,
        "max_retries": 2,
        "retry_delay_ms": 50,
    }
    msg_id = gmail.add_message(
        sender="Dana Rivera <dana@example.com>",
        message_id="<lunch@mail.example.com>",
        extra_headers=[("Subject", HOSTILE_SUBJECTS[0])],
        body="Are we still on for lunch?",
    )
    ensure_rules_file(vault_dir)
    triager = Triager.from_settings(load_settings(vault_path=vault_dir), vault_dir)
    draft = f"REPLY_EMAIL_{msg_id}.md"
    with running_daemon(vault_dir, triager=triager, ingest=True, **overrides) as daemon:
        daemon.request_ingest()
        assert wait_until(lambda: (vault_dir / "Drafts" / draft).exists())
        note_subject = frontmatter(vault_dir, f"Needs_Action/EMAIL_{msg_id}.md")["subject"]
        edit_template(vault_dir, draft)
        approve(vault_dir, draft)
        assert wait_until(lambda: (vault_dir / "Done" / draft).exists())
    assert note_subject == "Lunch Bcc: eve@evil.example"
    (sent,) = gmail.sent
    wire = wire_headers(sent.raw)
    assert names(wire) == BASE_NAMES + Counter({"in-reply-to": 1, "references": 1})
    assert [a.addr_spec for a in wire["To"].addresses] == ["dana@example.com"]
    assert str(wire["Subject"]) == "Re: Lunch Bcc: eve@evil.example"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80))
def test_a_plain_ascii_header_is_shown_as_the_full_cleaning_would_show_it(text: str):
    """The shortcut for a header with nothing to clean (printable ASCII, no encoded word, no run of spaces)
    gives what the rounds of decoding and cleaning give."""
    slow = text
    for _ in range(16):
        step = remove_controls(decode_words(slow))
        if step == slow:
            break
        slow = step
    if re.search(r"=\?([^?]*)\?([qQbB])\?(.*?)\?=", slow, re.DOTALL):
        slow = slow.replace("=?", "= ?")
    assert clean_header_text(text) == re.sub(" {2,}", " ", slow).strip()
