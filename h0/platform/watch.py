"""Which watchdog observer watches the vault on this OS, and whether it reports closes.

`native`: inotify on Linux (asked for "full" events, and the only one that reports a close
after writing), FSEvents on macOS, ReadDirectoryChangesW on Windows. `polling`: watchdog's
polling observer on every OS — for network drives and sync folders, where native events do
not arrive, and the way this project runs the no-close-event semantics on Linux.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

NATIVE, POLLING = "native", "polling"
WATCHERS = (NATIVE, POLLING)
POLL_SECONDS = 0.5  # the polling observer's interval: what it adds to a send's latency, at most

ListDir = Callable[[str], Iterable[os.DirEntry[str]]]


def new_observer(kind: str = NATIVE, *, listdir: ListDir | None = None) -> tuple[Any, bool]:
    """(a new, unstarted observer, whether it reports close-after-write events).

    `listdir` (polling only) lists what the polling observer looks at in one folder: a
    poll stats every file it lists, so listing only what can matter keeps it cheap.
    """
    if kind not in WATCHERS:
        raise ValueError(f"unknown watcher {kind!r}: use one of {', '.join(WATCHERS)}")
    if kind == POLLING:
        from watchdog.observers.polling import PollingObserverVFS

        # watchdog annotates listdir as taking `str | None`; it only ever passes a folder's path.
        scan = cast("Callable[[str | None], Iterator[os.DirEntry[str]]]", listdir or os.scandir)
        return PollingObserverVFS(os.stat, scan, polling_interval=POLL_SECONDS), False
    if sys.platform.startswith("linux"):
        from h0.platform import inotify

        if inotify.available():
            return inotify.InotifyObserver(), True
        try:
            from watchdog.observers.inotify import InotifyObserver
        except (ImportError, OSError):
            pass
        else:
            # "Full" events: a note moved in from outside the vault arrives as a move (complete)
            # rather than a bare create.
            return InotifyObserver(generate_full_events=True), True
    from watchdog.observers import Observer  # FSEvents, ReadDirectoryChangesW, or watchdog's own fallback

    return Observer(), False


class TreeWatcher:
    """Every change under a folder, as paths: what the vault index needs to stay fresh.

    `on_paths(paths)` gets the files created, written, closed, moved (both ends) or deleted;
    `on_lost()` is called when a folder appears, moves or goes (its notes changed with it) and
    when the observer reports lost events (any warning from watchdog's observers: it has no
    event for that) — the listener then reconciles everything. Neither may raise into watchdog.
    """

    _WATCHDOG_LOGGERS = (
        "watchdog.observers.inotify_c",
        "watchdog.observers.inotify",
        "watchdog.observers.api",
        "h0.platform.inotify",
    )

    def __init__(
        self, root: str, on_paths: Callable[[list[str]], None], on_lost: Callable[[], None], *, kind: str = NATIVE
    ) -> None:
        import logging

        from watchdog.events import FileSystemEvent, FileSystemEventHandler

        self.root = root
        self.kind = kind

        class _Handler(FileSystemEventHandler):
            def dispatch(self, event: FileSystemEvent) -> None:
                with contextlib.suppress(Exception):  # an exception would kill watchdog's thread
                    if event.event_type in ("opened", "closed_no_write", "attrib"):
                        return
                    if event.is_directory:
                        if event.event_type != "modified":
                            on_lost()
                        return
                    paths = [os.fsdecode(event.src_path)]
                    dest = getattr(event, "dest_path", "")
                    if dest:
                        paths.append(os.fsdecode(dest))
                    on_paths(paths)

        class _Lost(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                with contextlib.suppress(Exception):  # never into watchdog's thread
                    on_lost()

        self._handler = _Handler()
        self._lost = _Lost(logging.WARNING)
        self._observer: Any = None
        self._logging = logging

    def start(self) -> TreeWatcher:
        from watchdog import events as ev

        observer, reports_closes = new_observer(self.kind)
        # Only what changes a note: not opens, reads and access times (a `rg` over a 10,000-note vault
        # is 20,000 of those, each an event in Python). Where closes are reported (inotify), a write
        # is its close; elsewhere a modification is the only word of a write.
        wanted = [
            ev.FileCreatedEvent,
            ev.FileMovedEvent,
            ev.FileDeletedEvent,
            ev.DirCreatedEvent,
            ev.DirMovedEvent,
            ev.DirDeletedEvent,
            ev.FileClosedEvent if reports_closes else ev.FileModifiedEvent,
        ]
        observer.schedule(self._handler, self.root, recursive=True, event_filter=wanted)
        observer.daemon = True
        for name in self._WATCHDOG_LOGGERS:
            self._logging.getLogger(name).addHandler(self._lost)
        observer.start()
        self._observer = observer
        return self

    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive()

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        for name in self._WATCHDOG_LOGGERS:
            self._logging.getLogger(name).removeHandler(self._lost)
        if observer is not None:
            with contextlib.suppress(Exception):  # a dead observer may fail to stop cleanly
                observer.stop()
                observer.join(5)
