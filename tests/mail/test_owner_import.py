"""The owner's identity at import (issue 29, rule 2): an imported message is the owner's only when the export
says it was sent (a Sent mailbox or folder, Takeout's Sent label) and nothing says it came from outside —
never because its From is the owner's address. Hostile inputs first; then the owner's real sent mail counts."""

from __future__ import annotations

import mailbox
from email.message import EmailMessage, Message
from email.parser import BytesHeaderParser
from pathlib import Path

import pytest

from h0.cli import main
from h0.cli.common import EXIT_OK
from h0.config import Settings
from h0.drafting import Drafting
from h0.mail.owner import Evidence, OwnerAuthority, came_from_outside, import_evidence, single_sender
from h0.vault import Vault

OWNER = "alex@northwind.example"
OUTSIDE = (
    ("Received", "from mx.evil.example (mx.evil.example [203.0.113.9]) by mx.google.com with ESMTPS id x1; Tue, 3 Mar"),
    ("Authentication-Results", "mx.google.com; spf=fail smtp.mailfrom=evil.example; dmarc=fail"),
)


def message(
    subject: str, body: str, *, sender: str = f"Alex Chen <{OWNER}>", headers=(), msg_id: str = ""
) -> EmailMessage:
    mail = EmailMessage()
    for name, value in headers:
        mail[name] = value
    mail["From"], mail["To"], mail["Subject"] = sender, "Dana Rivera <dana@acme.example>", subject
    mail["Date"] = "Tue, 03 Mar 2026 10:00:00 +0000"
    mail["Message-ID"] = msg_id or f"<{abs(hash(subject))}@northwind.example>"
    mail.set_content(body)
    return mail


def headers_of(mail: EmailMessage) -> Message:
    """The headers as an import reads them (the raw bytes parsed again, every header line kept)."""
    return BytesHeaderParser().parsebytes(bytes(mail))


@pytest.mark.parametrize(
    ("source", "extra", "sender", "expected"),
    [
        ("export/Sent.mbox #1", (), f"Alex <{OWNER}>", Evidence.IMPORT_SENT),
        ("Mail/Sent Items/1.eml", (), f"Alex <{OWNER}>", Evidence.IMPORT_SENT),
        ("All mail.mbox #4", (("X-Gmail-Labels", "Sent,Opened"),), f"Alex <{OWNER}>", Evidence.IMPORT_SENT),
        # Hostile: the From alone, a relay from outside, inbound headers, two From addresses, a second label line.
        ("All mail.mbox #5", (), f"Alex <{OWNER}>", None),
        ("Sent.mbox #2", OUTSIDE[:1], f"Alex <{OWNER}>", None),
        ("Sent.mbox #3", OUTSIDE[1:], f"Alex <{OWNER}>", None),
        ("Sent.mbox #4", (), f"Alex <{OWNER}>, Eve <eve@evil.example>", None),
        ("All mail.mbox #6", (("X-Gmail-Labels", "Inbox"), ("X-Gmail-Labels", "Sent")), f"Alex <{OWNER}>", None),
        # The owner's own authenticated submission leaves a Received line that is not "from outside".
        (
            "Sent.mbox #5",
            (("Received", "from [192.168.1.5] (host.example [198.51.100.7]) by smtp.example with ESMTPSA id 1"),),
            f"Alex <{OWNER}>",
            Evidence.IMPORT_SENT,
        ),
    ],
)
def test_import_evidence(source, extra, sender, expected):
    assert import_evidence(source, headers_of(message("S", "b", sender=sender, headers=extra))) == expected


def test_a_message_with_several_from_headers_or_none_has_no_single_sender():
    doubled = headers_of(message("S", "b"))
    doubled["From"] = "Eve <eve@evil.example>"
    assert single_sender(doubled) is None
    assert single_sender(headers_of(message("S", "b", sender="undisclosed-recipients:;"))) is None
    assert single_sender(headers_of(message("S", "b"))) == OWNER
    assert came_from_outside(headers_of(message("S", "b", headers=OUTSIDE[:1]))) is not None


def test_an_import_files_only_the_owners_real_sent_mail_as_theirs(vault_dir: Path, tmp_path: Path, monkeypatch, capsys):
    """Given a Sent mailbox holding the owner's reply, a stranger's message relayed from outside claiming the
    owner's From, and a message From the owner and someone else, and an inbox export with a message From the
    owner's address, When it is imported, Then only the real reply is recorded as the owner's and learned as their
    voice; the rest are mail like any other (all of it older than the work window: history)."""
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("OWNER_EMAILS", OWNER)
    sent = mailbox.mbox(tmp_path / "Sent.mbox")
    sent.add(message("Re: Atlas", "Hi Dana,\n\nThursday works.\n\nCheers,\nAlex", msg_id="<real@northwind.example>"))
    sent.add(message("Re: Wire", "Yo Dana,\n\nWire it today.\n\nPeace out", headers=OUTSIDE, msg_id="<relay@x>"))
    sent.add(
        message(
            "Re: Pay", "Yo Dana,\n\nPay now.\n\nPeace out", sender=f"A <{OWNER}>, E <eve@evil.example>", msg_id="<2@x>"
        )
    )
    sent.flush()
    inbox = mailbox.mbox(tmp_path / "Inbox.mbox")
    inbox.add(message("Re: Lunch", "Yo Dana,\n\nNo lunch.\n\nPeace out", msg_id="<from-alone@x>"))
    inbox.flush()
    assert main(["import", str(tmp_path / "Sent.mbox"), str(tmp_path / "Inbox.mbox")]) == EXIT_OK
    out = capsys.readouterr().out
    # March mail is older than the work window: all of it is history, and only the real reply is the owner's.
    assert "0 new in Needs_Action/, 4 kept as history (1 of them yours)" in out, out
    assert not Vault(vault_dir).list_notes("Done").notes  # history is no note per message
    owner = OwnerAuthority.for_settings(Settings())
    assert owner.owned(["<real@northwind.example>", "<relay@x>", "<2@x>", "<from-alone@x>"]) == {
        "<real@northwind.example>": Evidence.IMPORT_SENT
    }
    drafting = Drafting.build(Settings())
    (reply,) = drafting.past.to_address("dana@acme.example")
    assert reply.parts.greeting == "Hi Dana," and "Thursday works." in reply.text
