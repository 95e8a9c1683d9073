"""One daemon per vault: an OS file lock (flock), which the kernel drops when the process dies.

Unlike a PID file it cannot go stale. The lock file (`.h0/daemon.lock` in the vault, a
dot folder Obsidian ignores) also records who holds it, for `h0 status` and for the
message the second `h0 watch` prints.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from pathlib import Path
from typing import Any

from h0.vault.audit import iso, utcnow


class AlreadyRunning(RuntimeError):
    def __init__(self, holder: dict[str, Any] | None) -> None:
        self.holder = holder or {}
        who = f"pid {self.holder.get('pid')}" if self.holder.get("pid") else "another process"
        since = f" since {self.holder['started']}" if self.holder.get("started") else ""
        super().__init__(f"another h0 daemon ({who}{since}) already watches this vault")


def lock_path(root: Path) -> Path:
    return Path(root) / ".h0" / "daemon.lock"


class VaultLock:
    def __init__(self, root: Path) -> None:
        self.path = lock_path(root)
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise AlreadyRunning(read_holder(self.path)) from None
        info = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": iso(utcnow())})
        os.ftruncate(fd, 0)
        os.pwrite(fd, info.encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
            except OSError:
                pass
            os.close(self._fd)
            self._fd = None

    def reacquire(self) -> None:
        """After the vault folder was replaced, lock the new one (the old lock guards nothing)."""
        self.release()
        self.acquire()


def read_holder(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text()
        return json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        return None


def daemon_holder(root: Path) -> dict[str, Any] | None:
    """Who holds the vault's lock right now (None if no daemon runs)."""
    path = lock_path(root)
    if not path.exists():
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return read_holder(path) or {}
    finally:
        os.close(fd)
    return None
