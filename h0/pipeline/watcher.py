"""Watch the vault with one recursive watchdog observer and turn events into queued paths.

One watch on the vault root, filtered here to the trigger folders — not one watch per
folder: watchdog gives each watch its own inotify instance and holds an unpaired "moved
from" for ~0.5 s waiting for its partner, which would delay every approval after the
first (ARCHITECTURE.md: p50 380 ms vs 7 ms).

A moved-in or close-after-write event means "complete and in place: look now". A bare
create or modify is only a hint: the path is queued after a stability window, and the
pipeline checks the file has settled before acting. The callback only enqueues and can
never raise: an exception would kill the observer thread.

The observer is watchdog's on every OS (h0.platform.watch); the events of atomic writes' temp
files are dropped first thing in the callback. Only inotify reports closes. With any other
observer (FSEvents, ReadDirectoryChangesW, `H0_WATCHER=polling`) a small timer thread stands in
for them: a written note is reported "closed" once its size and mtime have been quiet for a
moment (settle.QuietPeriod, on the clock the daemon gives). The polling observer lists only
the trigger folders, so its cost is theirs, not the vault's. Paths are handled with os.path
throughout: the separator is the OS's.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from loguru import logger
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileClosedNoWriteEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileOpenedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver

from h0.pipeline import routes
from h0.pipeline.settle import CLOSED, MOVED, STABILITY_SECONDS, WRITTEN, Clock, QuietPeriod
from h0.platform.watch import NATIVE, LostEvents, new_observer, observer_alive, only_temp, stop_observer, watch_tree
from h0.vault.approval import ApprovalFolder, is_note_name
from h0.vault.layout import APPROVED
from h0.vault.paths import folder_key, nfc

# The folders the routing table has work in (h0.pipeline.routes), by the key the vault compares names by.
TRIGGER_FOLDERS = {folder_key(name): name for name in routes.TRIGGER_FOLDERS}

# (vault-relative path, kind, delay, source). kind: "moved" (renamed in from another folder: the
# human's drag), "closed" (complete, but written in place: a close after writing, or an atomic save
# renamed within the folder), "written" (a bare create/modify: only a hint). source: for "moved",
# the trigger-folder path it came from (None if it came from elsewhere).
# The kinds are the settle tracker's (h0.pipeline.settle), which records them.
OnPath = Callable[[str, str, float, str | None], None]
# Any note of the vault changed (its absolute path), or None: any may have (a folder moved, events lost).
OnNote = Callable[[str | None], None]


def trigger_path(root: str | frozenset[str], absolute: str, approval: ApprovalFolder) -> str | None:
    """The canonical vault-relative path if `absolute` is a note directly in a trigger folder.

    `root` is the vault root, or the set of its spellings (`root_spellings`). Folders are
    matched by name (`folder_key`), without a system call, except Approved/: there
    `approval.is_approval_note` decides — the definition the sweep lists by — so a separate
    `approved/` folder on a case-sensitive file system triggers no send.
    """
    folder_path, name = os.path.split(absolute)
    parent, folder = os.path.split(folder_path)
    roots = root if isinstance(root, frozenset) else root_spellings(root)
    if os.path.normcase(parent) not in roots or not is_note_name(name):
        return None
    canonical = TRIGGER_FOLDERS.get(folder_key(folder))
    if canonical is None:
        return None
    if canonical == APPROVED:
        return approval.note_rel(name) if approval.is_approval_note(absolute) else None
    return f"{canonical}/{nfc(name)}" if folder == canonical else f"{folder}/{nfc(name)}"


def root_spellings(root: str) -> frozenset[str]:
    """The vault root as events may name it: as given, and resolved (FSEvents reports real
    paths, e.g. /private/var/… for /var/…), in the OS's case convention."""
    return frozenset(os.path.normcase(p) for p in (root, os.path.realpath(root)))


def _polling_listdir(root: str) -> Callable[[str], list[os.DirEntry[str]]]:
    """What the polling observer lists: the trigger folders at the root, and the notes directly
    in them — not the rest of a 10,000-note vault, which can never trigger anything."""

    def listdir(path: str) -> list[os.DirEntry[str]]:
        if path == root:
            with os.scandir(path) as entries:
                return [e for e in entries if folder_key(e.name) in TRIGGER_FOLDERS and e.is_dir()]
        if os.path.dirname(path) == root:
            with os.scandir(path) as entries:
                return [e for e in entries if not e.name.startswith(".") and not e.is_dir()]
        return []

    return listdir


