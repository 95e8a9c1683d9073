"""File-system primitives that differ by OS: no-replace rename, directory sync, full fsync, fchmod.

Each primitive picks its implementation once, at import, from what this OS offers; the
fallbacks are plain functions too, so tests select them by name (`RENAMES`) on any machine.
Everything here raises OSError; turning that into a message is the caller's business.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, cast

Rename = Callable[[Path, Path], None]

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1  # linux/fs.h
_RENAME_EXCL = 0x4  # macOS sys/stdio.h
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}


# --------------------------------------------------------------------------- no-replace rename


def _libc_function(name: str, argtypes: list[Any]) -> Callable[..., int] | None:
    if sys.platform == "win32":
        return None
    libc_name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)  # None: the running process's own symbols
        fn = getattr(libc, name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = argtypes
    fn.restype = ctypes.c_int
    return cast("Callable[..., int]", fn)


_renameat2 = (
    _libc_function("renameat2", [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint])
    if sys.platform.startswith("linux")
    else None
)
_renamex_np = (
    _libc_function("renamex_np", [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint])
    if sys.platform == "darwin"
    else None
)


class _Unsupported(Exception):
    """This file system does not do that kind of rename: try the next way."""


def _kernel_result(result: int, destination: Path) -> None:
    if result == 0:
        return
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        raise _Unsupported
    raise OSError(err, os.strerror(err), str(destination))


def rename_renameat2(source: Path, destination: Path) -> None:
    """Linux: renameat2(RENAME_NOREPLACE), one atomic step (ext4, btrfs, xfs, tmpfs…)."""
    if _renameat2 is None:
        raise _Unsupported
    _kernel_result(
        _renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), _RENAME_NOREPLACE), destination
    )


def rename_renamex_np(source: Path, destination: Path) -> None:
    """macOS: renamex_np(RENAME_EXCL), one atomic step (APFS, HFS+)."""
    if _renamex_np is None:
        raise _Unsupported
    _kernel_result(_renamex_np(os.fsencode(source), os.fsencode(destination), _RENAME_EXCL), destination)


def rename_windows(source: Path, destination: Path) -> None:
    """Windows: os.rename is MoveFileEx without MOVEFILE_REPLACE_EXISTING, which refuses to replace."""
    os.rename(source, destination)


def rename_link_unlink(source: Path, destination: Path) -> None:
    """Any POSIX file system with hard links: link() fails if the name exists, then drop the old name.
    For a moment both names exist (a watcher may see the new one appear first); nothing is clobbered."""
    if os.path.isdir(source) and not os.path.islink(source):
        raise _Unsupported  # folders have no hard links
    try:
        # The link must name the note itself, not what a symlinked note points to.
        os.link(source, destination, follow_symlinks=os.link not in os.supports_follow_symlinks)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno in _UNSUPPORTED | {errno.EPERM, errno.EXDEV, errno.EMLINK}:
            if os.path.lexists(destination):
                raise FileExistsError(errno.EEXIST, "File exists", str(destination)) from None
            raise _Unsupported from exc
        raise
    os.unlink(source)


def rename_reserve(source: Path, destination: Path) -> None:
    """The last resort (no kernel support, no hard links: FAT, some network shares): claim the name
    with an exclusive create, then rename over our own placeholder. Two H0 renames to one name can
    never both win; only a writer that ignores the placeholder could lose its write."""
    if os.path.isdir(source) and not os.path.islink(source):
        os.mkdir(destination)  # FileExistsError if taken; renaming a folder over an empty one is allowed
    else:
        os.close(os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600))
    try:
        os.replace(source, destination)
    except BaseException:
        try:
            os.rmdir(destination) if os.path.isdir(destination) else os.unlink(destination)
        except OSError:
            pass
        raise


# Every way, by name: tests select each one explicitly; `_RENAME_ORDER` is this OS's preference.
RENAMES: dict[str, Rename] = {
    "renameat2": rename_renameat2,
    "renamex_np": rename_renamex_np,
    "windows": rename_windows,
    "link": rename_link_unlink,
    "reserve": rename_reserve,
}

if sys.platform == "win32":
    _RENAME_ORDER: tuple[str, ...] = ("windows",)
elif sys.platform == "darwin":
    _RENAME_ORDER = ("renamex_np", "link", "reserve")
elif sys.platform.startswith("linux"):
    _RENAME_ORDER = ("renameat2", "link", "reserve")
else:
    _RENAME_ORDER = ("link", "reserve")


def runnable_renames() -> frozenset[str]:
    """Every rename implementation (`RENAMES`) this machine can run, preferred or not: the OS's own
    where its C library has it, Windows' on Windows, the link and reserve fallbacks on POSIX."""
    runnable = {"link", "reserve"} if os.name == "posix" else set()
    if _renameat2 is not None:
        runnable.add("renameat2")
    if _renamex_np is not None:
        runnable.add("renamex_np")
    if sys.platform == "win32":
        runnable.add("windows")
    return frozenset(runnable)


