"""An imported note says the labels its export gave the message (Google Takeout's `X-Gmail-Labels`), not
`labels: [INBOX]` whatever they were; Gmail's own labels read as a synced note says them (`INBOX`,
`CATEGORY_UPDATES`), so the same rules match both. The header is the message's own text, so: a label never
becomes the provider's word that the owner sent it (`SENT`) or that it is a draft (`DRAFT`); a message
carrying two such headers (one came with it from its sender) or none claims no label; labels are bounded
and cleaned like every header."""

from __future__ import annotations

import datetime as dt
import mailbox
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest

from h0.cli import main
from h0.mail.incoming.importer import export_labels
from h0.vault import Vault

pytestmark = pytest.mark.usefixtures("loguru_restored")


def recent(key: str, *labels: str) -> EmailMessage:
    mail = EmailMessage()
    mail["From"], mail["To"] = f"Sender {key} <s{key}@example.org>", "me@example.com"
    mail["Subject"], mail["Message-ID"] = f"Question {key}?", f"<{key}@example.org>"
    mail["Date"] = format_datetime(dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
    for value in labels:
        mail["X-Gmail-Labels"] = value
    mail.set_content("Could you tell me by Friday?\n")
    return mail


def imported_labels(vault_dir: Path, tmp_path: Path, monkeypatch, *messages: EmailMessage) -> dict[str, list[str]]:
    box = mailbox.mbox(tmp_path / "All mail Including Spam and Trash.mbox")
    for mail in messages:
        box.add(mail)
    box.flush()
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert main(["import", str(tmp_path / "All mail Including Spam and Trash.mbox")]) == 0
    vault = Vault(vault_dir)
    notes = [vault.read_note(listed.path) for listed in vault.list_notes("Needs_Action").notes]
    return {note.frontmatter["subject"]: note.frontmatter["labels"] for note in notes}


def test_given_a_takeout_export_then_each_note_keeps_its_real_labels(vault_dir: Path, tmp_path: Path, monkeypatch):
    labels = imported_labels(
        vault_dir,
        tmp_path,
        monkeypatch,
        recent("a", "Inbox,Important,Category Updates,Opened,Work/Projects"),
        recent("b", "Archived,Unread,Starred"),
        recent("c", '"Clients, 2026",Inbox,Category Promotions'),
        recent("d"),  # a client's export: no labels at all
    )
    assert labels == {
        "Question a?": ["INBOX", "IMPORTANT", "CATEGORY_UPDATES", "Work/Projects"],
        "Question b?": ["Archived", "UNREAD", "STARRED"],
        "Question c?": ["Clients, 2026", "INBOX", "CATEGORY_PROMOTIONS"],
        "Question d?": [],
    }


def test_a_label_never_says_the_owner_sent_it_and_a_second_header_claims_nothing(
    vault_dir: Path, tmp_path: Path, monkeypatch
):
    """A stranger's email that writes its own `X-Gmail-Labels` is exported with Takeout's header above it: with
    two, the message claims no label. A label read is a word, never the provider's `SENT` or `DRAFT` (whether
    the owner wrote a message is h0.mail.owner's to say, from the export's evidence)."""
    labels = imported_labels(
        vault_dir,
        tmp_path,
        monkeypatch,
        recent("e", "Inbox,DRAFT,drafts"),
        recent("f", "Inbox,Important", "Inbox,Starred"),
    )
    assert labels == {"Question e?": ["INBOX", "Draft", "Drafts"], "Question f?": []}
    from email.message import Message

    headers = Message()
    headers["X-Gmail-Labels"] = "SENT,Sent,sent,DRAFT,Opened"
    assert export_labels(headers) == ["Sent", "Draft"]


def test_labels_are_bounded_and_cleaned():
    from email.message import Message

    headers = Message()
    headers["X-Gmail-Labels"] = ",".join(f"L{i}" for i in range(10_000)) + ",\x1b[2Jevil,\u202egnp.exe," + "x" * 500
    found = export_labels(headers)
    assert len(found) == 50 and found[0] == "L0"
    alone = Message()
    alone["X-Gmail-Labels"] = "\x1b[2Jevil,\u202egnp.exe," + "x" * 500 + ",,  ,Inbox,inbox"
    assert export_labels(alone) == ["[2Jevil", "gnp.exe", "x" * 100, "INBOX"]
