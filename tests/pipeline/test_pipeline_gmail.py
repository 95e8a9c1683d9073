"""The pipeline against the fake Gmail (real google-api-python-client, real MCP servers, real inotify)."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import load_settings
from h0.pipeline import signals
from h0.triage import Triager, ensure_rules_file
from tests.fakes.fake_gmail import FakeGmail
from tests.pipeline.harness import approve, edit_template, events, frontmatter, running_daemon, wait_until, write_draft


@pytest.fixture
def gmail_overrides(gmail: FakeGmail, token_path: Path) -> dict:
    return {
        "mail_backend": "gmail",
        "gmail_token_path": token_path,
        "gmail_api_endpoint": gmail.api_endpoint,
        "gmail_token_uri": gmail.token_uri,
        "max_retries": 2,
        "retry_delay_ms": 50,
    }


def rules(vault_dir: Path) -> Triager:
    ensure_rules_file(vault_dir)
    return Triager.from_settings(load_settings(vault_path=vault_dir), vault_dir)


def test_seeded_inbox_to_notes_to_drafts_to_a_threaded_reply_with_everything_in_done(vault_dir, gmail, gmail_overrides):
    """Issue 5 end to end: inbox → h0 watch → notes → draft → approved → sent in the thread → Done/."""
    original = "<CA+question-1@mail.example.com>"
    msg_id = gmail.add_message(
        sender="Dana Rivera <dana@example.com>",
        to=gmail.address,
        subject="Friday review?",
        body="Could we move the review to Friday?",
        message_id=original,
        thread_id="thread-77",
    )
    gmail.add_message(
        sender="Deals <newsletter@shop.example>",
        subject="50% off everything",
        body="Unsubscribe here.",
        labels=("INBOX", "UNREAD", "CATEGORY_PROMOTIONS"),
    )
    with running_daemon(vault_dir, triager=rules(vault_dir), ingest=True, **gmail_overrides) as daemon:
        daemon.request_ingest()
        draft = f"REPLY_EMAIL_{msg_id}.md"
        assert wait_until(lambda: (vault_dir / "Drafts" / draft).exists())
        assert wait_until(lambda: frontmatter(vault_dir, f"Needs_Action/EMAIL_{msg_id}.md")["status"] != "pending")
        note = frontmatter(vault_dir, f"Needs_Action/EMAIL_{msg_id}.md")
        assert note["rfc822_message_id"] == original and note["thread_id"] == "thread-77"
        assert note["from"] == "Dana Rivera <dana@example.com>" and note["status"] == "awaiting_approval"
        assert gmail.label_named("H0/ingested")
        edit_template(vault_dir, draft)
        approve(vault_dir, draft)
        assert wait_until(
            lambda: (vault_dir / "Done" / draft).exists() and (vault_dir / f"Done/EMAIL_{msg_id}.md").exists()
        )
        daemon.request_ingest()  # a second pass finds nothing new
        assert wait_until(lambda: daemon.last_ingest is not None and daemon.queue.pending() == 0)
    (sent,) = gmail.sent
    assert sent.message["In-Reply-To"] == original and original in sent.message["References"]
    assert sent.thread_id == "thread-77" and sent.message["Subject"] == "Re: Friday review?"
    assert sent.message["To"] == "dana@example.com"
    assert "%% h0" not in sent.text
    assert (
        len(list((vault_dir / "Needs_Action").glob("EMAIL_*.md"))) + len(list((vault_dir / "Done").glob("EMAIL_*.md")))
        == 2
    )
    assert frontmatter(vault_dir, f"Done/{draft}")["gmail_message_id"] == sent.id


def test_ingest_tolerates_odd_mail_and_duplicate_deliveries_and_never_marks_read(vault_dir, gmail, gmail_overrides):
    ids = {
        "no_subject": gmail.add_message(subject="", body="no subject here"),
        "huge": gmail.add_message(subject="Huge", body="x" * 150_000),
        "html": gmail.add_message(subject="HTML only", body=None, html="<p>Hello <b>there</b></p><p>Line 2</p>"),
        "unicode": gmail.add_message(sender="Zoë Ünïcode <zoe@example.com>", subject="Grüße — 你好", body="Hallo"),
        "dup1": gmail.add_message(subject="Same", body="twice", message_id="<same@example.com>"),
        "dup2": gmail.add_message(subject="Same", body="twice", message_id="<same@example.com>"),
    }
    with running_daemon(vault_dir, ingest=True, **gmail_overrides) as daemon:
        daemon.request_ingest()
        assert wait_until(lambda: daemon.last_ingest is not None)
        report = daemon.last_ingest
        daemon.request_ingest()
        assert wait_until(lambda: daemon.last_ingest is not report)
        second = daemon.last_ingest
    assert len(report.written) == 5 and report.duplicates == 1 and report.failed == 0
    assert second.written == [] and second.duplicates == 0
    notes = {p.name for p in (vault_dir / "Needs_Action").glob("EMAIL_*.md")}
    assert len(notes) == 5
    read = lambda key: frontmatter(vault_dir, f"Needs_Action/EMAIL_{ids[key]}.md")
    assert read("no_subject")["subject"] == ""
    assert read("unicode")["subject"] == "Grüße — 你好" and "Zoë" in read("unicode")["from"]
    huge_text = (vault_dir / f"Needs_Action/EMAIL_{ids['huge']}.md").read_text()
    assert "H0 cut this message" in huge_text and len(huge_text) < 110_000
    assert "Hello" in (vault_dir / f"Needs_Action/EMAIL_{ids['html']}.md").read_text()
    for message_id in ids.values():
        labels = gmail.message(message_id).labels
        assert "UNREAD" in labels  # nothing marked as read
        assert gmail.label_named("H0/ingested")["id"] in labels


def test_gmail_429_then_5xx_the_draft_waits_and_is_sent_exactly_once(vault_dir, gmail, gmail_overrides):
    gmail.fail_next(429, count=3, retry_after=0.2, path_contains="messages/send")
    gmail.fail_next(503, count=3, path_contains="messages/send")
    # The queue's backoff flat (a second a failure, its floor): six failures in a row, not 1 + 2 + … + 32 s.
    with running_daemon(vault_dir, **{**gmail_overrides, "retry_backoff_multiplier": 1.0}):
        write_draft(vault_dir, "Approved", "busy.md")
        assert wait_until(lambda: (vault_dir / "Done/busy.md").exists(), timeout=60)
    assert len(gmail.sent) == 1
    failures = events(vault_dir, event="send_deferred") + events(vault_dir, event="send_failed")
    assert failures, "the failed attempts were logged"
    assert all(f["severity"] in ("warning", "error") for f in failures)


def test_a_gmail_slower_than_the_calls_time_is_answered_still_sending_and_the_note_goes_once(
    vault_dir, gmail, gmail_overrides
):
    """Issue W: given Gmail holds the send longer than the mail server may take to answer a call
    (MAIL_ANSWER_SECONDS, under the client's 30 s), when the owner approves a draft, then the call is
    answered in time — "still sending, look again" — so the session is never restarted and the note is
    never stuck; the daemon looks again, and once Gmail answers, the message went out once and the note
    is in Done/."""
    gmail.hold_next(path_contains="messages/send")
    looks: list[str] = []

    def on_approved(sender: object, path: str) -> None:
        looks.append(path)

    signals.note_approved.connect(on_approved, weak=False)
    try:
        with running_daemon(vault_dir, mail_answer_seconds=0.3, **gmail_overrides) as daemon:
            write_draft(vault_dir, "Approved", "slow.md")
            assert wait_until(lambda: looks.count("Approved/slow.md") >= 2)  # answered in time, looked at again
            assert gmail.sent == [] and (vault_dir / "Approved/slow.md").exists()
            gmail.release_stalled()
            assert wait_until(lambda: (vault_dir / "Done/slow.md").exists())
            assert daemon.connections["mail"].connects == 1  # never restarted
    finally:
        signals.note_approved.disconnect(on_approved)
    assert len(gmail.sent) == 1
    assert frontmatter(vault_dir, "Done/slow.md")["status"] == "sent"
    assert events(vault_dir, event="mcp_unavailable") == [] and events(vault_dir, event="handler_error") == []


def test_a_revoked_token_pauses_sends_while_vault_work_goes_on(vault_dir, gmail, gmail_overrides, tmp_path):
    """Edge case: the Gmail MCP loses its token mid-session → auth_required, sends pause, vault work continues."""
    gmail.write_token(gmail_overrides["gmail_token_path"], expired=True)
    gmail.revoke_refresh_token()
    with running_daemon(vault_dir, **gmail_overrides):
        write_draft(vault_dir, "Approved", "blocked.md")
        assert wait_until(lambda: events(vault_dir, event="sends_paused"))
        write_draft(vault_dir, "Drafts", "nope.md")
        (vault_dir / "Drafts/nope.md").rename(vault_dir / "Rejected/nope.md")
        assert wait_until(lambda: (vault_dir / "Done/nope.md").exists())
    assert (vault_dir / "Approved/blocked.md").exists() and gmail.sent == []
    (paused,) = events(vault_dir, event="sends_paused")
    assert "h0 auth gmail" in paused["reason"] and paused["severity"] == "error"


def test_a_draft_edited_while_it_is_being_sent_is_sent_once_in_the_version_read(vault_dir, gmail, gmail_overrides):
    gmail.delay_next(1.5, path_contains="messages/send")
    with running_daemon(vault_dir, **gmail_overrides) as daemon:
        write_draft(vault_dir, "Approved", "edit.md", body="Original text.\n")
        assert wait_until(lambda: events(vault_dir, "gmail_mcp", "pre_send_audit"))  # read, built, going out
        write_draft(vault_dir, "Approved", "edit.md", body="Edited while sending.\n")
        assert wait_until(lambda: (vault_dir / "Done/edit.md").exists(), timeout=30)
        # The edit's own events were handled too (the note is gone: nothing to send), and sent nothing.
        assert daemon.queue.wait_idle(20, horizon=5.0)
    (sent,) = gmail.sent
    assert sent.text.strip() == "Original text."
    done = frontmatter(vault_dir, "Done/edit.md")
    assert done["status"] == "sent" and done["edited_during_send"] is True
    assert "Edited while sending." in (vault_dir / "Done/edit.md").read_text()
    assert events(vault_dir, event="draft_edited_during_send")


def test_a_bounced_recipient_is_filed_in_logs_failed(vault_dir, gmail, gmail_overrides):
    """Edge case: Gmail refuses the recipient → email_delivery_failed, draft filed in Logs/failed/."""
    gmail.fail_next(400, path_contains="messages/send", message="Invalid To header", reason="invalidArgument")
    with running_daemon(vault_dir, **gmail_overrides):
        write_draft(vault_dir, "Approved", "bounce.md", to="nobody@example.com")
        assert wait_until(lambda: (vault_dir / "Logs/failed/bounce.md").exists(), timeout=30)
    assert frontmatter(vault_dir, "Logs/failed/bounce.md")["status"] == "failed"
    (record,) = events(vault_dir, event="email_delivery_failed")
    assert record["severity"] == "error" and record["failed_path"] == "Logs/failed/bounce.md"
    assert gmail.sent == [] and not (vault_dir / "Approved/bounce.md").exists()
