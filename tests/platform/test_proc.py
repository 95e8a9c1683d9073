"""Stop signals and the stdio transport, per OS."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from h0.platform.proc import on_stop_signals, process_alive, stop_signals, thread_free_stdio


def test_the_stop_signals_are_the_ones_this_os_sends():
    if sys.platform == "win32":
        assert stop_signals() == (signal.SIGINT, signal.SIGBREAK)
    else:
        assert stop_signals() == (signal.SIGINT, signal.SIGTERM)


@pytest.mark.skipif(sys.platform == "win32", reason="os.kill(SIGTERM) terminates a Windows process outright")
def test_given_the_handlers_when_sigterm_arrives_then_the_callback_hears_its_name():
    heard: list[str] = []
    saved = {sig: signal.getsignal(sig) for sig in stop_signals()}
    try:
        on_stop_signals(heard.append)
        os.kill(os.getpid(), signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    assert heard == ["SIGTERM", "SIGINT"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX pipes")
def test_the_thread_free_stdio_serves_pipes_but_not_files(tmp_path: Path):
    read_end, write_end = os.pipe()
    with open(tmp_path / "input.txt", "w") as regular:
        try:
            assert thread_free_stdio((read_end, write_end)) is True
            assert thread_free_stdio((regular.fileno(), write_end)) is False  # `h0 mcp vault < file`
        finally:
            os.close(read_end)
            os.close(write_end)
    assert thread_free_stdio((987654,)) is False  # not open at all


def test_process_alive_probes_without_touching_the_process():
    """psutil, not os.kill(pid, 0), which on Windows terminates the process it should probe."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert process_alive(os.getpid()) is True
    assert process_alive(child.pid) is False  # exited and reaped
    for hostile in (0, -1, True, "1", None, 1.5, 2**40):
        assert process_alive(hostile) is False
