"""An SMTP send whose outcome nobody knows, under a running daemon: a real SMTP server (aiosmtpd) takes
the message (DATA) and then drops the connection, or never answers before the client's timeout.

The message probably left. H0 must not send it again by itself, must not loop on it, and must take the
note out of Approved/ with words the owner can act on: "may have been sent — check your Sent folder"."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import load_settings
from h0.report.collect import collect_status
from h0.report.text import render_status
from tests.fakes.smtp_relay import smtp_relay, smtp_settings
from tests.pipeline.harness import counting_sweeps, events, frontmatter, running_daemon, wait_until, write_draft


@pytest.mark.parametrize("misbehaviour", ["drop_after_data", "stall_after_data"])
def test_given_the_relay_takes_the_message_and_never_answers_then_the_note_leaves_approved_and_is_never_sent_again(
    vault_dir: Path, misbehaviour: str
):
    """Given a relay that accepts DATA and then drops the connection (or stalls past SMTP_TIMEOUT_SECONDS),
    when the owner approves a draft, then the relay received it exactly once, the note is filed in Done/ saying
    it may have been sent (check your Sent folder), no handler error repeats, and several sweeps later
    nothing more was sent and `h0 status` says it in one line."""
    with smtp_relay(misbehaviour, stall_s=5.0) as (relay, port):
        settings = smtp_settings(port) | {"smtp_timeout_seconds": 0.5, "sweep_interval_seconds": 0.3}
        with running_daemon(vault_dir, **settings) as daemon, counting_sweeps(daemon) as sweeps:
            write_draft(vault_dir, "Approved", "late.md", to="ann@example.com", subject="Late answer")
            assert wait_until(lambda: (vault_dir / "Done/late.md").exists()), events(vault_dir)[-3:]
            assert sweeps(3)  # several sweeps later
        assert len(relay.received) == 1, "sent once, never again"
    assert not (vault_dir / "Approved/late.md").exists()
    filed = frontmatter(vault_dir, "Done/late.md")
    assert filed["status"] == "outcome_unknown" and filed["h0_error_code"] == "send_outcome_unknown"
    assert "may have been sent" in filed["h0_error"] and "Sent folder" in filed["h0_error"]
    assert filed["rfc822_message_id"].startswith("<h0.")
    assert events(vault_dir, event="handler_error") == []
    (unknown,) = events(vault_dir, event="send_outcome_unknown")
    assert unknown["path"] == "Approved/late.md" and unknown["done_path"] == "Done/late.md"
    status = render_status(collect_status(load_settings(vault_path=vault_dir)))
    said = [line for line in status.splitlines() if "late.md" in line]
    assert len(said) == 1 and "may have been sent" in said[0], status


def test_given_an_unknown_outcome_when_a_sync_tool_brings_the_note_back_then_it_is_filed_as_a_copy(vault_dir: Path):
    """Given a send whose outcome is unknown (filed in Done/), when the same note re-appears in Approved/
    (a sync tool restoring it), then it is not sent: it is filed as a copy of that send."""
    with smtp_relay("drop_after_data") as (relay, port):
        settings = smtp_settings(port) | {"smtp_timeout_seconds": 0.5}
        with running_daemon(vault_dir, **settings):
            note = write_draft(vault_dir, "Approved", "late.md", to="ann@example.com", subject="Late answer")
            text = note.read_text()
            assert wait_until(lambda: (vault_dir / "Done/late.md").exists())
            relay.mode = "answer"
            write_draft(vault_dir, "Approved", "late 2.md", to="ann@example.com", subject="Late answer")
            assert wait_until(lambda: events(vault_dir, event="copy_filed"))
        assert len(relay.received) == 1
    assert (vault_dir / "Approved/late 2.md").exists() is False and text
    copy = frontmatter(vault_dir, "Done/late 2.md")
    assert copy["status"] == "copy" and copy["copy_of"] == "Done/late.md"
    assert "may or may not have gone out" in copy["h0_error"]
