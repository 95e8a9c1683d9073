"""Durable file primitives: atomic write, no-replace rename, directory fsync."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import secrets
from pathlib import Path

_RENAME_NOREPLACE = 1
_AT_FDCWD = -100


def fsync_dir(directory: Path) -> None:
    """Make a rename or create inside `directory` durable (no-op where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Write `data` to `path` so readers see the old file or the new one, never a part.

    The temp file lives in the same folder (same filesystem, so the rename is atomic),
    is fsynced before the rename, and the folder is fsynced after it. A dot-prefixed,
    `.tmp`-suffixed name keeps watchers and Obsidian from treating it as a note.
    """
    directory = path.parent
    tmp = directory / f".{path.name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o600 if mode is None else mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if mode is None and path.exists():
            # Keep the permissions the human gave the note.
            os.fchmod(fd, path.stat().st_mode & 0o7777)
        elif mode is None:
            os.fchmod(fd, 0o666 & ~_UMASK)
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    if durable:
        fsync_dir(directory)


def rename_noreplace(source: Path, destination: Path) -> None:
    """Rename atomically, failing with FileExistsError if `destination` exists.

    Uses Linux renameat2(RENAME_NOREPLACE) so there is no window in which both names
    exist or the destination is clobbered; elsewhere falls back to link + unlink.
    """
    if _renameat2 is not None:
        result = _renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), _RENAME_NOREPLACE)
        if result == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err), str(destination))
    try:
        os.link(source, destination)
    except FileExistsError:
        raise
    except OSError:
        if destination.exists():
            raise FileExistsError(errno.EEXIST, "File exists", str(destination)) from None
        os.rename(source, destination)
        return
    os.unlink(source)


def _load_renameat2():
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return None
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_renameat2 = _load_renameat2()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_UMASK = _umask()  # read once: os.umask() is process-wide and not thread-safe


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
