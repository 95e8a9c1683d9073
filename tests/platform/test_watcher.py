"""Watching without inotify's close event: the polling observer, the quiet period, path spellings."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from watchdog.events import FileMovedEvent

from h0.pipeline.settle import QuietPeriod
from h0.pipeline.watcher import CLOSED, MOVED, WRITTEN, VaultWatcher, _Events
from tests.pipeline.harness import wait_until


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.sources: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def __call__(self, rel: str, kind: str, delay: float, source: str | None) -> None:
        with self._lock:
            self.seen.append((rel, kind))
            if kind == MOVED:
                self.sources[rel] = source

    def kinds(self, rel: str) -> list[str]:
        with self._lock:
            return [k for r, k in self.seen if r == rel]


@pytest.fixture
def polling(vault_dir: Path):
    recorder = Recorder()
    watcher = VaultWatcher(vault_dir, recorder, lambda: None, kind="polling")
    watcher.start()
    try:
        yield watcher, recorder
    finally:
        watcher.stop()


def test_the_polling_watcher_reports_no_closes_so_the_quiet_period_stands_in(polling):
    watcher, _ = polling
    assert watcher.reports_closes is False and type(watcher.observer).__name__ == "PollingObserverVFS"


def test_given_polling_when_a_draft_is_dragged_into_approved_then_it_arrives_as_a_move(vault_dir: Path, polling):
    _, recorder = polling
    (vault_dir / "Drafts/a.md").write_text("---\nto: a@example.com\nsubject: A\n---\nHi\n")
    assert wait_until(lambda: "closed" in recorder.kinds("Drafts/a.md"), timeout=10)
    (vault_dir / "Drafts/a.md").rename(vault_dir / "Approved/a.md")
    assert wait_until(lambda: recorder.kinds("Approved/a.md"), timeout=10) == [MOVED]


def test_given_polling_when_a_note_is_written_in_place_then_written_then_closed_once_quiet(vault_dir: Path, polling):
    _, recorder = polling
    note = vault_dir / "Needs_Action/EMAIL_1.md"
    with open(note, "w") as handle:
        handle.write("---\ntype: email\n")
        handle.flush()
        assert wait_until(lambda: WRITTEN in recorder.kinds("Needs_Action/EMAIL_1.md"), timeout=10)
        handle.write("status: pending\n---\nbody\n")
    assert wait_until(lambda: CLOSED in recorder.kinds("Needs_Action/EMAIL_1.md"), timeout=10)
    kinds = recorder.kinds("Needs_Action/EMAIL_1.md")
    assert kinds[0] == WRITTEN and kinds.count(CLOSED) >= 1


def test_the_polling_observer_looks_only_at_the_trigger_folders(vault_dir: Path, polling):
    _, recorder = polling
    (vault_dir / "Projects" / "deep").mkdir(parents=True)
    for i in range(20):
        (vault_dir / "Projects" / "deep" / f"n{i}.md").write_text("x")
    (vault_dir / "Needs_Action/marker.md").write_text("x")  # written after: once it shows, the others had their chance
    assert wait_until(lambda: recorder.kinds("Needs_Action/marker.md"), timeout=10)
    assert all(rel.startswith("Needs_Action/") for rel, _ in recorder.seen)


def test_events_naming_the_resolved_vault_path_are_understood(tmp_path: Path, vault_dir: Path):
    """FSEvents names real paths (/private/var/… for /var/…): a vault opened through a symlink
    must still see its approvals."""
    link = tmp_path / "vault-link"
    try:
        link.symlink_to(vault_dir, target_is_directory=True)
    except OSError:
        pytest.skip("no symlinks here")
    recorder = Recorder()
    events = _Events(str(link), recorder)
    (vault_dir / "Approved/x.md").write_text("---\nto: a@example.com\nsubject: x\n---\n")
    events.dispatch(
        FileMovedEvent(
            os.path.join(os.path.realpath(vault_dir), "Drafts", "x.md"),
            os.path.join(os.path.realpath(vault_dir), "Approved", "x.md"),
        )
    )
    assert recorder.seen == [("Approved/x.md", MOVED)]


class FakeClock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_quiet_period_names_a_path_once_its_size_and_mtime_stand_still(tmp_path: Path):
    clock = FakeClock()
    quiet = QuietPeriod(quiet=0.5, clock=clock)
    note = tmp_path / "n.md"
    note.write_text("a")
    quiet.touched("n.md", str(note))
    assert quiet.settled() == []  # not quiet long enough yet
    clock.now += 0.5
    assert quiet.settled() == ["n.md"]
    assert quiet.next_due() is None and quiet.settled() == []


def test_quiet_period_waits_again_for_a_file_that_changed_and_drops_one_that_went(tmp_path: Path):
    clock = FakeClock()
    quiet = QuietPeriod(quiet=0.5, clock=clock)
    growing, gone = tmp_path / "growing.md", tmp_path / "gone.md"
    growing.write_text("a")
    gone.write_text("a")
    quiet.touched("growing.md", str(growing))
    quiet.touched("gone.md", str(gone))
    gone.unlink()
    growing.write_text("ab")  # changed within the period: a writer still at it
    clock.now = quiet.next_due() or clock.now
    assert quiet.settled() == []  # growing: a new period; gone: dropped
    assert quiet.next_due() == clock.now + 0.5
    clock.now += 0.5
    assert quiet.settled() == ["growing.md"]
