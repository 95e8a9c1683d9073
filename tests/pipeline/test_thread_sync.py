"""Threads (issue 11): a note records its conversation, triage reads it, and a reply in the thread
makes the waiting draft stale — which the send path then holds instead of sending.

The real handlers (ingest, triage, send) with the real MailService against the fake Gmail
through google-api-python-client; the mail tools are called in-process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from h0.config import load_settings
from h0.handlers.context import HandlerContext, NoteOps
from h0.handlers.ingest import ingest_new_mail
from h0.handlers.send import send_approved_draft
from h0.handlers.triage import triage_email
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.triage import Triager, ensure_rules_file
from h0.triage.prompt import email_message
from h0.vault import Vault
from h0.vault.api import LocalVault
from h0.vault.last_change import Arrival
from tests.mail.conftest import gmail_settings_for
from tests.pipeline.harness import frontmatter

ORIGINAL = "<CA+friday-1@mail.example.com>"


class RecordingTriager:
    """The real rules triager, keeping what it was shown."""

    def __init__(self, inner: Triager) -> None:
        self.inner = inner
        self.seen: list[Any] = []

    def triage(self, email: Any, context: Any = None) -> Any:
        self.seen.append(email)
        return self.inner.triage(email)


def make_ctx(vault_dir: Path, service: MailService) -> HandlerContext:
    ensure_rules_file(vault_dir)
    triager = RecordingTriager(Triager.from_settings(load_settings(vault_path=vault_dir), vault_dir))
    return HandlerContext.local(
        service.settings,
        Vault(vault_dir),
        mail=LocalMail(service),
        triager=triager,
        arrival=lambda path: Arrival("moved"),
    )


@pytest.fixture
def mail(vault_dir, gmail, token_path):
    # The daemon's own mail server: it may vouch that a note was moved into Approved/.
    service = MailService(
        gmail_settings_for(vault_dir, gmail, token_path, allow_unapproved_send=False), trusted_caller=True
    )
    yield service
    service.close()


def approve(vault_dir: Path, name: str, **extra: Any) -> None:
    """The human's edit (the template line goes, `extra` set) and the move into Approved/."""
    vault = Vault(vault_dir)
    note = vault.read_note(f"Drafts/{name}")
    above, cut, below = note.body.partition("%% h0: not sent below %%")
    kept = (line for line in above.split("\n") if not line.startswith(("[H0 draft", ">", "[FILL:")))  # and the briefing
    body = "\n".join(kept) + cut + below
    if not body.strip().split("%%")[0].strip():
        body = "Thursday works for me.\n\n" + body
    vault.write_note(f"Drafts/{name}", {**note.frontmatter, **extra}, body)
    (vault_dir / "Drafts" / name).rename(vault_dir / "Approved" / name)


def test_a_reply_in_the_thread_links_the_earlier_note_marks_the_draft_stale_and_the_approved_draft_is_held(
    vault_dir, gmail, mail
):
    """Given Dana's question was triaged into a draft, when Dana writes again in the same thread,
    then the new note records the thread (thread_id, a link to the first note), the waiting
    draft is marked stale with the reason, triage of the new email sees the conversation, and
    the stale draft, once approved, is held (back in Drafts/, nothing sent) until the human
    says send_anyway — then it goes out in the thread."""
    ctx = make_ctx(vault_dir, mail)
    first = gmail.add_message(
        sender="Dana Rivera <dana@example.com>",
        subject="Friday review?",
        body="Could we move the review to Friday?",
        message_id=ORIGINAL,
    )
    assert ingest_new_mail(ctx).written == [f"Needs_Action/EMAIL_{first}.md"]
    first_note = frontmatter(vault_dir, f"Needs_Action/EMAIL_{first}.md")
    assert first_note["thread_id"] == first and "thread" not in first_note  # it starts the conversation
    assert triage_email(f"Needs_Action/EMAIL_{first}.md", ctx).data["draft_path"] == f"Drafts/REPLY_EMAIL_{first}.md"
    draft = f"REPLY_EMAIL_{first}.md"
    assert "stale" not in frontmatter(vault_dir, f"Drafts/{draft}")

    second = gmail.add_message(
        sender="Dana Rivera <dana@example.com>",
        subject="Re: Friday review?",
        body="Actually Thursday would be better, if you can.",
        thread_id=first,
        in_reply_to=ORIGINAL,
        references=ORIGINAL,
    )
    assert ingest_new_mail(ctx).written == [f"Needs_Action/EMAIL_{second}.md"]
    second_note = frontmatter(vault_dir, f"Needs_Action/EMAIL_{second}.md")
    assert second_note["thread_id"] == first and second_note["thread"] == [f"[[EMAIL_{first}]]"]
    stale = frontmatter(vault_dir, f"Drafts/{draft}")
    assert stale["stale"] is True and stale["stale_since"] == f"[[EMAIL_{second}]]"
    assert "Dana Rivera" in stale["stale_reason"] and "send_anyway" in stale["stale_reason"]

    # Triage of the reply sees the conversation, not one message.
    triage_email(f"Needs_Action/EMAIL_{second}.md", ctx)
    seen = ctx.triager.seen[-1]
    assert [m.text.strip() for m in seen.conversation] == ["Could we move the review to Friday?"]
    assert "Dana Rivera" in seen.conversation[0].sender and not seen.conversation[0].own
    prompt = email_message(seen, "n0nce")
    inside = prompt.split("<email-n0nce>")[1].split("</email-n0nce>")[0]
    assert (
        inside.index("Could we move the review to Friday?")
        < inside.index("--- The email to triage ---")
        < inside.index("Actually Thursday would be better")
    )

    # The human approves the stale draft: held, not sent.
    approve(vault_dir, draft)
    outcome = send_approved_draft(f"Approved/{draft}", ctx)
    assert gmail.sent == []
    assert outcome.action != "sent" and not (vault_dir / "Approved" / draft).exists()
    held = frontmatter(vault_dir, f"Drafts/{draft}")
    assert held["status"] == "held" and held["h0_error_code"] == "thread_has_newer_message"

    # Having read the new message, the human sends it anyway: it goes out, in the thread.
    approve(vault_dir, draft, send_anyway=True)
    assert send_approved_draft(f"Approved/{draft}", ctx).action == "sent"
    (sent,) = gmail.sent
    assert sent.thread_id == first and sent.message["In-Reply-To"] == ORIGINAL


