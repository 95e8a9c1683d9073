"""The pipeline against Outlook (issue 43): the fake Graph and the fake HTTPS authority, msal unchanged, the real
daemon with its MCP servers and real file events."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import load_settings
from h0.triage import Triager, ensure_rules_file
from tests.fakes.fake_authority import FakeAuthority
from tests.fakes.fake_graph import FakeGraph
from tests.mail.outlook_fixtures import outlook_values, sign_in
from tests.pipeline.harness import (
    approve,
    edit_template,
    events,
    frontmatter,
    running_daemon,
    sweep_once,
    wait_until,
    write_draft,
)


@pytest.fixture
def overrides(vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, outlook_token: Path) -> dict:
    values = outlook_values(vault_dir, graph, authority, outlook_token)
    values.pop("vault_path")
    return {**values, "max_retries": 2, "retry_delay_ms": 50}


def safe(message_id: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in message_id)


def test_inbox_to_note_to_draft_to_a_threaded_reply_in_sent_items_once(vault_dir, graph, overrides):
    """Outlook end to end: a new Inbox message → h0 watch → note → draft → approved → sent in its
    conversation (In-Reply-To of the original) → one copy in Sent Items, the note in Done/."""
    original = "<CA+question-1@mail.example.com>"
    message = graph.add_message(
        sender="Dana Rivera <dana@example.com>",
        subject="Friday review?",
        body="Could we move the review to Friday?",
        message_id=original,
    )
    ensure_rules_file(vault_dir)
    triager = Triager.from_settings(load_settings(vault_path=vault_dir), vault_dir)
    with running_daemon(vault_dir, triager=triager, ingest=True, **overrides) as daemon:
        daemon.request_ingest()
        draft = f"REPLY_EMAIL_{safe(message)}.md"
        assert wait_until(lambda: (vault_dir / "Drafts" / draft).exists())
        note = frontmatter(vault_dir, f"Needs_Action/EMAIL_{safe(message)}.md")
        assert (
            note["rfc822_message_id"] == original
            and note["thread_id"] == graph.messages[message].props["conversationId"]
        )
        edit_template(vault_dir, draft)
        approve(vault_dir, draft)
        assert wait_until(lambda: (vault_dir / "Done" / draft).exists())
    (sent,) = graph.sent
    assert sent.header("In-Reply-To") == original and sent.header("Subject") == "Re: Friday review?"
    assert sent.header("To") == "dana@example.com" and "%% h0" not in sent.message.get_body().get_content()
    (copy,) = graph.in_folder("sentitems")
    assert copy.props["conversationId"] == graph.messages[message].props["conversationId"]
    assert frontmatter(vault_dir, f"Done/{draft}")["gmail_message_id"] == sent.header("Message-ID")


def test_a_grant_revoked_mid_send_pauses_sending_says_what_to_do_and_sends_once_after_signing_in(
    vault_dir, graph, authority, overrides
):
    """Hostile: the first draft goes; then the token expires and the grant is revoked. The next approved draft
    is not sent: sending pauses, the dashboard note says to run `h0 auth outlook`, vault work goes on. After a
    new sign-in the next pass sends it, once."""
    with running_daemon(vault_dir, **overrides):
        write_draft(vault_dir, "Approved", "first.md", subject="first")
        assert wait_until(lambda: (vault_dir / "Done/first.md").exists())
        graph.expire_tokens()
        authority.revoke()
        write_draft(vault_dir, "Approved", "blocked.md", subject="blocked")
        assert wait_until(lambda: events(vault_dir, event="sends_paused"))
        dashboard = vault_dir / "H0_Dashboard.md"
        assert wait_until(lambda: dashboard.exists() and "h0 auth outlook" in dashboard.read_text(), timeout=30)
        write_draft(vault_dir, "Drafts", "nope.md")
        (vault_dir / "Drafts/nope.md").rename(vault_dir / "Rejected/nope.md")
        assert wait_until(lambda: (vault_dir / "Done/nope.md").exists())
    assert (vault_dir / "Approved/blocked.md").exists() and [s.header("Subject") for s in graph.sent] == ["first"]
    (paused,) = events(vault_dir, event="sends_paused")
    assert "h0 auth outlook" in paused["reason"]
    sign_in(load_settings(vault_path=vault_dir, **overrides))  # the owner runs `h0 auth outlook`
    sweep_once(vault_dir, **overrides)
    assert (vault_dir / "Done/blocked.md").exists()
    assert [s.header("Subject") for s in graph.sent] == ["first", "blocked"]
