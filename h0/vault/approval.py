"""The approval folder, recognised by what a path resolves to rather than how it is spelled.

`<vault>/Approved` is the one folder whose notes H0 sends. Every part of H0 that asks
"is this in Approved/?" — the vault server's guard, the watcher, the sweep, the mail server's
read of the note it sends (`read_approved`) — asks this module, so they cannot disagree. A directory is the approval folder when it *is* the
directory `<vault>/Approved` resolves to: the same (st_dev, st_ino). That makes a case
variant (`approved/`) the approval folder on a case-insensitive file system and a separate
folder on a case-sensitive one, and it sees through symlinks, `..` and Unicode spellings.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from h0.errors import InvalidRequest, NotFound, PermissionDenied
from h0.vault.layout import APPROVED
from h0.vault.note import MAX_NOTE_BYTES
from h0.vault.paths import NOTE_SUFFIX, PathResolver, folder_key, nfc

Identity = tuple[int, int]  # (st_dev, st_ino)


class _Resolved(NamedTuple):
    """What `<vault>/Approved` resolved to, swapped in one assignment (tools run in threads)."""

    real: str
    prefix: str  # `real` plus a separator: what every path inside it starts with
    depth: int  # number of components of `real`
    key: str  # folder_key of its name
    identity: Identity | None  # None while it does not exist


class ApprovalFolder:
    """`<vault>/Approved` for one vault root.

    Its real path and identity are cached (the guard runs on every tool write) and looked
    up again whenever a comparison fails, so a folder deleted and re-created is still known.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.abspath(root)
        self.path = os.path.join(self.root, APPROVED)
        self._refresh()

    @staticmethod
    def note_rel(name: str) -> str:
        """The canonical vault-relative path of the note `name` in the approval folder."""
        return f"{APPROVED}/{nfc(name)}"

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether `path` (absolute, or relative to the vault root) lies in the approval folder,
        directly or in a sub-folder, once every symlink (the last component's too) and `..`
        is resolved. The path need not exist: a note about to be written counts where it would land.
        """
        real = os.path.realpath(os.path.join(self.root, path))
        approved = self._approved
        if real.startswith(approved.prefix):
            return True
        # A resolved path has no symlinks left, so the approval folder can only be its
        # ancestor at the depth of Approved/'s own real path, and only under a name that
        # folds to the same key (a directory has one name per parent). One stat, then.
        parts = Path(real).parts
        depth = approved.depth
        if len(parts) <= depth or folder_key(parts[depth - 1]) != approved.key:
            return False
        return self._is_approval_dir(os.path.join(*parts[:depth]))

    def notes(self) -> list[str]:
        """Every note directly in the approval folder, as canonical vault-relative paths.

        Empty if Approved/ leads out of the vault (a symlink): the vault's path confinement
        would refuse to read them anyway.
        """
        self._refresh()
        if not self._approved.real.startswith(os.path.join(os.path.realpath(self.root), "")):
            return []
        try:
            with os.scandir(self.path) as entries:
                names = sorted(e.name for e in entries if is_note_name(e.name) and e.is_file(follow_symlinks=False))
        except OSError:
            return []  # no Approved/ folder: nothing is approved
        return [self.note_rel(name) for name in names]

    def is_approval_note(self, path: str | os.PathLike[str]) -> bool:
        """Whether the file at absolute `path` is a note directly in the approval folder.

        Its parent must be the approval folder (by identity), and it must be a regular file
        of its own, not a symlink: a link's text lives elsewhere, where tools may edit it.
        These are exactly the files `notes()` lists.
        """
        path = os.fspath(path)
        if not is_note_name(os.path.basename(path)):
            return False
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
        parent = os.path.dirname(path)
        if parent == self.path or parent == self._approved.real:
            return True
        return self._is_approval_dir(parent)

    def _is_approval_dir(self, directory: str) -> bool:
        try:
            st = os.stat(directory)
        except OSError:
            return False
        identity = (st.st_dev, st.st_ino)
        if identity == self._approved.identity:
            return True
        self._refresh()  # Approved/ may have been created or replaced since it was cached
        return identity == self._approved.identity

    def _refresh(self) -> None:
        real = os.path.realpath(self.path)
        try:
            st = os.stat(real)
            identity: Identity | None = (st.st_dev, st.st_ino)
        except OSError:
            identity = None  # not there (yet): only its own spelling can be in it
        self._approved = _Resolved(
            real, os.path.join(real, ""), len(Path(real).parts), folder_key(os.path.basename(real)), identity
        )


def is_note_name(name: str) -> bool:
    """A file name H0 treats as a note: Markdown, not hidden (temp files and dot files are not)."""
    return not name.startswith(".") and name.lower().endswith(NOTE_SUFFIX)


def same_directory(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same directory once resolved (by identity when both exist)."""
    real_a, real_b = os.path.realpath(a), os.path.realpath(b)
    if real_a == real_b:
        return True
    try:
        return os.path.samefile(real_a, real_b)
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class ApprovedNote:
    """A note in Approved/ as it was read for sending: its bytes and the file's status at that moment."""

    rel: str
    data: bytes
    info: os.stat_result

    @property
    def mtime(self) -> float:
        return self.info.st_mtime


def read_approved(resolver: PathResolver, path: str) -> ApprovedNote:
    """The note at `path` read once, safely, for sending: it must sit in `<vault>/Approved` itself (the same
    directory, by identity), be a regular file with one name (no symlink, no hard link another name could
    change), and be no larger than a note may be. Anything else is refused with why."""
    target = resolver.resolve(path, note=True)
    approved = resolver.root / APPROVED
    try:
        folder = os.stat(target.abs.parent)
        home = os.stat(approved)
    except FileNotFoundError:
        raise NotFound(f"No note at {target.rel}.", path=target.rel) from None
    if (folder.st_dev, folder.st_ino) != (home.st_dev, home.st_ino):
        raise PermissionDenied(
            f"{target.rel} is not in Approved/. Only a note the human moved into Approved/ can be sent; "
            "write a draft (create_draft) and let the human approve it.",
            path=target.rel,
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NONBLOCK", 0)  # a FIFO under the note's name is refused below, never waited on
    try:
        if os.path.islink(target.abs):
            raise PermissionDenied(
                f"{target.rel} is a symbolic link; only a real note in Approved/ is sent.", path=target.rel
            )
        fd = os.open(target.abs, flags)
    except FileNotFoundError:
        raise NotFound(f"No note at {target.rel}.", path=target.rel) from None
    except OSError as exc:
        raise PermissionDenied(
            f"{target.rel} cannot be opened as a note: {exc.strerror or exc}", path=target.rel
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PermissionDenied(f"{target.rel} is not a regular file.", path=target.rel)
        if info.st_nlink != 1:
            # A hard link elsewhere would let its other name change what the human approved.
            raise PermissionDenied(
                f"{target.rel} has {info.st_nlink} hard links: another name could change it after approval. "
                "Approve a copy of it instead.",
                path=target.rel,
            )
        if info.st_size > MAX_NOTE_BYTES:
            raise InvalidRequest(f"{target.rel} is too large to be a draft.", path=target.rel)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return ApprovedNote(target.rel, b"".join(chunks), info)
