"""The no-replace rename, directory sync, full fsync and fchmod: every branch, chosen by name.

Given any of the rename implementations this machine can run (the OS's own, link + unlink,
reserve-then-replace), when 50 threads rename 50 different files onto one name at once,
then exactly one wins, the others get FileExistsError and keep their file, and nothing is
clobbered.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from pathlib import Path

import pytest

from h0.platform import fs
from h0.platform.fileio import atomic_write

POSIX = os.name == "posix"


WAYS = [
    pytest.param(name, marks=pytest.mark.skipif(name not in fs.runnable_renames(), reason=f"{name} is not on this OS"))
    for name in fs.RENAMES
]


def test_what_runs_here_is_what_this_os_has():
    """os.rename replaces silently on POSIX, so Windows' own runs on Windows only; link + unlink and
    reserve need POSIX rename semantics; the kernel's own no-replace rename is there where its C library is."""
    runnable = fs.runnable_renames()
    assert ("windows" in runnable) is (sys.platform == "win32")
    assert {"link", "reserve"} <= runnable if POSIX else not ({"link", "reserve"} & runnable)
    assert set(fs.rename_ways()) <= runnable


def test_this_os_prefers_its_own_atomic_rename_and_keeps_the_fallbacks():
    ways = fs.rename_ways()
    assert ways
    if sys.platform.startswith("linux"):
        assert ways == ("renameat2", "link", "reserve")
    elif sys.platform == "darwin":
        assert ways == ("renamex_np", "link", "reserve")
    elif sys.platform == "win32":
        assert ways == ("windows",)


@pytest.mark.parametrize("way", WAYS)
def test_given_a_taken_name_when_renamed_onto_it_then_refused_and_both_files_kept(tmp_path: Path, way: str):
    source, destination = tmp_path / "a.md", tmp_path / "b.md"
    source.write_text("mine")
    destination.write_text("theirs")
    with pytest.raises(FileExistsError):
        fs.rename_noreplace(source, destination, ways=(way,))
    assert source.read_text() == "mine" and destination.read_text() == "theirs"


@pytest.mark.parametrize("way", WAYS)
def test_given_a_free_name_when_renamed_then_moved_whole(tmp_path: Path, way: str):
    source, destination = tmp_path / "a.md", tmp_path / "sub" / "b.md"
    destination.parent.mkdir()
    source.write_text("mine")
    fs.rename_noreplace(source, destination, ways=(way,))
    assert not source.exists() and destination.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["b.md", "sub"]  # no placeholder, no second name


@pytest.mark.parametrize("way", WAYS)
def test_a_race_of_50_renames_onto_one_name_never_clobbers(tmp_path: Path, way: str):
    sources = [tmp_path / f"draft-{i:02}.md" for i in range(50)]
    for i, path in enumerate(sources):
        path.write_text(f"draft {i}")
    destination = tmp_path / "Done.md"
    start = threading.Barrier(len(sources))
    won: list[int] = []
    refused: list[int] = []
    failed: list[BaseException] = []

    def rename(i: int) -> None:
        start.wait()
        try:
            fs.rename_noreplace(sources[i], destination, ways=(way,))
            won.append(i)
        except FileExistsError:
            refused.append(i)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)

    threads = [threading.Thread(target=rename, args=(i,)) for i in range(len(sources))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not failed
    assert len(won) == 1 and len(refused) == 49
    (winner,) = won
    assert destination.read_text() == f"draft {winner}"
    assert all(sources[i].read_text() == f"draft {i}" for i in refused)  # every loser keeps its file
    assert not sources[winner].exists()
    assert len(list(tmp_path.iterdir())) == 50  # no placeholder or extra name left behind


@pytest.mark.skipif(not POSIX, reason="POSIX fallbacks")
def test_a_folder_is_renamed_without_replacing_through_the_fallbacks(tmp_path: Path):
    """Folders have no hard links: link + unlink steps aside and reserve-then-replace does it."""
    source, destination = tmp_path / "a", tmp_path / "b"
    source.mkdir()
    (source / "note.md").write_text("x")
    fs.rename_noreplace(source, destination, ways=("link", "reserve"))
    assert (destination / "note.md").read_text() == "x" and not source.exists()
    source.mkdir()
    with pytest.raises(FileExistsError):
        fs.rename_noreplace(source, destination, ways=("link", "reserve"))
    assert (destination / "note.md").exists()


def test_with_no_way_left_the_rename_says_so_and_touches_nothing(tmp_path: Path):
    source = tmp_path / "a.md"
    source.write_text("x")
    with pytest.raises(OSError) as info:
        fs.rename_noreplace(
            source,
            tmp_path / "b.md",
            ways=("renameat2",) if "renameat2" not in fs.runnable_renames() else ("renamex_np",),
        )
    assert info.value.errno == errno.EOPNOTSUPP
    assert source.read_text() == "x" and not (tmp_path / "b.md").exists()


def test_directory_sync_runs_where_the_os_has_it_and_is_skipped_where_not(tmp_path: Path, monkeypatch):
    assert fs.fsync_dir(tmp_path) is fs.CAN_SYNC_DIRS
    assert fs.fsync_dir(tmp_path, full=True) is fs.CAN_SYNC_DIRS
    assert fs.fsync_dir(tmp_path / "gone") is False  # a folder that vanished: nothing to make durable
    monkeypatch.setattr(fs, "CAN_SYNC_DIRS", False)  # Windows' branch
    assert fs.fsync_dir(tmp_path) is False


@pytest.mark.skipif(not POSIX, reason="needs fcntl to stand in for macOS's")
def test_full_fsync_falls_back_to_fsync_where_the_file_system_refuses_f_fullfsync(tmp_path: Path, monkeypatch):
    """macOS's branch on any POSIX machine: an F_FULLFSYNC the file system refuses (EINVAL here,
    ENOTSUP on some network shares on macOS) still ends in a plain fsync, not an error."""
    import fcntl

    asked: list[int] = []

    def unknown_command(fd: int) -> object:
        asked.append(fd)
        return fcntl.fcntl(fd, 0x7FFF)  # a command this kernel does not know

    monkeypatch.setattr(fs, "FLUSH_DRIVE_CACHE", unknown_command)
    with open(tmp_path / "record.jsonl", "wb") as handle:
        handle.write(b'{"event": "pre_send_audit"}\n')
        handle.flush()
        fs.full_fsync(handle.fileno())
    assert len(asked) == 1
    assert (tmp_path / "record.jsonl").read_bytes() == b'{"event": "pre_send_audit"}\n'


def test_atomic_write_keeps_the_human_s_permissions_where_the_os_has_them(tmp_path: Path, monkeypatch):
    note = tmp_path / "note.md"
    note.write_text("old")
    os.chmod(note, 0o640)
    atomic_write(note, b"new")
    assert note.read_bytes() == b"new"
    if fs.HAS_FCHMOD:
        assert note.stat().st_mode & 0o777 == 0o640
    monkeypatch.setattr(fs, "HAS_FCHMOD", False)  # Windows' branch: no permission bits to copy
    assert fs.fchmod(0, 0o600) is False
    atomic_write(note, b"newer")
    assert note.read_bytes() == b"newer"


def test_the_state_folder_is_per_user_and_outside_any_vault(tmp_path: Path):
    root = fs.user_state_root(tmp_path)
    assert root.name == "h0" and root.is_absolute()
