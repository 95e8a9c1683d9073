"""Is a note complete, and may an approved one be sent yet? The settle tracker on a clock the test moves.

Given the events the watcher reports for a path, and file times, when the test moves its clocks,
then the tracker answers how long to wait — without a test ever sleeping for the period itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from h0.pipeline.settle import MOVED, STABILITY_SECONDS, UNKNOWN, WRITER_GONE_SECONDS, WRITTEN, SettleTracker

SETTLE = 10.0


class Clocks:
    """A monotonic clock and a wall clock that move together, only when the test says so."""

    def __init__(self, wall: float) -> None:
        self.mono = 500.0
        self.epoch = wall

    def monotonic(self) -> float:
        return self.mono

    def time(self) -> float:
        return self.epoch

    def advance(self, seconds: float) -> None:
        self.mono += seconds
        self.epoch += seconds


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "Approved" / "x.md"
    path.parent.mkdir()
    path.write_text("---\nto: a@example.com\nsubject: s\n---\nhello\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


@pytest.fixture
def clocks() -> Clocks:
    return Clocks(wall=1_700_000_000.0)


@pytest.fixture
def tracker(clocks: Clocks) -> SettleTracker:
    return SettleTracker(SETTLE, clock=clocks.monotonic, wall=clocks.time)


def test_given_a_drag_into_approved_then_it_is_acted_on_at_once(tracker: SettleTracker, note: Path):
    tracker.moved_in("Approved/x.md", "Drafts/x.md")
    assert tracker.arrival("Approved/x.md") == MOVED
    assert tracker.wait_for("Approved/x.md", note, approval=True) == 0.0


def test_given_a_note_written_in_place_then_it_waits_the_settle_period_from_its_last_change(
    tracker: SettleTracker, clocks: Clocks, note: Path
):
    tracker.wrote("Approved/x.md")
    tracker.completed("Approved/x.md")
    assert tracker.arrival("Approved/x.md") == WRITTEN
    assert tracker.wait_for("Approved/x.md", note, approval=True) == pytest.approx(SETTLE)
    clocks.advance(6.0)
    assert tracker.wait_for("Approved/x.md", note, approval=True) == pytest.approx(SETTLE - 6.0)
    tracker.wrote("Approved/x.md")  # the editor saved again: the period starts over
    tracker.completed("Approved/x.md")
    assert tracker.wait_for("Approved/x.md", note, approval=True) == pytest.approx(SETTLE)
    clocks.advance(SETTLE)
    assert tracker.wait_for("Approved/x.md", note, approval=True) == 0.0


def test_given_a_writer_that_has_not_closed_the_note_then_approval_waits_however_quiet_it_is(
    tracker: SettleTracker, clocks: Clocks, note: Path
):
    tracker.wrote("Approved/x.md")
    clocks.advance(SETTLE * 2)
    assert tracker.wait_for("Approved/x.md", note, approval=True) == pytest.approx(STABILITY_SECONDS)
    clocks.advance(WRITER_GONE_SECONDS)  # a file system that never reports closes
    assert tracker.wait_for("Approved/x.md", note, approval=True) == 0.0


def test_given_no_event_then_the_file_time_decides(tracker: SettleTracker, clocks: Clocks, note: Path):
    assert tracker.arrival("Approved/x.md") == UNKNOWN
    assert tracker.wait_for("Approved/x.md", note, approval=True) == pytest.approx(SETTLE)
    assert tracker.wait_for("Approved/x.md", note) == pytest.approx(STABILITY_SECONDS)
    clocks.advance(SETTLE)
    assert tracker.wait_for("Approved/x.md", note, approval=True) == 0.0
    assert tracker.wait_for("Approved/x.md", note) == 0.0


def test_given_a_move_then_observed_reports_the_epoch_of_the_move_and_of_the_source_s_last_change(
    tracker: SettleTracker, clocks: Clocks
):
    tracker.wrote("Drafts/x.md")
    clocks.advance(2.0)
    tracker.moved_in("Approved/x.md", "Drafts/x.md")
    arrival = tracker.observed("Approved/x.md")
    assert arrival.kind == MOVED
    assert arrival.at == pytest.approx(clocks.epoch)
    assert arrival.source_changed_at == pytest.approx(clocks.epoch - 2.0)


def test_events_older_than_the_forget_period_are_dropped(tracker: SettleTracker, clocks: Clocks, note: Path):
    tracker.moved_in("Approved/x.md")
    clocks.advance(1000.0)
    tracker.forget_old()
    assert tracker.arrival("Approved/x.md") == UNKNOWN
