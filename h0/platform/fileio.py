"""Durable file I/O (atomic write, the file system's name and path limits) and the one place an
OSError becomes a typed error. The OS-specific primitives it builds on are in h0.platform.fs.

The primitives raise OSError; callers that answer a person or a tool turn it into an
`H0Error` with `typed_os_error`, so a full disk or a read-only vault reads the same
everywhere.
"""

from __future__ import annotations

import errno
import itertools
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from h0.errors import Conflict, H0Error, InternalError, InvalidRequest, NotFound, PermissionDenied
from h0.platform.fs import fchmod, fsync_dir, rename_noreplace

DEFAULT_NAME_MAX = 255  # bytes in one file name: ext4, APFS, NTFS (in UTF-16 units) alike
DEFAULT_PATH_MAX = 4096  # bytes in one path handed to the kernel (Linux PATH_MAX)
_TMP_EXTRA = len(".") + len(".0123456789ab.tmp")


def name_max(directory: Path) -> int:
    """The longest file name (in bytes) the file system under `directory` allows."""
    return _pathconf(directory, "PC_NAME_MAX", DEFAULT_NAME_MAX)


def path_max(directory: Path) -> int:
    """The longest path (in bytes) the kernel takes for a file under `directory`."""
    return _pathconf(directory, "PC_PATH_MAX", DEFAULT_PATH_MAX)


def _pathconf(directory: Path, name: str, default: int) -> int:
    if not hasattr(os, "pathconf") or name not in getattr(os, "pathconf_names", {}):
        return default
    try:
        value = os.pathconf(directory, name)
    except (OSError, ValueError):
        return default
    return value if value and value > 0 else default


def typed_os_error(exc: OSError, what: str, path: str | os.PathLike[str] | None = None) -> H0Error:
    """The typed error for an OSError met while doing `what` ("write Drafts/x.md").

    `path` is the path to show (vault-relative where there is one); the byte counts of an
    over-long name are measured on the names the kernel saw (`exc.filename`, `filename2`).
    """
    code = exc.errno
    shown = os.fspath(path) if path is not None else (os.fsdecode(exc.filename) if exc.filename else None)
    details = {"path": shown, "errno": errno.errorcode.get(code, str(code)) if code is not None else None}
    head = f"Could not {what}"
    if code == errno.ENAMETOOLONG:
        return _name_too_long(head, exc, shown, details)
    if code in (errno.ENOSPC, errno.EDQUOT):
        return InternalError(
            f"{head}: the disk is full (or the disk quota is used up). Free some space, then try again.",
            retryable=False,
            **details,
        )
    if code == errno.EROFS:
        return PermissionDenied(
            f"{head}: the file system is read-only. Make the vault writable (remount it, or copy it "
            "somewhere writable), then try again.",
            **details,
        )
    if code in (errno.EACCES, errno.EPERM):
        return PermissionDenied(
            f"{head}: the operating system refuses it (permission denied). Give your user write "
            "access to the vault's folders, then try again.",
            **details,
        )
    if code == errno.ELOOP:
        return PermissionDenied(f"{head}: the path goes through a symlink loop (or too many symlinks).", **details)
    if code == errno.ENOTDIR:
        return InvalidRequest(f"{head}: a parent in the path is a file, not a folder.", **details)
    if code == errno.EISDIR:
        return InvalidRequest(f"{head}: the path is a folder, not a file.", **details)
    if code == errno.ENOENT:
        return NotFound(f"{head}: it (or a folder on its path) does not exist.", **details)
    if code == errno.EEXIST:
        return Conflict(f"{head}: something already exists there.", **details)
    if code == errno.EFBIG:
        return InvalidRequest(f"{head}: the file is larger than the file system allows.", **details)
    if code in (errno.EMFILE, errno.ENFILE):
        return InternalError(f"{head}: too many open files; try again in a moment.", retryable=True, **details)
    return InternalError(f"{head}: {exc.strerror or exc}.", retryable=False, **details)


