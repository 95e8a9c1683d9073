"""One daemon per vault: an OS file lock (through h0.platform.locks), which the OS drops when the
process dies.

Unlike a PID file it cannot go stale: after a crash the next `h0 watch` simply takes it.
The lock file (`.h0/daemon.lock` in the vault, a dot folder Obsidian ignores) carries no
data — on Windows a locked file cannot be read by others — so who holds it is written
beside it, in `.h0/daemon.json`, for `h0 status` and for the message the second `h0 watch`
prints. That note is believed only while the lock is held: a crashed daemon's leftover
note names nobody.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from h0.platform.fileio import atomic_write
from h0.platform.fs import read_regular
from h0.platform.locks import ProcessLock, held_elsewhere
from h0.vault.audit import iso, utcnow

# How long a starting daemon waits for the lock: long enough to outlast another process's
# probe (`h0 status` takes the lock for an instant), short enough to answer at once.
ACQUIRE_WAIT_SECONDS = 0.25


class AlreadyRunning(RuntimeError):
    def __init__(self, holder: dict[str, Any] | None) -> None:
        self.holder = holder or {}
        who = f"pid {self.holder.get('pid')}" if self.holder.get("pid") else "another process"
        since = f" since {self.holder['started']}" if self.holder.get("started") else ""
        super().__init__(f"another h0 daemon ({who}{since}) already watches this vault")


def lock_path(root: Path) -> Path:
    return Path(root) / ".h0" / "daemon.lock"


def holder_path(root: Path) -> Path:
    return Path(root) / ".h0" / "daemon.json"


class VaultLock:
    def __init__(self, root: Path) -> None:
        self.path = lock_path(root)
        self.holder_path = holder_path(root)
        self._lock: ProcessLock | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = ProcessLock(self.path)
        if not lock.try_acquire(wait=ACQUIRE_WAIT_SECONDS):
            raise AlreadyRunning(read_holder(self.holder_path))
        try:
            info = {"pid": os.getpid(), "host": socket.gethostname(), "started": iso(utcnow())}
            atomic_write(self.holder_path, json.dumps(info).encode(), mode=0o644, durable=False)
        except BaseException:
            lock.release()
            raise
        self._lock = lock

    def release(self) -> None:
        if self._lock is not None:
            try:
                os.unlink(self.holder_path)
            except OSError:
                pass
            self._lock.release()
            self._lock = None

    def reacquire(self) -> None:
        """After the vault folder was replaced, lock the new one (the old lock guards nothing)."""
        self.release()
        self.acquire()


def read_holder(path: Path) -> dict[str, Any] | None:
    try:
        text = read_regular(path, 65536).decode("utf-8", errors="replace")
        holder = json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def daemon_holder(root: Path) -> dict[str, Any] | None:
    """Who holds the vault's lock right now (None if no daemon runs; {} if one runs that has
    not said who it is yet)."""
    if not held_elsewhere(lock_path(root)):
        return None
    return read_holder(holder_path(root)) or {}
