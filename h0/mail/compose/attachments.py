"""The files attached to a message, read from the vault under the contract's limits.

`load_attachments` reads vault files (25 MB in total, no executables, no links, no folders,
nothing from H0's own Logs/ and Outbox/), each through one open descriptor, and hashes the
bytes it read — so what was checked is what is hashed, and the approved attachment is
provably the one sent. `hash_attachments` hashes without keeping the bytes.
"""

from __future__ import annotations

import errno
import hashlib
import mimetypes
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from h0.errors import H0Error, InvalidRequest, NotFound, PermissionDenied
from h0.mail.compose.addresses import refuse_line_breaks
from h0.vault.layout import LOGS, OUTBOX
from h0.vault.paths import PathResolver, VaultPath

MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024  # Gmail's limit for everything attached to one message

# Gmail's own list of blocked file types (support.google.com/mail/answer/6590).
BLOCKED_EXTENSIONS = frozenset(
    ".ade .adp .apk .appx .appxbundle .bat .cab .chm .cmd .com .cpl .diagcab .diagcfg .diagpack .dll .dmg "
    ".ex .ex_ .exe .hta .img .ins .iso .isp .jar .jnlp .js .jse .lib .lnk .mde .msc .msi .msix .msixbundle "
    ".msp .mst .nsh .pif .ps1 .scr .sct .shb .sys .vb .vbe .vbs .vhd .vxd .wsc .wsf .wsh .xll".split()
)
# Executables renamed to look harmless are still executables: PE, ELF, Mach-O (and fat/Java).
_EXECUTABLE_MAGIC = (
    b"MZ",
    b"\x7fELF",
    b"\xfe\xed\xfa\xce",
    b"\xfe\xed\xfa\xcf",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_CHUNK = 1024 * 1024
# What a person does about a refused attachment, in the note (every refusal names its fix).
_FIX_ATTACHMENTS = "change `attachments:` in the draft's frontmatter, then approve again"


@dataclass(frozen=True, slots=True)
class Attachment:
    """One file to attach; `rel` and `sha256` say which vault file and which bytes (loaded ones only)."""

    filename: str
    data: bytes
    mime_type: str
    rel: str = ""
    sha256: str = ""
    info: os.stat_result | None = None  # the file as read (its times: h0.vault.last_change)


def load_attachments(resolver: PathResolver, paths: Sequence[str]) -> list[Attachment]:
    """Read attachments from vault paths, each with its vault path and the sha256 of the bytes read.

    Refuses escapes, symlinks, hard links, folders, hidden files, executables and > 25 MB in
    total (checked from the sizes before anything is read). Each file is checked and read
    through one open descriptor, so what was checked is what is hashed and sent.
    """
    loaded = []
    for rel, name, data, digest, info in _read_attachments(resolver, paths, keep=True):
        mime_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        loaded.append(Attachment(name, data, mime_type, rel=rel, sha256=digest, info=info))
    return loaded


def hash_attachments(resolver: PathResolver, paths: Sequence[str]) -> dict[str, str]:
    """{vault-relative path: sha256 hex} of attachments, under the same checks as `load_attachments`."""
    return {rel: digest for rel, _, _, digest, _ in _read_attachments(resolver, paths, keep=False)}


def _read_attachments(
    resolver: PathResolver, paths: Sequence[str], *, keep: bool
) -> Iterator[tuple[str, str, bytes, str, os.stat_result]]:
    """(rel, file name, bytes if `keep` else b"", sha256, its stat after reading) per path, after every
    check has passed.

    Two passes: the first opens and measures every file without reading it (so one oversized
    or forbidden file costs nothing); the second reopens each, checks it again and reads it,
    never more than what is left of the 25 MB (a file may have grown in between).
    """
    targets = [_check_attachment_path(resolver, raw) for raw in paths]
    total = 0
    for target in targets:
        fd = _open_attachment(resolver, target)
        try:
            total += os.fstat(fd).st_size
        finally:
            os.close(fd)
    _refuse_oversize(total)
    budget = MAX_ATTACHMENT_BYTES
    for target in targets:
        fd = _open_attachment(resolver, target)  # checked again: it may have been replaced since
        try:
            read = _read_fd(fd, target.rel, budget, keep=keep)
            info = os.fstat(fd)
        finally:
            os.close(fd)
        budget -= read.size
        yield target.rel, PurePosixPath(target.rel).name, read.data, read.sha256, info


_RUNTIME_FOLDERS = frozenset(folder.casefold() for folder in (LOGS, OUTBOX))


def _check_attachment_path(resolver: PathResolver, raw: str) -> VaultPath:
    """Confinement, hidden parts, the file name and its type: everything known without opening it."""
    target = resolver.resolve(raw)
    if any(part.startswith(".") for part in target.parts):
        # .obsidian/ holds plugin settings (API keys among them): never mail them out.
        raise PermissionDenied(
            f"Attachments cannot come from hidden files or folders ({target.rel}); copy the file "
            f"into a visible folder of the vault and {_FIX_ATTACHMENTS}.",
            path=target.rel,
        )
    if target.parts and target.parts[0].casefold() in _RUNTIME_FOLDERS:
        # The audit trail and the outbox hold other people's mail: never mailed out as an attachment.
        raise PermissionDenied(
            f"Attachments cannot come from {target.parts[0]}/, H0's own records (audit logs, sent mail); "
            f"{_FIX_ATTACHMENTS}.",
            path=target.rel,
        )
    name = PurePosixPath(target.rel).name
    refuse_line_breaks("attachment file name", name)
    if PurePosixPath(name.lower()).suffix in BLOCKED_EXTENSIONS:
        raise InvalidRequest(
            f"{name}: executable file types are not sent (Gmail blocks them too); share a link to it "
            f"in the message instead and {_FIX_ATTACHMENTS}.",
            path=target.rel,
        )
    return target


def _open_attachment(resolver: PathResolver, target: VaultPath) -> int:
    """An fd on the attachment, proven a regular file with one link, reached through no symlink.

    Where the OS allows it (POSIX), each folder is opened relative to the one before with
    O_NOFOLLOW, so a folder swapped for a symlink between check and open is caught too;
    elsewhere every component is lstat'ed and the opened file must be the one lstat saw.
    """
    parts = target.abs.relative_to(resolver.root).parts
    try:
        if _NOFOLLOW and os.open in os.supports_dir_fd:
            fd = _open_beneath(resolver.root, parts)
        else:
            fd = _open_checked(resolver.root, parts)
    except OSError as exc:
        raise _open_refused(resolver.root, parts, target.rel, exc) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _folder_refused(target.rel)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidRequest(
                f"{target.rel} is not a regular file (a device, pipe or socket); it is not sent: {_FIX_ATTACHMENTS}.",
                path=target.rel,
            )
        if info.st_nlink != 1:
            raise PermissionDenied(
                f"{target.rel} is a hard link: the same file also lives elsewhere, possibly outside the vault. "
                f"Attach a copy of the file instead: {_FIX_ATTACHMENTS}.",
                path=target.rel,
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_beneath(root: Path, parts: tuple[str, ...]) -> int:
    dir_fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in parts[:-1]:
            next_fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        return os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _open_checked(root: Path, parts: tuple[str, ...]) -> int:
    path = root
    for name in parts:
        path = path / name
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise OSError(errno.ELOOP, "symbolic link", str(path))
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY | _NONBLOCK)
    if _file_id(os.fstat(fd)) != _file_id(info):
        os.close(fd)
        raise OSError(errno.ELOOP, "replaced by a symbolic link", str(path))
    return fd


def _open_refused(root: Path, parts: tuple[str, ...], rel: str, exc: OSError) -> H0Error:
    """Why opening failed, in words: walk the path with lstat (errno differs between systems)."""
    path = root
    for depth, name in enumerate(parts, 1):
        path = path / name
        last = depth == len(parts)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return NotFound(
                f"The attachment {rel} does not exist; check its vault path (e.g. Files/report.pdf) and "
                f"{_FIX_ATTACHMENTS}.",
                path=rel,
            )
        except OSError:
            break
        if stat.S_ISLNK(info.st_mode):
            return _symlink_refused(rel)
        if not last and not stat.S_ISDIR(info.st_mode):
            return NotFound(
                f"The attachment {rel} does not exist (a folder on its path is a file); {_FIX_ATTACHMENTS}.", path=rel
            )
        if last and stat.S_ISDIR(info.st_mode):
            return _folder_refused(rel)
    if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a symlink that has since gone
        return _symlink_refused(rel)
    return PermissionDenied(
        f"The attachment {rel} cannot be opened: {exc.strerror or exc}. Check that you can open "
        f"it, or {_FIX_ATTACHMENTS}.",
        path=rel,
    )


class _Read(NamedTuple):
    data: bytes  # empty unless kept
    sha256: str
    size: int


def _read_fd(fd: int, rel: str, budget: int, *, keep: bool) -> _Read:
    """Read to the end, hashing as it goes; refuse an executable at its first chunk and > budget bytes."""
    digest = hashlib.sha256()
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, min(_CHUNK, budget + 1 - size)):
        if size == 0 and chunk.startswith(_EXECUTABLE_MAGIC):
            raise InvalidRequest(
                f"{rel} is an executable program; it is not sent: share a link to it in the message "
                f"instead and {_FIX_ATTACHMENTS}.",
                path=rel,
            )
        digest.update(chunk)
        size += len(chunk)
        if size > budget:  # it grew since it was measured
            _refuse_oversize(MAX_ATTACHMENT_BYTES - budget + size)
        if keep:
            chunks.append(chunk)
    return _Read(b"".join(chunks), digest.hexdigest(), size)


def _file_id(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _refuse_oversize(total: int) -> None:
    if total > MAX_ATTACHMENT_BYTES:
        raise InvalidRequest(
            f"The attachments total {total / 1e6:.1f} MB; the limit is {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MB. "
            f"Share a link to the large files in the message instead and {_FIX_ATTACHMENTS}.",
            total_bytes=total,
            limit_bytes=MAX_ATTACHMENT_BYTES,
        )


def _symlink_refused(rel: str) -> PermissionDenied:
    return PermissionDenied(
        f"{rel} is a symbolic link (or lies in a linked folder); its target can change after approval. "
        f"Attach a copy of the file instead: {_FIX_ATTACHMENTS}.",
        path=rel,
    )


def _folder_refused(rel: str) -> InvalidRequest:
    return InvalidRequest(
        f"{rel} is a folder, not a file; list the files in it one by one, or a zip of it, in "
        "`attachments:` in the draft's frontmatter, then approve again.",
        path=rel,
    )
