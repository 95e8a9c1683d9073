"""Is a file complete? Track, per path, the last write hint and the last "complete" event.

A moved-in or close-after-write event marks a path complete. A create or modify event
after that means someone is writing it again. A path with a write newer than its last
close is still open for writing — H0 waits (the note may be half-written) until the
writer closes it, or until nothing has touched it for WRITER_GONE_SECONDS (filesystems
that never report closes). Without any event (found by the sweep), a file counts as
complete once its mtime is STABILITY_SECONDS old.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

STABILITY_SECONDS = 0.5
WRITER_GONE_SECONDS = 30.0
FORGET_AFTER_SECONDS = 120.0


class SettleTracker:
    def __init__(self) -> None:
        self._writes: dict[str, float] = {}
        self._closes: dict[str, float] = {}
        self._lock = threading.Lock()

    def wrote(self, path: str) -> None:
        with self._lock:
            self._writes[path] = time.monotonic()

    def completed(self, path: str) -> None:
        with self._lock:
            self._closes[path] = time.monotonic()

    def wait_for(self, path: str, absolute: Path) -> float:
        """Seconds to wait before acting on `path` (0: act now)."""
        now = time.monotonic()
        with self._lock:
            wrote = self._writes.get(path)
            closed = self._closes.get(path)
        if wrote is not None and (closed is None or wrote > closed):
            quiet = now - wrote
            return 0.0 if quiet >= WRITER_GONE_SECONDS else min(STABILITY_SECONDS, WRITER_GONE_SECONDS - quiet)
        if closed is not None:
            return 0.0
        try:
            age = time.time() - os.stat(absolute).st_mtime
        except OSError:
            return 0.0  # gone: the handler sees that
        return max(0.0, STABILITY_SECONDS - age)

    def forget_old(self) -> None:
        cutoff = time.monotonic() - FORGET_AFTER_SECONDS
        with self._lock:
            for table in (self._writes, self._closes):
                for path in [p for p, t in table.items() if t < cutoff]:
                    del table[path]
