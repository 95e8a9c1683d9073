"""How a process is asked to stop, whether another one is alive, and how it may talk over stdio, on each OS.

Stop: Ctrl-C everywhere; SIGTERM on POSIX (what systemd, launchd and `kill` send);
Ctrl-Break on Windows (SIGTERM cannot be sent to a Windows process, and Ctrl-C is often
swallowed by the console host). stdio: H0's MCP servers read and write their pipes on the
event loop itself (no worker thread per line) where that is safe: POSIX pipes and sockets,
and on Linux (epoll) terminals too. Windows' proactor loop cannot attach to the console or
to anonymous pipes, and macOS's kqueue not to terminals: there the SDK's own transport runs.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
from collections.abc import Callable

import psutil


def stop_signals() -> tuple[signal.Signals, ...]:
    """The signals that mean "finish in-flight work, then stop" here."""
    if sys.platform == "win32":
        return (signal.SIGINT, signal.SIGBREAK)
    return (signal.SIGINT, signal.SIGTERM)


def on_stop_signals(callback: Callable[[str], None]) -> None:
    """Call `callback(signal name)` on each stop signal (install from the main thread)."""

    def handler(signum: int, _frame: object) -> None:
        callback(signal.Signals(signum).name)

    for sig in stop_signals():
        signal.signal(sig, handler)


def process_alive(pid: object) -> bool:
    """Whether a process with this id runs (psutil: a real probe on every OS — on Windows
    `os.kill(pid, 0)` would not probe but terminate it)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < 2**31:
        return False  # a pid read from a database row is data: nothing outside a pid's range
    return bool(psutil.pid_exists(pid))


def thread_free_stdio(fds: tuple[int, ...] = (0, 1)) -> bool:
    """Whether `fds` (stdin, stdout) can be served as asyncio pipes, without reader threads."""
    if os.name != "posix":
        return False
    terminals_ok = sys.platform.startswith("linux")
    for fd in fds:
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            return False
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (terminals_ok and stat.S_ISCHR(mode))):
            return False  # e.g. stdin redirected from a file
    return True