def _name_too_long(head: str, exc: OSError, shown: str | None, details: dict[str, Any]) -> H0Error:
    names = [os.fsencode(n) for n in (exc.filename, exc.filename2, shown) if n]
    longest = max((len(part) for name in names for part in name.split(b"/")), default=0)
    limit_name = name_max(_existing_folder(Path(os.fsdecode(names[0])))) if names else DEFAULT_NAME_MAX
    if longest > limit_name:
        return InvalidRequest(
            f"{head}: the name is {longest} bytes; the file system allows {limit_name}. Use a shorter name.",
            name_bytes=longest,
            limit=limit_name,
            **details,
        )
    total = max((len(name) for name in names), default=0)
    return InvalidRequest(
        f"{head}: the path is {total} bytes (or too deep); the file system allows {DEFAULT_PATH_MAX}. "
        "Use a shorter path.",
        path_bytes=total,
        limit=DEFAULT_PATH_MAX,
        **details,
    )


def write_secret(path: Path, text: str, *, replace: bool = True) -> None:
    """A file that holds a long-lived secret (a token): owner-only from its creation, never half-written, its
    folder made. `replace=False`: made only if there is none (FileExistsError if there is), so that of
    several processes making it at once, one file wins and every one can read it."""
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"), mode=0o600, replace=replace)


def readable_by_others(path: Path) -> str | None:
    """What to do about a secret's file other users can read; None when they cannot (or there is no file)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    return f"{path} is readable by other users (mode {mode:o}); run: chmod 600 {path}" if mode & 0o077 else None


def atomic_write(
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    durable: bool = True,
    sync_dir: bool = True,
    replace: bool = True,
) -> None:
    """Write `data` to `path` so readers see the old file or the new one, never a part.

    The temp file lives in the same folder (same filesystem, so the rename is atomic),
    is fsynced before the rename, and the folder is fsynced after it (`sync_dir=False`: the
    caller fsyncs the folder itself, once for a batch of writes). A dot-prefixed,
    `.tmp`-suffixed name keeps watchers and Obsidian from treating it as a note. `replace=False`:
    FileExistsError if `path` exists (renamed without replacing), the file there left as it is.
    """
    directory = path.parent
    tmp = directory / f".{_tmp_stem(path.name, directory)}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o600 if mode is None else mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if mode is None:
                fchmod(fd, _kept_mode(path))  # where the OS has permission bits
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)  # inside the guard: a close can report ENOSPC or EIO too
        if replace:
            os.replace(tmp, path)
        else:
            rename_noreplace(tmp, path)
    except BaseException:
        # A full disk, a vanished folder, Ctrl-C: the old file stays as it was, no temp left.
        _unlink_quietly(tmp)
        raise
    if durable and sync_dir:
        fsync_dir(directory)


# A file as it is now (modification time in ns, size, inode); None when it cannot be looked at. Equal
# signatures: the file was not replaced or rewritten in between (what a cache re-reads on).
FileSignature = tuple[int, int, int] | None


def file_signature(path: Path) -> FileSignature:
    """`path`'s FileSignature now (None if it does not exist or cannot be looked at)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def is_temp_name(name: str | bytes) -> bool:
    """A name `atomic_write` gives its temp files (hidden, `.tmp`): never a note, nothing to watch. Bytes
    too: a watcher tells a raw name from the kernel before decoding it."""
    if isinstance(name, bytes):
        return name.startswith(b".") and name.endswith(b".tmp")
    return name.startswith(".") and name.endswith(".tmp")


def _kept_mode(path: Path) -> int:
    """The permissions the human gave the file (kept across the rewrite), else the umask's."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


def _existing_folder(path: Path) -> Path:
    """The nearest folder on `path`'s way up that exists (a few steps only), for pathconf."""
    for parent in itertools.islice(path.parents, 16):
        try:
            if parent.is_dir():
                return parent
        except (OSError, ValueError):
            continue
    return Path(os.sep)


def _tmp_stem(name: str, directory: Path) -> str:
    """The file's name, cut so that the temp name fits wherever the name itself fits."""
    encoded = os.fsencode(name)
    if len(encoded) + _TMP_EXTRA <= 128:  # fits every file system H0 runs on; skip the syscall
        return name
    room = name_max(directory) - _TMP_EXTRA
    if len(encoded) <= room:
        return name
    return encoded[: max(room, 1)].decode("utf-8", "ignore") or "file"


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