def test_a_stale_draft_is_held_even_where_the_provider_cannot_say_the_thread_moved_on(vault_dir):
    """Given the outbox backend (no thread to ask), when a draft marked stale by ingest is approved,
    then the mail server holds it on the flag alone; with send_anyway it is sent."""
    service = MailService(load_settings(vault_path=vault_dir, mail_backend="outbox"), trusted_caller=True)
    try:
        ctx = make_ctx(vault_dir, service)
        Vault(vault_dir).write_note(
            "Drafts/r.md",
            {
                "to": "dana@example.com",
                "subject": "Re: Friday review?",
                "status": "pending_approval",
                "thread_id": "t-1",
                "stale": True,
                "stale_since": "[[EMAIL_2]]",
                "stale_reason": "Dana wrote again",
            },
            "Sure.\n",
        )
        approve(vault_dir, "r.md")
        send_approved_draft("Approved/r.md", ctx)
        held = frontmatter(vault_dir, "Drafts/r.md")
        assert held["status"] == "held" and held["h0_error_code"] == "thread_has_newer_message"
        assert "Dana wrote again" in held["h0_error"]
        assert not list((vault_dir / "Outbox").glob("*.eml"))
        approve(vault_dir, "r.md", send_anyway=True)
        assert send_approved_draft("Approved/r.md", ctx).action == "sent"
        assert len(list((vault_dir / "Outbox").glob("*.eml"))) == 1
    finally:
        service.close()


def test_a_draft_for_an_email_the_thread_already_moved_past_is_stale_from_the_start(vault_dir, gmail, mail):
    """Given two messages of one thread ingested together, when triage drafts a reply to the older
    one, then that draft is written stale (the newer message is already there); the newer one's draft is not."""
    ctx = make_ctx(vault_dir, mail)
    first = gmail.add_message(
        sender="Dana Rivera <dana@example.com>",
        subject="Friday review?",
        body="Could we move the review to Friday?",
        message_id=ORIGINAL,
    )
    second = gmail.add_message(
        sender="Dana Rivera <dana@example.com>",
        subject="Re: Friday review?",
        body="Could we move it to Thursday instead?",
        thread_id=first,
        in_reply_to=ORIGINAL,
    )
    assert len(ingest_new_mail(ctx).written) == 2
    older = triage_email(f"Needs_Action/EMAIL_{first}.md", ctx).data["draft_path"]
    newer = triage_email(f"Needs_Action/EMAIL_{second}.md", ctx).data["draft_path"]
    assert frontmatter(vault_dir, older)["stale"] is True
    assert frontmatter(vault_dir, older)["stale_since"] == f"[[EMAIL_{second}]]"
    assert "stale" not in frontmatter(vault_dir, newer)
    assert [m.text.strip() for m in ctx.triager.seen[-1].conversation] == ["Could we move the review to Friday?"]


class CountingLists(LocalVault):
    """The local vault, counting the walks of the vault (`list`)."""

    lists = 0

    def list(self, *args: Any, **kwargs: Any):
        CountingLists.lists += 1
        return super().list(*args, **kwargs)


def test_one_batch_of_new_mail_walks_the_vault_twice_and_sees_its_own_earlier_messages(vault_dir, gmail, mail):
    """Given 12 new messages in one sync batch — a thread of three, a duplicate delivery (same
    Message-ID twice) and seven others — when ingested, then the vault is walked twice for the
    whole batch (duplicates, threads), not twice per message; the duplicate gets no second note;
    and the later messages of the thread link the earlier ones written moments before."""
    ctx = make_ctx(vault_dir, mail)
    ctx.notes = NoteOps(CountingLists(Vault(vault_dir)))
    assert ingest_new_mail(ctx).written == []  # the first pass (a catch-up) sets the cursor
    first = gmail.add_message(sender="Dana <dana@example.com>", subject="Plan", body="One", message_id="<p1@x>")
    second = gmail.add_message(
        sender="Dana <dana@example.com>", subject="Re: Plan", body="Two", message_id="<p2@x>", thread_id=first
    )
    third = gmail.add_message(
        sender="Dana <dana@example.com>", subject="Re: Plan", body="Three", message_id="<p3@x>", thread_id=first
    )
    gmail.add_message(subject="Once", message_id="<dup@x>")
    gmail.add_message(subject="Once", message_id="<dup@x>")
    for i in range(7):
        gmail.add_message(subject=f"Other {i}", message_id=f"<o{i}@x>")
    CountingLists.lists = 0
    report = ingest_new_mail(ctx)
    assert report.mode == "history" and len(report.written) == 11 and report.duplicates == 1
    assert CountingLists.lists == 2
    vault = Vault(vault_dir)
    assert vault.read_note(f"Needs_Action/EMAIL_{second}.md").frontmatter["thread"] == [f"[[EMAIL_{first}]]"]
    assert vault.read_note(f"Needs_Action/EMAIL_{third}.md").frontmatter["thread"] == [
        f"[[EMAIL_{first}]]",
        f"[[EMAIL_{second}]]",
    ]
