"""Which watchdog observer watches the vault on this OS, and the rules every watcher of the vault shares.

`native`: watchdog's inotify observer on Linux (asked for "full" events, so a note moved in from
outside the vault is a move, not a bare create; the only observer that reports a close after
writing), FSEvents on macOS, ReadDirectoryChangesW on Windows. `polling`: watchdog's polling
observer on every OS — for network drives and sync folders, where native events do not arrive, and
the way this project runs the no-close-event semantics on Linux. H0 reads no OS events itself.

What every watcher here does the same way:
- one recursive watch on the vault root (`watch_tree`), symlinks below it never followed;
- the callback drops the events of atomic writes' temp files first (`only_temp`): nothing acts on
  them, and their rename into place is still reported, as a move from the temp name;
- lost events become one call (`LostEvents`): watchdog has no event type for them; its inotify
  observer logs a warning when the kernel's queue overflowed ("Inotify queue overflowed; filesystem
  events were lost", then it rebuilds its watches), and the listener then reconciles everything;
- an observer is alive only while its thread and its emitters' threads are (`observer_alive`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, cast

from h0.platform.fileio import is_temp_name

if TYPE_CHECKING:
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers.api import BaseObserver

NATIVE, POLLING = "native", "polling"
WATCHERS = (NATIVE, POLLING)
POLL_SECONDS = 0.5  # the polling observer's interval: what it adds to a send's latency, at most

ListDir = Callable[[str], Iterable[os.DirEntry[str]]]

# Where watchdog's observers say that events were lost (by the record's logger and level, never its text).
LOST_EVENT_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")


def new_observer(kind: str = NATIVE, *, listdir: ListDir | None = None) -> tuple[BaseObserver, bool]:
    """(a new, unstarted observer, whether it reports close-after-write events).

    `listdir` (polling only) lists what the polling observer looks at in one folder: a
    poll stats every file it lists, so listing only what can matter keeps it cheap.
    Raises OSError when the OS has no watch left to give (inotify's instance limit).
    """
    if kind not in WATCHERS:
        raise ValueError(f"unknown watcher {kind!r}: use one of {', '.join(WATCHERS)}")
    if kind == POLLING:
        from watchdog.observers.polling import PollingObserverVFS

        # watchdog annotates listdir as taking `str | None`; it only ever passes a folder's path.
        scan = cast("Callable[[str | None], Iterator[os.DirEntry[str]]]", listdir or os.scandir)
        return PollingObserverVFS(os.stat, scan, polling_interval=POLL_SECONDS), False
    if sys.platform.startswith("linux"):
        try:
            from watchdog.observers.inotify import InotifyObserver
        except (ImportError, OSError):
            pass
        else:
            return InotifyObserver(generate_full_events=True), True
    from watchdog.observers import Observer  # FSEvents, ReadDirectoryChangesW, or watchdog's own fallback

    return Observer(), False


def watch_tree(
    observer: BaseObserver,
    handler: FileSystemEventHandler,
    root: str,
    event_filter: list[type[FileSystemEvent]],
    *,
    reports_closes: bool,
) -> None:
    """Schedule the one recursive watch on `root` (symlinks below it are never followed).

    A vault reached through a symlink is watched at its target yet reported under the path it was
    given: inotify, told not to follow symlinks, would otherwise watch the link itself and miss
    every change at the vault's top level (new notes there, a trigger folder made after start). A
    path ending in a separator always resolves to the folder (POSIX path resolution).
    """
    if reports_closes and os.path.islink(root):
        root = os.path.join(root, "")
    observer.schedule(handler, root, recursive=True, event_filter=event_filter, follow_symlink=False)


def only_temp(event: FileSystemEvent) -> bool:
    """Whether `event` is only about an atomic write's temp file (h0.platform.fileio): its create,
    writes, close or delete. A move is never one: a temp file renamed into place is the note."""
    if event.event_type == "moved":
        return False
    path = event.src_path
    return is_temp_name(os.path.basename(path if isinstance(path, str) else os.fsdecode(path)))


def observer_alive(observer: BaseObserver | None) -> bool:
    """Whether `observer` still delivers events: its dispatching thread and every emitter's thread run
    (watchdog's inotify emitter stops by itself when the watched folder goes)."""
    if observer is None or not observer.is_alive():
        return False
    return all(emitter.is_alive() for emitter in observer.emitters)


class LostEvents(logging.Handler):
    """`callback()` whenever a watchdog observer says events were lost (any warning or error on
    LOST_EVENT_LOGGERS). `attach` before starting the observer, `detach` after stopping it."""

    def __init__(self, callback: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # a logging handler must never raise into watchdog's thread
            self.callback()

    def attach(self) -> None:
        for name in LOST_EVENT_LOGGERS:
            logging.getLogger(name).addHandler(self)

    def detach(self) -> None:
        for name in LOST_EVENT_LOGGERS:
            logging.getLogger(name).removeHandler(self)


def stop_observer(observer: BaseObserver | None) -> None:
    """Stop and join an observer, started or not (watchdog's inotify observer reads from its creation)."""
    if observer is None:
        return
    with contextlib.suppress(Exception):  # a dead observer may fail to stop cleanly
        observer.stop()
        if observer.is_alive():
            observer.join(5)


class TreeWatcher:
    """Every change under a folder, as paths: what the vault index needs to stay fresh.

    `on_paths(paths)` gets the files created, written, closed, moved (both ends, but never a temp
    name) or deleted; `on_lost()` is called when a folder appears, moves or goes (its notes changed
    with it) and when the observer reports lost events — the listener then reconciles everything.
    Neither may raise into watchdog.
    """

    def __init__(
        self, root: str, on_paths: Callable[[list[str]], None], on_lost: Callable[[], None], *, kind: str = NATIVE
    ) -> None:
        from watchdog.events import FileSystemEventHandler

        self.root = root
        self.kind = kind

        class _Handler(FileSystemEventHandler):
            def dispatch(self, event: FileSystemEvent) -> None:
                with contextlib.suppress(Exception):  # an exception would kill watchdog's thread
                    if event.event_type in ("opened", "closed_no_write", "attrib") or only_temp(event):
                        return
                    if event.is_directory:
                        if event.event_type != "modified":
                            on_lost()
                        return
                    ends = [event.src_path, getattr(event, "dest_path", "")]
                    paths = [p for p in map(os.fsdecode, ends) if p and not is_temp_name(os.path.basename(p))]
                    if paths:
                        on_paths(paths)

        self._handler = _Handler()
        self._lost = LostEvents(on_lost)
        self._observer: BaseObserver | None = None

    def start(self) -> TreeWatcher:
        from watchdog import events as ev

        observer, reports_closes = new_observer(self.kind)
        # Only what changes a note: not opens, reads and access times (a `rg` over a 10,000-note vault
        # is 20,000 of those, each an event in Python). Where closes are reported (inotify), a write
        # is its close; elsewhere a modification is the only word of a write.
        wanted: list[type[FileSystemEvent]] = [
            ev.FileCreatedEvent,
            ev.FileMovedEvent,
            ev.FileDeletedEvent,
            ev.DirCreatedEvent,
            ev.DirMovedEvent,
            ev.DirDeletedEvent,
            ev.FileClosedEvent if reports_closes else ev.FileModifiedEvent,
        ]
        self._lost.attach()
        try:
            watch_tree(observer, self._handler, self.root, wanted, reports_closes=reports_closes)
            observer.start()
        except BaseException:
            self._lost.detach()
            stop_observer(observer)
            raise
        self._observer = observer
        return self

    def alive(self) -> bool:
        return observer_alive(self._observer)

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        self._lost.detach()
        stop_observer(observer)
