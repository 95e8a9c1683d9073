"""Follow-ups in the running daemon (issue 25): real MCP servers (the owner's sent mail crosses the mail
server's `list_new_emails` as `sent`), real inotify, the fake Gmail; the daemon's clock is the test's."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.triage import Triager, ensure_rules_file
from tests.followup.conftest import DANA, DAY, OWNER
from tests.pipeline.harness import events, frontmatter, running_daemon, wait_until


@pytest.fixture
def gmail_overrides(gmail, token_path: Path) -> dict:
    return {
        "mail_backend": "gmail",
        "gmail_token_path": token_path,
        "gmail_api_endpoint": gmail.api_endpoint,
        "gmail_token_uri": gmail.token_uri,
        "max_retries": 2,
        "retry_delay_ms": 50,
    }


def test_the_daemon_drafts_a_follow_up_then_withdraws_it_when_the_answer_arrives(vault_dir, gmail, gmail_overrides):
    """Given `h0 watch` following the mailbox, When the owner's question (sent from their phone) has gone
    unanswered for FOLLOW_UP_DAYS, Then the pass the ingest triggers writes the follow-up note and draft;
    When Dana answers, Then the next ingest's pass files the note and withdraws the draft."""
    ensure_rules_file(vault_dir)
    triager = Triager.from_settings(load_settings(vault_path=vault_dir), vault_dir)
    gmail.add_message(subject="Old news", sender="News <news@example.org>", body="Nothing to do.")
    with running_daemon(vault_dir, triager=triager, **gmail_overrides) as daemon:
        daemon.request_ingest()
        assert wait_until(lambda: daemon.last_ingest is not None and daemon.last_ingest.mode == "catch_up")
        daemon.clock = lambda: time.time() + 10 * DAY  # the question below is ten days old by the pass's clock
        sent_id = gmail.add_message(
            sender=f"Owner <{OWNER}>",
            to=DANA,
            subject="Q3 numbers?",
            labels=("SENT",),
            body="Could you send me the Q3 numbers?",
        )
        note, draft = (
            vault_dir / f"Needs_Action/FOLLOWUP_{sent_id}.md",
            vault_dir / f"Drafts/REPLY_FOLLOWUP_{sent_id}.md",
        )
        daemon.request_ingest()
        assert wait_until(lambda: events(vault_dir, event="reply_awaited")), daemon.last_followup  # after both notes
        assert [e["path"] for e in events(vault_dir, event="reply_awaited")] == [f"Needs_Action/{note.name}"]
        assert note.exists() and frontmatter(vault_dir, f"Drafts/{draft.name}")["to"] == "dana@example.com"

        gmail.add_message(sender=DANA, subject="Re: Q3 numbers?", thread_id=sent_id, body="Here you go.")
        daemon.request_ingest()
        # The move and its frontmatter are two steps of the vault server's move: wait for the second.
        assert wait_until(
            lambda: (
                (vault_dir / "Done" / note.name).exists()
                and (vault_dir / "Done" / draft.name).exists()
                and frontmatter(vault_dir, f"Done/{draft.name}").get("status") == "withdrawn"
            )
        )
        assert "Here you go" not in (vault_dir / "Done" / draft.name).read_text()
        assert not draft.exists() and not note.exists()
    assert gmail.sent == []  # nothing was sent by any of it
