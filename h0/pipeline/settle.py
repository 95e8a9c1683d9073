"""Is a note complete, and how did it arrive? Per path: the last write hint, the last
"complete" event, and whether it was moved in from another folder.

A moved-in or close-after-write event marks a path complete. A create or modify event
after that means someone is writing it again. A path with a write newer than its last
close is still open for writing — H0 waits (the note may be half-written) until the
writer closes it, or until nothing has touched it for WRITER_GONE_SECONDS (filesystems
that never report closes). Without any event (found by the sweep), a file counts as
complete once its mtime is STABILITY_SECONDS old.

Where the OS reports no close after writing (FSEvents on macOS, ReadDirectoryChangesW on
Windows, the polling observer anywhere), `QuietPeriod` stands in for the close: a written
path counts as complete once its size and mtime have not changed for QUIET_SECONDS.

`Approved/` is stricter, because a note there is sent: only a note *moved in* from another
folder (the human's drag) is acted on at once. A note written in place — an editor's
autosave while the human is still typing, or an atomic save from inside the folder — is
acted on only once it has been unchanged for the approval settle period (default 10 s).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from h0.vault.last_change import Arrival, settle_left

STABILITY_SECONDS = 0.5
QUIET_SECONDS = 0.5
WRITER_GONE_SECONDS = 30.0
FORGET_AFTER_SECONDS = 120.0

MOVED, WRITTEN, UNKNOWN = "moved", "written", "unknown"
CLOSED = "closed"  # a last event: closed after writing, or saved in place (h0.pipeline.watcher)


Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Clocks:
    """What the daemon's waits run on: `monotonic` seconds (the work queue's due times, the settle
    tracker's events, the quiet period) and `wall` epoch seconds (compared with file times: the
    settle period of a note written in place). The machine's by default; a test passes clocks it
    moves itself, so a settle or quiet period passes without sleeping through it."""

    monotonic: Clock = time.monotonic
    wall: Clock = time.time


MACHINE_CLOCKS = Clocks()


class SettleTracker:
    """Thread-safe. `clock` (monotonic seconds) and `wall` (epoch seconds, compared with file
    times) are the machine's by default; tests pass fake ones and move time themselves."""

    def __init__(
        self, approval_settle_seconds: float = 10.0, *, clock: Clock = time.monotonic, wall: Clock = time.time
    ) -> None:
        self.approval_settle_seconds = approval_settle_seconds
        self.clock = clock
        self.wall = wall
        self._writes: dict[str, float] = {}
        self._closes: dict[str, float] = {}
        self._moves: dict[str, float] = {}
        self._sources: dict[str, float] = {}  # moved-in path -> last write/close event of the path it came from
        self._lock = threading.Lock()

    def saw(self, path: str, kind: str, source: str | None = None) -> None:
        """What the watcher reported (h0.pipeline.watcher's kinds): MOVED in from another folder (`source`:
        the trigger-folder path it came from), CLOSED (complete, written in place), or a write hint."""
        if kind == MOVED:
            self.moved_in(path, source)
        elif kind == CLOSED:
            self.completed(path)
        else:
            self.wrote(path)

    def wrote(self, path: str) -> None:
        with self._lock:
            self._writes[path] = self.clock()

    def completed(self, path: str) -> None:
        """Closed after writing, or renamed into place from the same folder (an atomic save)."""
        with self._lock:
            self._closes[path] = self.clock()

    def moved_in(self, path: str, source: str | None = None) -> None:
        """Moved here from another folder: the human's drag (or a sync tool's move). `source`:
        the path it came from, when that is a watched folder — its last write is remembered,
        so a change just before the move is seen even when its mtime was set back."""
        with self._lock:
            now = self.clock()
            self._moves[path] = now
            self._closes[path] = now
            touched = max(self._writes.get(source, 0.0), self._closes.get(source, 0.0)) if source else 0.0
            if touched:
                self._sources[path] = touched
            else:
                self._sources.pop(path, None)

    def last_event(self, path: str) -> tuple[str, float] | None:
        """The last event reported for `path` and when (on `clock`): MOVED (in from another folder),
        CLOSED (closed after writing, or saved in place) or WRITTEN (a write hint, the writer may
        still be at it); None without events. Events of the same moment count in the order the
        watcher reports them: a move, then its close."""
        with self._lock:
            moved = self._moves.get(path)
            closed = self._closes.get(path)
            wrote = self._writes.get(path)
        if moved is not None and moved >= max(closed or 0.0, wrote or 0.0):
            return MOVED, moved
        if closed is not None and closed >= (wrote or 0.0):
            return CLOSED, closed
        return (WRITTEN, wrote) if wrote is not None else None

    def arrival(self, path: str) -> str:
        """'moved' if the last thing that happened to `path` was a move from another folder;
        'written' if it was written (or saved) in place since; 'unknown' without events."""
        last = self.last_event(path)
        if last is None:
            return UNKNOWN
        return MOVED if last[0] == MOVED else WRITTEN

    def observed(self, path: str) -> Arrival:
        """What the events said of how `path` arrived, with epoch times (h0.vault.last_change)."""
        kind = self.arrival(path)
        with self._lock:
            moved = self._moves.get(path)
            source = self._sources.get(path)
        if kind != MOVED or moved is None:
            return Arrival(kind)
        offset = self.wall() - self.clock()
        return Arrival(kind, moved + offset, source + offset if source is not None else None)

    def wait_for(self, path: str, absolute: Path, *, approval: bool = False) -> float:
        """Seconds to wait before acting on `path` (0: act now)."""
        now = self.clock()
        with self._lock:
            wrote = self._writes.get(path)
            closed = self._closes.get(path)
            moved = self._moves.get(path)
        if approval:
            return self._approval_wait(now, wrote, closed, moved, absolute)
        if wrote is not None and (closed is None or wrote > closed):
            quiet = now - wrote
            return 0.0 if quiet >= WRITER_GONE_SECONDS else min(STABILITY_SECONDS, WRITER_GONE_SECONDS - quiet)
        if closed is not None:
            return 0.0
        return max(0.0, STABILITY_SECONDS - _mtime_age(absolute, self.wall))

    def _approval_wait(
        self, now: float, wrote: float | None, closed: float | None, moved: float | None, absolute: Path
    ) -> float:
        last_touch = max(wrote or 0.0, closed or 0.0)
        if moved is not None and moved >= last_touch:
            return 0.0  # the human's drag
        if wrote is not None and (closed is None or wrote > closed) and now - wrote < WRITER_GONE_SECONDS:
            # Written and not closed yet: the writer still holds it open, however quiet it is.
            return min(STABILITY_SECONDS, WRITER_GONE_SECONDS - (now - wrote))
        quiet_events = now - last_touch if last_touch else float("inf")
        quiet_for = min(quiet_events, _mtime_age(absolute, self.wall))
        return settle_left(moved=False, quiet_for=quiet_for, settle_s=self.approval_settle_seconds)

    def forget_old(self) -> None:
        cutoff = self.clock() - FORGET_AFTER_SECONDS
        with self._lock:
            for table in (self._writes, self._closes, self._moves, self._sources):
                for path in [p for p, t in table.items() if t < cutoff]:
                    del table[path]


