"""Watch the vault with one recursive watchdog observer and turn events into queued paths.

One watch on the vault root, filtered here to the trigger folders — not one watch per
folder: watchdog gives each watch its own inotify instance and holds an unpaired "moved
from" for ~0.5 s waiting for its partner, which would delay every approval after the
first (ARCHITECTURE.md: p50 380 ms vs 7 ms).

A moved-in or close-after-write event means "complete and in place: look now". A bare
create or modify is only a hint: the path is queued after a stability window, and the
pipeline checks the file has settled before acting. The callback only enqueues and can
never raise: an exception would kill the observer thread.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from loguru import logger
from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from h0.pipeline.settle import STABILITY_SECONDS
from h0.vault.approval import ApprovalFolder, is_note_name
from h0.vault.layout import APPROVED, DRAFTS, NEEDS_ACTION, REJECTED
from h0.vault.paths import folder_key, nfc

TRIGGER_FOLDERS = {folder_key(name): name for name in (APPROVED, NEEDS_ACTION, REJECTED, DRAFTS)}

# (vault-relative path, kind, delay). kind: "moved" (renamed in from another folder: the human's
# drag), "closed" (complete, but written in place: a close after writing, or an atomic save
# renamed within the folder), "written" (a bare create/modify: only a hint).
OnPath = Callable[[str, str, float], None]
MOVED, CLOSED, WRITTEN = "moved", "closed", "written"


def trigger_path(root: str, absolute: str, approval: ApprovalFolder) -> str | None:
    """The canonical vault-relative path if `absolute` is a note directly in a trigger folder.

    Folders are matched by name (`folder_key`), without a system call, except Approved/:
    there `approval.is_approval_note` decides — the definition the sweep lists by — so a
    separate `approved/` folder on a case-sensitive file system triggers no send.
    """
    folder_path, name = os.path.split(absolute)
    parent, folder = os.path.split(folder_path)
    if parent != root or not is_note_name(name):
        return None
    canonical = TRIGGER_FOLDERS.get(folder_key(folder))
    if canonical is None:
        return None
    if canonical == APPROVED:
        return approval.note_rel(name) if approval.is_approval_note(absolute) else None
    return f"{canonical}/{nfc(name)}" if folder == canonical else f"{folder}/{nfc(name)}"


class _Events(FileSystemEventHandler):
    def __init__(self, root: str, on_path: OnPath) -> None:
        self.root = root
        self.approval = ApprovalFolder(root)
        self.on_path = on_path

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
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
                rel = trigger_path(self.root, path, self.approval)
                if rel is not None:
                    self.on_path(rel, kind, STABILITY_SECONDS if kind == WRITTEN else 0.0)
        except Exception:  # noqa: BLE001 - never let an exception reach watchdog's thread
            logger.exception("watcher callback failed for {}", event)


class _OverflowDetector(logging.Handler):
    """watchdog only logs a warning when the kernel's inotify queue overflows: catch it."""

    def __init__(self, callback: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if "overflow" in record.getMessage().lower():
                self.callback()
        except Exception:  # noqa: BLE001
            pass


# No event_filter: asking inotify only for moves/closes/creates saved ~5% CPU in a triage
# burst but, measured with scripts/bench/bench_pipeline.py, put ~0.5 s on a tenth of all
# approvals (watchdog then holds some moves for their partner). Latency wins.

_WATCHDOG_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")


def _new_observer():
    """On Linux, ask for "full" events: a note moved in from outside the vault then arrives
    as a move (complete) rather than a bare create (which would wait for a close that never
    comes)."""
    if sys.platform.startswith("linux"):
        from watchdog.observers.inotify import InotifyObserver

        return InotifyObserver(generate_full_events=True)
    return Observer()


class VaultWatcher:
    """The observer for one vault root, restartable when its thread dies or the root is replaced."""

    def __init__(self, root: Path, on_path: OnPath, on_overflow: Callable[[], None]) -> None:
        self.root = Path(os.path.abspath(root))
        self.on_path = on_path
        self._detector = _OverflowDetector(on_overflow)
        self._observer: Observer | None = None
        self._identity: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            for name in _WATCHDOG_LOGGERS:
                logging.getLogger(name).addHandler(self._detector)
            observer = _new_observer()
            observer.schedule(_Events(str(self.root), self.on_path), str(self.root), recursive=True)
            observer.daemon = True
            observer.start()
            self._observer = observer
            self._identity = self.current_identity()

    def stop(self) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
            for name in _WATCHDOG_LOGGERS:
                logging.getLogger(name).removeHandler(self._detector)
        if observer is not None:
            try:
                observer.stop()
                observer.join(5)
            except Exception:  # noqa: BLE001 - a dead observer may fail to stop cleanly
                pass

    def current_identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def healthy(self) -> tuple[bool, str]:
        """(ok, reason): the observer thread is alive and still watches the same root folder."""
        observer = self._observer
        if observer is None:
            return False, "not started"
        if not observer.is_alive():
            return False, "the observer thread died"
        identity = self.current_identity()
        if identity is None:
            return False, "the vault folder is gone"
        if identity != self._identity:
            return False, "the vault folder was replaced"
        return True, ""
