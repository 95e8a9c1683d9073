"""The `linux_only` marker: tests that need inotify (its close-after-write event) or /proc.

Its hooks are imported by tests/conftest.py, so every run (`pytest` or `python -m pytest`) and the CI
matrix (.github/workflows/ci.yml) runs the same command on Linux, macOS and Windows and
these are skipped, with their reason, where they cannot run. Tests elsewhere in the suite
that need Linux are named here, in one visible place, rather than edited one by one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

LINUX = sys.platform.startswith("linux")

# node id (a file, or file::test) -> why it needs Linux
LINUX_ONLY: dict[str, str] = {
    "tests/pipeline/test_exactly_once.py": "reads child processes' state from /proc",
    "tests/pipeline/test_pipeline_outbox.py::test_a_note_half_written_when_its_event_fires_is_sent_whole": "a writer pausing mid-note is only caught by inotify's close-after-write event",
    "tests/pipeline/test_pipeline_outbox.py::test_when_the_mail_server_dies_sends_resume_after_it_is_restarted": "finds the MCP server process through /proc",
    "tests/mcp/test_client.py::test_when_the_server_dies_calls_fail_fast_then_the_session_comes_back": "finds the MCP server process through /proc",
}

# Folders whose helpers cannot even be imported off POSIX (tests/interop/npmtools.py takes an fcntl lock).
POSIX_ONLY_FOLDERS = ("tests/interop",)
_ROOT = Path(__file__).resolve().parents[2]


def _rel(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(_ROOT).as_posix()
    except ValueError:
        return Path(path).as_posix()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if sys.platform == "win32" and any(_rel(collection_path).startswith(folder) for folder in POSIX_ONLY_FOLDERS):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        file_id, _, name = item.nodeid.partition("::")
        reason = LINUX_ONLY.get(file_id) or LINUX_ONLY.get(f"{file_id}::{name.split('[')[0]}")
        if reason:
            item.add_marker(pytest.mark.linux_only(reason=reason))
        marker = item.get_closest_marker("linux_only")
        if marker is not None and not LINUX:
            why = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "needs inotify or /proc")
            item.add_marker(pytest.mark.skip(reason=f"Linux only: {why}"))
