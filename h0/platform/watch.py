"""Which watchdog observer watches the vault on this OS, and whether it reports closes.

`native`: inotify on Linux (asked for "full" events, and the only one that reports a close
after writing), FSEvents on macOS, ReadDirectoryChangesW on Windows. `polling`: watchdog's
polling observer on every OS — for network drives and sync folders, where native events do
not arrive, and the way this project runs the no-close-event semantics on Linux.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

NATIVE, POLLING = "native", "polling"
WATCHERS = (NATIVE, POLLING)
POLL_SECONDS = 0.5  # the polling observer's interval: what it adds to a send's latency, at most

ListDir = Callable[[str], Iterable[os.DirEntry]]


def new_observer(kind: str = NATIVE, *, listdir: ListDir | None = None) -> tuple[Any, bool]:
    """(a new, unstarted observer, whether it reports close-after-write events).

    `listdir` (polling only) lists what the polling observer looks at in one folder: a
    poll stats every file it lists, so listing only what can matter keeps it cheap.
    """
    if kind not in WATCHERS:
        raise ValueError(f"unknown watcher {kind!r}: use one of {', '.join(WATCHERS)}")
    if kind == POLLING:
        from watchdog.observers.polling import PollingObserverVFS

        return PollingObserverVFS(os.stat, listdir or os.scandir, polling_interval=POLL_SECONDS), False
    if sys.platform.startswith("linux"):
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
