"""The pipeline end to end with H0_WATCHER=polling: no inotify, no close events — what a Mac,
a Windows PC or a network drive gives H0 — run here on Linux through watchdog's polling observer.

Approval by a move, a note written in place, a burst, and the sweep: each proved from
created/modified/moved events and the quiet period alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from h0.pipeline import signals
from h0.pipeline.settle import CLOSED, QUIET_SECONDS, WRITTEN
from tests.pipeline.harness import (
    FakeClocks,
    approve,
    events,
    frontmatter,
    outbox,
    running_daemon,
    wait_until,
    write_draft,
)


@pytest.fixture(autouse=True)
def _polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("H0_WATCHER", "polling")  # the real setting, read the real way


def test_given_polling_when_the_human_moves_a_draft_into_approved_then_it_is_sent_at_once(vault_dir: Path):
    """A move is the human's drag even without inotify: sent without waiting out the settle period
    (an hour here, so only a move could send it), and not by a sweep (every hour too)."""
    write_draft(vault_dir, "Drafts", "reply.md", to="dana@example.com", subject="Re: Friday")
    with running_daemon(vault_dir, approval_settle_seconds=3600, sweep_interval_seconds=3600) as daemon:
        assert daemon.watcher.reports_closes is False
        approve(vault_dir, "reply.md")
        assert wait_until(lambda: (vault_dir / "Done/reply.md").exists())
    (message,) = outbox(vault_dir)
    assert message["To"] == "dana@example.com" and message["Subject"] == "Re: Friday"
    assert frontmatter(vault_dir, "Done/reply.md")["status"] == "sent"


def test_given_polling_when_a_note_is_typed_in_place_in_approved_then_one_email_with_the_final_text(vault_dir: Path):
    """No close event ever comes: the quiet period (size and mtime still) stands in for it, then
    the approval settle period runs; a pause shorter than that never sends a half-typed note. The
    daemon's clocks are the test's: the pauses are moves of it."""
    settle, clock, rel = 600.0, FakeClocks(), "Approved/typed.md"
    with running_daemon(
        vault_dir, approval_settle_seconds=settle, sweep_interval_seconds=3600, clocks=clock.clocks
    ) as d:
        with open(vault_dir / rel, "w") as handle:
            handle.write("---\nto: bob@example.com\nsubject: Typed in place\n---\nFirst line.\n")
            handle.flush()
            # Seen, quiet, and "closed" by the quiet period while still open: the settle period holds it.
            assert wait_until(lambda: d.settle.last_event(rel) == (WRITTEN, clock.monotonic()))
            clock.advance(QUIET_SECONDS)
            assert wait_until(lambda: d.settle.last_event(rel) == (CLOSED, clock.monotonic()))
            clock.advance(settle / 2)  # longer than the quiet period, shorter than the settle period
            assert wait_until(lambda: d.queue.busy() == 0)
            assert outbox(vault_dir) == [], "sent while the human was still typing"
            handle.write("Second line.\n")
        assert wait_until(lambda: d.settle.last_event(rel) == (WRITTEN, clock.monotonic()))
        clock.advance(QUIET_SECONDS)
        assert wait_until(lambda: d.settle.last_event(rel) == (CLOSED, clock.monotonic()))
        clock.advance(settle)
        assert wait_until(lambda: (vault_dir / "Done/typed.md").exists())
    (message,) = outbox(vault_dir)
    assert message.get_content() == "First line.\nSecond line.\n"


def test_given_polling_when_200_drafts_arrive_at_once_then_each_is_sent_exactly_once(vault_dir: Path, tmp_path: Path):
    staging = tmp_path / "staging"
    staging.mkdir()
    for i in range(200):
        (staging / f"bulk-{i:03}.md").write_text(f"---\nto: user{i}@example.com\nsubject: Bulk {i}\n---\nMessage {i}\n")
    with running_daemon(
        vault_dir,
        sweep_interval_seconds=3600,
        approval_settle_seconds=0.5,
        rate_limit_per_hour=5000,
        rate_limit_per_day=5000,
    ):
        for path in staging.iterdir():
            os.rename(path, vault_dir / "Approved" / path.name)
        assert wait_until(lambda: len(list((vault_dir / "Done").glob("bulk-*.md"))) == 200, timeout=60, interval=0.2)
    assert len(list((vault_dir / "Outbox").glob("*.eml"))) == 200
    assert not list((vault_dir / "Approved").glob("*.md"))
    assert len({e["idempotency_key"] for e in events(vault_dir, "gmail_mcp", event="email_sent")}) == 200


def test_given_polling_the_sweep_alone_catches_what_no_event_reported(vault_dir: Path):
    """No overflow signal exists for the polling observer: the interval sweep is what catches up."""
    reasons: list[str] = []

    def on_sweep(sender, queued, reason):
        reasons.append(reason)

    signals.sweep_completed.connect(on_sweep, weak=False)
    try:
        with running_daemon(vault_dir, sweep_interval_seconds=0.5) as daemon:
            write_draft(vault_dir, "Drafts", "late.md")
            daemon.watcher.stop()  # nobody watches while it moves …
            (vault_dir / "Drafts/late.md").rename(vault_dir / "Approved/late.md")
            daemon.watcher.start()  # … and the new observer's first look already includes it
            assert wait_until(lambda: (vault_dir / "Done/late.md").exists(), timeout=20)
            assert "interval" in reasons
    finally:
        signals.sweep_completed.disconnect(on_sweep)


def test_given_polling_a_dead_observer_is_restarted_and_the_sweep_finds_what_it_missed(vault_dir: Path):
    with running_daemon(vault_dir, sweep_interval_seconds=3600) as daemon:
        observer = daemon.watcher.observer
        assert observer is not None
        observer.stop()
        observer.join(5)
        write_draft(vault_dir, "Approved", "missed.md")
        assert wait_until(lambda: (vault_dir / "Done/missed.md").exists(), timeout=20)
    restarted = events(vault_dir, event="watcher_restarted")
    assert restarted and restarted[0]["reason"] == "the observer thread died"