class _Events(FileSystemEventHandler):
    def __init__(
        self,
        root: str,
        on_path: OnPath,
        quiet: QuietPeriod | None = None,
        wake: Callable[[], None] | None = None,
        on_note: OnNote | None = None,
    ) -> None:
        self.root = root
        self.roots = root_spellings(root)
        self.approval = ApprovalFolder(root)
        self.on_path = on_path
        self.quiet = quiet  # None: the observer reports closes itself
        self.wake = wake
        self.on_note = on_note

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            if only_temp(event):
                return  # an atomic write's temp file: its rename into place is the event that counts
            if self.on_note is not None:
                self._note_event(event, self.on_note)
            if event.is_directory:
                return
            if isinstance(event, FileMovedEvent):
                destination = os.fsdecode(event.dest_path)
                source = os.fsdecode(event.src_path) if event.src_path else ""
                same_folder = bool(source) and os.path.dirname(source) == os.path.dirname(destination)
                candidates = [(destination, CLOSED if same_folder else MOVED)]
            elif isinstance(event, FileClosedEvent):
                candidates = [(os.fsdecode(event.src_path), CLOSED)]
            elif isinstance(event, (FileCreatedEvent, FileModifiedEvent)):
                candidates = [(os.fsdecode(event.src_path), WRITTEN)]
            else:
                return
            for path, kind in candidates:
                rel = trigger_path(self.roots, path, self.approval)
                if rel is None:
                    continue
                came_from = trigger_path(self.roots, source, self.approval) if kind == MOVED and source else None
                if self.quiet is not None:
                    if kind == WRITTEN:
                        self.quiet.touched(rel, path)
                        if self.wake is not None:
                            self.wake()
                    elif kind == MOVED:
                        self.quiet.forget(rel)
                self.on_path(rel, kind, STABILITY_SECONDS if kind == WRITTEN else 0.0, came_from)
        except Exception:  # noqa: BLE001 - never let an exception reach watchdog's thread
            logger.exception("watcher callback failed for {}", event)

    @staticmethod
    def _note_event(event: FileSystemEvent, on_note: OnNote) -> None:
        """Any note anywhere in the vault written, moved or deleted (None: a folder moved or went, so
        any note may have): what keeps the drafting index fresh. Opens and attribute changes are not."""
        if isinstance(event, (FileOpenedEvent, FileClosedNoWriteEvent, FileAttribEvent)):
            return
        if event.is_directory:
            if isinstance(event, (DirMovedEvent, DirDeletedEvent)):
                on_note(None)
            return
        paths = [event.src_path] + ([event.dest_path] if isinstance(event, FileMovedEvent) else [])
        for raw in paths:
            path = os.fsdecode(raw) if raw else ""
            if path.endswith(".md"):
                on_note(path)


# What the kernel is asked for: every kind of event `_Events` acts on (creates, writes, closes after
# writing, moves, deletes; a modification still says "being written again", h0.pipeline.settle), never
# opens and closes after reading, which it drops. In a triage burst every read of a note by any process
# (the daemon's, the vault server's, the indexes') was two such events for watchdog's Python to parse,
# group and drop: 27 of the 37 events a note cost. An earlier round had dropped a narrower filter
# because ~a tenth of approvals then waited ~0.5 s (watchdog holding an unpaired "moved from" at the
# head of its queue); re-measured with bench_pipeline.py --only latency on watchdog 7: docs/benchmarks.md.
EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]


class _QuietTimer(threading.Thread):
    """Reports each written note "closed" once it has been quiet (observers without close events)."""

    def __init__(self, quiet: QuietPeriod, on_path: OnPath) -> None:
        super().__init__(name="h0-quiet-period", daemon=True)
        self.quiet = quiet
        self.on_path = on_path
        self._wake = threading.Condition()
        self._stopped = False

    def wake(self) -> None:
        with self._wake:
            self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()

    def run(self) -> None:
        while True:
            with self._wake:
                if self._stopped:
                    return
                due = self.quiet.next_due()
                # On the quiet period's own clock: a test that moves it wakes the timer within one period.
                wait = None if due is None else min(due - self.quiet.clock(), self.quiet.quiet)
                if wait is None or wait > 0:
                    self._wake.wait(wait)
                    continue
            try:
                for rel in self.quiet.settled():
                    self.on_path(rel, CLOSED, 0.0, None)
            except Exception:  # noqa: BLE001 - the stand-in for close events must outlive one bad note
                logger.exception("quiet-period check failed")


class VaultWatcher:
    """The observer for one vault root, restartable when its thread dies or the root is replaced.

    `kind`: `native` (the OS's own events) or `polling` (H0_WATCHER, h0.platform.watch). `clock`:
    the monotonic clock the quiet period runs on (observers without close events), the daemon's.
    """

    def __init__(
        self,
        root: Path,
        on_path: OnPath,
        on_overflow: Callable[[], None],
        *,
        kind: str = NATIVE,
        on_note: OnNote | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.on_path = on_path
        self.on_note = on_note
        self.kind = kind
        self.clock = clock
        self._lost = LostEvents(on_overflow)
        self._observer: BaseObserver | None = None
        self._timer: _QuietTimer | None = None
        self._identity: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            root = str(self.root)
            observer, reports_closes = new_observer(self.kind, listdir=_polling_listdir(root))
            timer = None if reports_closes else _QuietTimer(QuietPeriod(clock=self.clock), self.on_path)
            events = _Events(
                root,
                self.on_path,
                timer.quiet if timer else None,
                timer.wake if timer else None,
                self.on_note if self.kind == NATIVE else None,
            )
            self._lost.attach()
            if timer is not None:
                timer.start()
            try:
                watch_tree(observer, events, root, EVENT_FILTER, reports_closes=reports_closes)
                observer.start()  # the watches are in place when this returns
            except BaseException:
                if timer is not None:
                    timer.stop()
                self._lost.detach()
                stop_observer(observer)
                raise
            self._observer, self._timer = observer, timer
            self._identity = self.current_identity()

    @property
    def reports_closes(self) -> bool:
        return self._observer is not None and self._timer is None

    @property
    def observer(self) -> BaseObserver | None:
        """The running observer (None when stopped): which one this OS gave (its class: watchdog's
        `InotifyObserver` on Linux, `PollingObserverVFS`, …), and the threads `healthy()` watches
        (its own and its emitters') — a test rehearsing their death stops them (`stop`, `join`)."""
        return self._observer

    def stop(self) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
            timer, self._timer = self._timer, None
            self._lost.detach()
        if timer is not None:
            timer.stop()
        stop_observer(observer)

    def current_identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def healthy(self) -> tuple[bool, str]:
        """(ok, reason): the observer's threads are alive and it still watches the same root folder."""
        observer = self._observer
        if observer is None:
            return False, "not started"
        if not observer_alive(observer):
            return False, "the observer thread died"
        identity = self.current_identity()
        if identity is None:
            return False, "the vault folder is gone"
        if identity != self._identity:
            return False, "the vault folder was replaced"
        return True, ""