def rename_ways() -> tuple[str, ...]:
    """The rename implementations this machine tries, in order (`h0 doctor` and tests show it)."""
    runnable = runnable_renames()
    return tuple(name for name in _RENAME_ORDER if name in runnable)


def rename_noreplace(source: Path, destination: Path, *, ways: tuple[str, ...] | None = None) -> None:
    """Rename atomically, failing with FileExistsError if `destination` exists.

    Uses the OS's own no-replace rename where the OS and file system have one, so there is
    no moment in which the destination could be clobbered; then the fallbacks (`RENAMES`).
    """
    for name in ways or rename_ways():
        try:
            RENAMES[name](source, destination)
            return
        except _Unsupported:
            continue
    raise OSError(errno.EOPNOTSUPP, "no way to rename without replacing on this file system", str(destination))


# --------------------------------------------------------------------------- durability


CAN_SYNC_DIRS = os.name == "posix"  # Windows cannot open a folder as a file to flush it
# How a file's data is pushed past the drive's own cache, where the OS has a way: None elsewhere.
FLUSH_DRIVE_CACHE: Callable[[int], object] | None = None
if sys.platform == "darwin":
    import fcntl as _fcntl

    def _full_fsync_macos(fd: int) -> object:
        return _fcntl.fcntl(fd, getattr(_fcntl, "F_FULLFSYNC", 51))

    FLUSH_DRIVE_CACHE = _full_fsync_macos


def is_link(info: os.stat_result) -> bool:
    """Whether an lstat result is a link the path resolution would follow: a symlink, or on
    Windows any reparse point (a junction is not S_ISLNK there)."""
    return stat.S_ISLNK(info.st_mode) or bool(getattr(info, "st_reparse_tag", 0))


def status_change_time(info: os.stat_result) -> float | None:
    """When the file's inode last changed — a write, a rename, a chmod — as epoch seconds: st_ctime on
    POSIX, which nobody can set back. Windows keeps no such time (st_ctime is the creation time
    there, and a rename keeps it): None."""
    return None if os.name == "nt" else info.st_ctime


def full_fsync(fd: int) -> None:
    """Flush `fd` to stable storage. On macOS fsync() only reaches the drive's cache; F_FULLFSYNC
    asks the drive to write it out (slower: used for the records a send depends on)."""
    if FLUSH_DRIVE_CACHE is not None:
        try:
            FLUSH_DRIVE_CACHE(fd)
            return
        except OSError:
            pass  # a file system without it (some network shares): the plain fsync below
    os.fsync(fd)


