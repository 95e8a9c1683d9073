"""The mail server files what it sent (h0.mail.filing): from the one read, at once, and after a crash.

Real parts: the outbox backend, the state database, a temporary vault; the note is moved by the
test the way the human (or a crash) would leave it.
"""

from __future__ import annotations

import json
import os
from email.message import EmailMessage
from pathlib import Path

from h0.config import Settings, load_settings
from h0.handlers.context import HandlerContext
from h0.handlers.send import finish_interrupted_filings
from h0.mail import MailService
from h0.mail.filing import Filing
from h0.mail.providers.backend import Sent
from h0.mail.providers.outbox import OutboxBackend
from h0.state import StateDB
from h0.vault import Vault
from h0.vault.last_change import Arrival

REPLY = "---\nto: ann@example.com\nsubject: 'Re: Plan'\nsource: '[[EMAIL_1]]'\n---\nSounds good.\n"
EMAIL = "---\ntype: email\nstatus: awaiting_approval\n---\nShall we?\n"


def settings_for(vault_dir: Path) -> Settings:
    return load_settings(vault_path=vault_dir, mail_backend="outbox")


def approve(vault_dir: Path, name: str, text: str) -> str:
    (vault_dir / "Drafts" / name).write_text(text)
    os.rename(vault_dir / "Drafts" / name, vault_dir / "Approved" / name)
    return f"Approved/{name}"


def records(vault_dir: Path, event: str) -> list[dict]:
    found = []
    for log in sorted((vault_dir / "Logs").glob("h0_*.jsonl")):
        found += [r for r in map(json.loads, log.read_text().splitlines()) if r.get("event") == event]
    return found


class MovedDuringSend(OutboxBackend):
    """The human moves the note back to Drafts/ while its message is going out."""

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        root = self.folder.parent  # the vault (its Outbox/ is where this backend writes)
        os.rename(root / "Approved/r.md", root / "Drafts/r.md")
        return super().send(message, thread_id=thread_id)


def test_given_the_note_moved_away_during_the_send_then_the_send_stands_and_the_result_says_it_is_not_filed(
    vault_dir: Path,
):
    settings = settings_for(vault_dir)
    service = MailService(settings, MovedDuringSend(settings), trusted_caller=True)
    path = approve(vault_dir, "r.md", REPLY)

    result = service.send_approved_draft(path, None, Arrival("moved"))

    assert result.filed_as is None and result.filing_error and "r.md" in result.filing_error
    assert len(list((vault_dir / "Outbox").glob("*.eml"))) == 1  # it went out, once
    assert (vault_dir / "Drafts/r.md").read_text() == REPLY  # the human's note is left as they put it
    assert records(vault_dir, "email_filed") == []


def test_given_a_hostile_source_then_the_reply_is_filed_and_nothing_outside_the_inbox_moves(vault_dir: Path):
    (vault_dir / "H0_Rules.md").write_text("# my rules\n")
    service = MailService(settings_for(vault_dir), trusted_caller=True)
    path = approve(vault_dir, "h.md", REPLY.replace("'[[EMAIL_1]]'", "../H0_Rules.md"))

    result = service.send_approved_draft(path, None, Arrival("moved"))

    assert result.filed_as == "Done/h.md" and (vault_dir / "H0_Rules.md").read_text() == "# my rules\n"
    (refused,) = records(vault_dir, "source_not_filed")
    assert refused["source"] == "../H0_Rules.md"


def test_given_a_crash_after_the_rename_then_the_next_start_finishes_the_filing_without_sending(vault_dir: Path):
    """Given a send recorded in the ledger and its note renamed into Done/ but never marked (the mail
    server died between the rename and the write), When the daemon starts, Then the note is marked
    sent, its email filed beside it and the journal closed — once: a second start finds nothing."""
    settings = settings_for(vault_dir)
    (vault_dir / "Needs_Action/EMAIL_1.md").write_text(EMAIL)
    (vault_dir / "Done/reply.md").write_text(REPLY)
    note = Vault(vault_dir).read_note("Done/reply.md")
    state = StateDB.for_vault(vault_dir, settings.h0_state_dir)
    state.claim_send(
        key="n-k",
        rfc822_message_id="<h0.k@h0.local>",
        content_hash="c",
        caps=(),
        in_flight_s=120.0,
        note_path="Approved/reply.md",
        note_hash=note.hash,
    )
    state.mark_sent("<h0.k@h0.local>", provider_message_id="p-1", thread_id="t-1", sent_at="x", backend="outbox")
    ctx = HandlerContext.local(settings, Vault(vault_dir), state_db=state)

    assert finish_interrupted_filings(ctx) == 1

    filed = Vault(vault_dir).read_note("Done/reply.md").frontmatter
    assert filed["status"] == "sent" and filed["rfc822_message_id"] == "<h0.k@h0.local>"
    assert filed["gmail_message_id"] == "p-1" and filed["thread_id"] == "t-1"
    email = Vault(vault_dir).read_note("Done/EMAIL_1.md").frontmatter
    assert email["status"] == "done" and email["replied_with"] == "Done/reply.md"
    (recovered,) = records(vault_dir, "email_filed")
    assert recovered["recovered"] is True and recovered["done_path"] == "Done/reply.md"
    assert state.unfiled_sends(3600) == []
    assert Filing(Vault(vault_dir), state).finish_interrupted() == 0


def test_given_a_sent_note_not_filed_when_approved_again_then_it_is_filed_as_already_sent_with_its_ids(
    vault_dir: Path,
):
    settings = settings_for(vault_dir)
    first = MailService(settings, MovedDuringSend(settings), trusted_caller=True)
    sent = first.send_approved_draft(approve(vault_dir, "r.md", REPLY), None, Arrival("moved"))
    os.rename(vault_dir / "Drafts/r.md", vault_dir / "Approved/r.md")

    again = MailService(settings, trusted_caller=True).send_approved_draft("Approved/r.md", None, Arrival("moved"))

    assert again.already_sent and again.filed_as == "Done/r.md"
    assert len(list((vault_dir / "Outbox").glob("*.eml"))) == 1  # never sent twice
    (record,) = records(vault_dir, "already_sent")
    assert record["path"] == "Approved/r.md" and record["backend"] == "outbox"
    assert (record["idempotency_key"], record["message_id"], record["rfc822_message_id"]) == (
        sent.idempotency_key,
        sent.message_id,
        sent.rfc822_message_id,
    )
