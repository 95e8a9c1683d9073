"""File locks on every OS, through `filelock`: flock on Linux and macOS, LockFileEx on Windows.

Two kinds, both released by the OS when the process dies (no stale lock after a crash):
`appending(fd)` serialises writers of one open file (the audit log's lines), and
`ProcessLock` is a lock file held for a process's lifetime (one daemon per vault).
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

from filelock import FileLock, Timeout, lock_descriptor, unlock_descriptor

# Threads of one process wait on a threading lock (woken at once) rather than polling the OS
# lock; other processes poll it this often, which only matters under cross-process contention.
_CROSS_PROCESS_POLL_SECONDS = 0.002
_in_process: dict[str, threading.Lock] = {}
_in_process_guard = threading.Lock()


def _thread_lock(key: str) -> threading.Lock:
    with _in_process_guard:
        lock = _in_process.get(key)
        if lock is None:
            lock = _in_process[key] = threading.Lock()
        return lock


@contextmanager
def appending(fd: int, key: str) -> Iterator[None]:
    """Hold the exclusive lock of the open file `fd` (named `key`, e.g. its path) for one append.

    Threads queue on a per-file threading lock; processes contend on the OS lock of the file.
    (On Windows the OS lock covers byte 0 and is mandatory: keep the hold to one write.)
    """
    with _thread_lock(key):
        try:
            lock_descriptor(fd, poll_interval=_CROSS_PROCESS_POLL_SECONDS)
        except OSError as exc:
            if exc.errno != errno.ENOSYS:
                raise
            # A POSIX Python without fcntl (no OS lock at all): one write() on an O_APPEND
            # descriptor is still never interleaved there; threads stay queued above.
            yield
            return
        try:
            yield
        finally:
            unlock_descriptor(fd)


class ProcessLock:
    """An exclusive lock file, held until `release()` or the process's end.

    The lock file carries no data: on Windows its locked byte cannot be read by others, so
    whoever wants to say who holds it writes that beside it. A held lock keeps itself alive:
    dropping the last reference to it does not let it go (filelock would, on collection).
    """

    _held: ClassVar[set[ProcessLock]] = set()
    _held_guard = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        # Not thread-local: a daemon may take it in one thread and give it back in another.
        # No soft-lock fallback: a marker file would outlive a crash; refuse instead.
        self._lock = FileLock(self.path, thread_local=False, fallback_to_soft=False)

    def try_acquire(self, wait: float = 0.0) -> bool:
        """Take it (waiting up to `wait` seconds); False if another process or object holds it."""
        try:
            self._lock.acquire(timeout=wait, poll_interval=0.01)
        except Timeout:
            return False
        with self._held_guard:
            self._held.add(self)
        return True

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release(force=True)
        with self._held_guard:
            self._held.discard(self)

    @property
    def held(self) -> bool:
        return self._lock.is_locked


def held_elsewhere(path: Path) -> bool:
    """Whether some other lock object (any process) holds the lock file `path` right now.

    A probe takes the lock for an instant; a daemon starting at that instant waits for it
    (`try_acquire(wait=…)`) instead of being refused.
    """
    if not os.path.exists(path):
        return False
    probe = ProcessLock(path)
    if probe.try_acquire():
        probe.release()
        return False
    return True