def fsync_dir(directory: Path, *, full: bool = False) -> bool:
    """Make a rename or create inside `directory` durable (where the OS can: not on Windows,
    whose NTFS journals the names itself). Whether the folder was synced: False where the OS
    has no such thing, or the folder is gone or refuses it (nothing more to make durable)."""
    if not CAN_SYNC_DIRS:
        return False
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return False
    try:
        full_fsync(fd) if full else os.fsync(fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- permissions


HAS_FCHMOD = hasattr(os, "fchmod") and os.name == "posix"  # Windows' fchmod only toggles read-only


def fchmod(fd: int, mode: int) -> bool:
    """Set an open file's permission bits where the OS has them; False where it has none."""
    if not HAS_FCHMOD:
        return False
    os.fchmod(fd, mode)
    return True


# --------------------------------------------------------------------------- where state lives


def user_state_root(home: Path | None = None) -> Path:
    """The per-user folder for H0's state on this OS (never inside a vault)."""
    home = home or Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / "h0"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "h0"
    return Path(os.environ.get("XDG_STATE_HOME") or home / ".local" / "state") / "h0"


# O_NONBLOCK: opening a FIFO for reading must not wait for a writer (it is refused just after); it changes
# nothing for a regular file. Windows has no FIFOs in the file system, nor the flag.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


# A note found by a walk: never through a symlink (the walk's own check may be raced).
_NOTE_FLAGS = _READ_FLAGS | getattr(os, "O_NOFOLLOW", 0)


def read_bounded(path: Path | str, limit: int) -> tuple[bytes | None, os.stat_result] | None:
    """A note file's bytes, read at once, with its stat: the one careful reader of the vault's search and its
    index. None when it is gone, unreadable, a symlink or not a regular file (a FIFO, socket or device is
    never waited on); bytes None when it is larger than `limit` (nothing read).

    os.open/fstat/os.read rather than open(): no FileIO/BufferedReader objects per note, and one exact-size
    buffer (a fixed over-sized read buffer, shrunk afterwards, left the malloc heap fragmented: +5 MB of RSS
    per search of a 50 MB vault)."""
    try:
        fd = os.open(path, _NOTE_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > limit:
            return None, info
        return os.read(fd, info.st_size), info  # a regular file: one read returns it all (less if it shrank)
    except OSError:
        return None
    finally:
        os.close(fd)


def not_regular(path: Path | str) -> OSError:
    return OSError(errno.EINVAL, "not a regular file (a pipe, socket or device)", str(path))


def open_regular(path: Path | str) -> int:
    """A descriptor of the regular file at `path`, open for reading. Every read of a file someone else may
    have made (a note, a control note, a log, a setting) opens it here: a FIFO, socket or device under the
    file's name is refused (OSError EINVAL) instead of holding the caller — a pass, a report, a shutdown —
    until something writes to it. A device is refused before it is opened (opening some has effects)."""
    return open_regular_status(path)[0]


def open_regular_status(path: Path | str, mode: int = 0) -> tuple[int, os.stat_result]:
    """`open_regular`'s descriptor and the open file's status (its size and mtime, no second fstat). `mode`: the
    file's mode as the caller just found it by lstat (a regular file), so it is not looked at again before the
    open; 0: look."""
    if not stat.S_ISREG(mode):
        mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file", str(path))
    if not stat.S_ISREG(mode):
        raise not_regular(path)
    fd = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # replaced between the look and the open
            raise not_regular(path)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def regular_file(path: Path | str) -> BinaryIO:
    """The regular file at `path` open for reading in binary (see `open_regular`); close it (`with`)."""
    return os.fdopen(open_regular(path), "rb")


def read_head(path: Path | str, limit: int) -> bytes:
    """The first `limit` bytes of the regular file at `path` (see `open_regular`)."""
    with regular_file(path) as handle:
        return handle.read(limit)


def read_regular(path: Path | str, limit: int) -> bytes:
    """All the bytes of the regular file at `path` (see `open_regular`); OSError EFBIG when it holds
    more than `limit`, so no reader takes in a file without bound."""
    with regular_file(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit} bytes", str(path))
    return data


def write_new(target: Path, text: str) -> bool:
    """Write `text` to `target` unless a file is there; True if written. Through a temporary file renamed
    without replacing: a concurrent writer's or the owner's own file is never clobbered, and no reader
    ever sees half a file."""
    import secrets

    if target.exists():
        return False
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    tmp.write_text(text, encoding="utf-8")
    try:
        rename_noreplace(tmp, target)
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    return True