def _mtime_age(absolute: Path, wall: Clock) -> float:
    try:
        return max(0.0, wall() - os.stat(absolute).st_mtime)
    except OSError:
        return float("inf")  # gone: the handler sees that


Signature = tuple[int, int]  # (size, mtime in ns)


def signature(absolute: str | Path) -> Signature | None:
    try:
        st = os.stat(absolute)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


class QuietPeriod:
    """Close events for an observer that has none, from created/modified/moved events alone.

    `touched` on every write hint; `settled()` then names the paths whose size and mtime have
    stood still for `quiet` seconds since (each once). A path that changed meanwhile waits
    another period; a path that is gone is dropped.
    """

    def __init__(self, quiet: float = QUIET_SECONDS, *, clock: Clock = time.monotonic) -> None:
        self.quiet = quiet
        self.clock = clock
        self._pending: dict[str, tuple[str, Signature | None, float]] = {}  # rel -> (absolute, seen, due)
        self._lock = threading.Lock()

    def touched(self, rel: str, absolute: str) -> None:
        seen = signature(absolute)
        with self._lock:
            self._pending[rel] = (absolute, seen, self.clock() + self.quiet)

    def forget(self, rel: str) -> None:
        """A real "complete" event came (a move): nothing to stand in for."""
        with self._lock:
            self._pending.pop(rel, None)

    def next_due(self) -> float | None:
        """The monotonic time of the next check (None: nothing pending)."""
        with self._lock:
            return min((due for _, _, due in self._pending.values()), default=None)

    def settled(self) -> list[str]:
        now = self.clock()
        with self._lock:
            due = [(rel, entry) for rel, entry in self._pending.items() if entry[2] <= now]
        quiet: list[str] = []
        for rel, entry in due:
            absolute, seen, _ = entry
            current = signature(absolute)  # outside the lock: a stat may be slow on a network drive
            with self._lock:
                if self._pending.get(rel) != entry:
                    continue  # touched again meanwhile: its new period stands
                if current is None:
                    del self._pending[rel]
                elif current == seen:
                    del self._pending[rel]
                    quiet.append(rel)
                else:
                    self._pending[rel] = (absolute, current, now + self.quiet)
        return quiet
