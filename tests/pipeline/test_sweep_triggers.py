"""The sweep catches what events miss: after an inotify overflow, when the observer dies, on a timer."""

from __future__ import annotations

import logging
from pathlib import Path

from h0.pipeline import signals
from tests.pipeline.harness import events, running_daemon, wait_until, write_draft


def collect_sweeps():
    reasons: list[str] = []

    def on_sweep(sender, queued, reason):
        reasons.append(reason)

    signals.sweep_completed.connect(on_sweep, weak=False)
    return reasons, lambda: signals.sweep_completed.disconnect(on_sweep)


def test_an_inotify_overflow_warning_from_watchdog_triggers_a_sweep(vault_dir: Path):
    reasons, done = collect_sweeps()
    try:
        with running_daemon(vault_dir):
            # What watchdog's inotify reader logs when the kernel queue overflowed.
            logging.getLogger("watchdog.observers.inotify_c").warning(
                "Inotify queue overflowed; filesystem events were lost"
            )
            assert wait_until(lambda: "inotify queue overflow" in reasons, timeout=10)
    finally:
        done()


def test_a_dead_observer_is_restarted_and_the_sweep_finds_what_it_missed(vault_dir: Path):
    with running_daemon(vault_dir, sweep_interval_seconds=3600) as daemon:
        observer = daemon.watcher.observer
        assert observer is not None
        observer.stop()  # the observer thread dies
        observer.join(5)
        write_draft(vault_dir, "Approved", "missed.md")  # no one is watching now
        assert wait_until(lambda: (vault_dir / "Done/missed.md").exists(), timeout=20)
    restarted = events(vault_dir, event="watcher_restarted")
    assert restarted and restarted[0]["reason"] == "the observer thread died"


def test_the_interval_sweep_sends_a_draft_whose_event_was_lost(vault_dir: Path):
    with running_daemon(vault_dir, sweep_interval_seconds=0.5) as daemon:
        reasons, done = collect_sweeps()
        try:
            path = vault_dir / "Approved/late.md"
            tmp = vault_dir / "late.md.tmp"
            write_draft(vault_dir, "Drafts", "late.md")
            (vault_dir / "Drafts/late.md").rename(tmp)
            daemon.watcher.stop()  # the move below happens while nobody watches: its event is lost …
            tmp.rename(path)
            daemon.watcher.start()  # … and the watcher comes back without noticing
            assert wait_until(lambda: (vault_dir / "Done/late.md").exists(), timeout=20)
            assert "interval" in reasons
        finally:
            done()
