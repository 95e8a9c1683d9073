"""A reached send cap is said once — one log line naming the setting and when
sending resumes — not once per draft, by a real daemon (real inotify, real MCP servers)."""

from __future__ import annotations

from pathlib import Path

from loguru import logger

from h0.pipeline.pass_summary import CAPPED
from tests.pipeline.harness import events, running_daemon, wait_until, write_draft


def test_given_a_cap_of_one_an_hour_when_three_more_drafts_are_approved_then_the_cap_is_said_once(vault_dir: Path):
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(str(message)), level="DEBUG", format="{level} {message}")
    try:
        with running_daemon(vault_dir, rate_limit_per_hour=1) as daemon:
            write_draft(vault_dir, "Approved", "first.md")
            assert wait_until(lambda: (vault_dir / "Done/first.md").exists())
            for name in ("second.md", "third.md", "fourth.md"):  # three more messages, not copies of the first
                write_draft(vault_dir, "Approved", name, body=f"Message {name}\n")
            assert wait_until(lambda: daemon.tally.counts()[CAPPED] == 3)
    finally:
        logger.remove(sink)
    said = [line for line in lines if "RATE_LIMIT_PER_HOUR" in line and not line.startswith("DEBUG")]
    assert len(said) == 1, said
    assert said[0].startswith(
        "WARNING sending paused: the hourly send cap is reached (RATE_LIMIT_PER_HOUR=1); sending resumes at "
    )
    assert "H0 sends them then" in said[0]  # a daemon does resend them itself
    assert not [line for line in lines if "sending resumed" in line]
    # Each draft the mail server turned away keeps its own trail record (`h0 log NOTE`): a warning,
    # never an error, so none of them is listed among the dashboard's errors; drafts approved once
    # the pause is known never reach the mail server at all.
    deferred = events(vault_dir, event="send_deferred")
    assert 1 <= len(deferred) <= 3
    assert all(d["details"]["setting"] == "RATE_LIMIT_PER_HOUR" and d["resumes_at"] for d in deferred)
    assert all(d["severity"] == "warning" for d in deferred)
    assert not [r for r in events(vault_dir) if r["severity"] in ("error", "critical")]
    assert sorted(p.name for p in (vault_dir / "Approved").glob("*.md")) == ["fourth.md", "second.md", "third.md"]
    assert len(list((vault_dir / "Outbox").glob("*.eml"))) == 1
