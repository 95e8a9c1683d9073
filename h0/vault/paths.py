"""Path confinement: turn a caller's path into a vault-relative one, or refuse it."""

from __future__ import annotations

import os
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from h0.errors import InvalidRequest, PermissionDenied
from h0.platform.fileio import name_max, path_max
from h0.platform.fs import is_link

NOTE_SUFFIX = ".md"
MAX_RAW_CHARS = 64 * 1024  # longer than any path a kernel takes: refuse before parsing it
_SHOWN_CHARS = 200


@dataclass(frozen=True, slots=True)
class VaultPath:
    """A path proven to lie inside the vault: `rel` is POSIX and NFC, `where` (and `abs`) is on disk. `mode`: the
    file's type and mode as resolving it found it (a regular file, not a link), else 0: a reader that must refuse
    a device before opening it need not look again."""

    rel: str
    where: str
    mode: int = field(default=0, compare=False)

    @property
    def abs(self) -> Path:
        return Path(self.where)

    @property
    def parts(self) -> tuple[str, ...]:
        return PurePosixPath(self.rel).parts if self.rel else ()

    @property
    def top(self) -> str:
        """The first folder of the path ('' for the vault root)."""
        return self.parts[0] if len(self.parts) > 1 else ""


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def link_key(target: str) -> str:
    """How a [[link]] target and a note's name are compared: the last path part, no `.md`, case-folded."""
    name = target.strip().replace("\\", "/").rsplit("/", 1)[-1]
    return (name[:-3] if name.lower().endswith(".md") else name).casefold()


def folder_key(name: str) -> str:
    """How folder names are compared: NFC and case-folded (Obsidian on macOS/Windows ignores case)."""
    return nfc(name).casefold()


def directly_in(path: str, folder: str) -> bool:
    """Whether the vault path `path` names a note right in `folder` (not a sub-folder), as folders compare."""
    return path.count("/") == 1 and folder_key(path.split("/", 1)[0]) == folder_key(folder)


class PathResolver:
    """Confines paths to one vault root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.abspath(root))
        self.root_real = Path(os.path.realpath(self.root))
        self._root_text = str(self.root)  # the hot path joins and stats strings: no pathlib parse per call
        self._root_bytes = len(os.fsencode(self.root))
        self._root_name = self.root.name
        try:
            root_stat = os.stat(self.root_real)
            self.root_identity: tuple[int, int] | None = (root_stat.st_dev, root_stat.st_ino)
        except OSError:
            self.root_identity = None  # no folder yet: every path takes the full check
        # The file system's limits, read once (a pathconf per path would cost a syscall each).
        anchor = next((p for p in (self.root, *self.root.parents) if os.path.isdir(p)), Path(os.sep))
        self.name_max = name_max(anchor)
        self.path_max = path_max(anchor)

    def resolve(self, raw: object, *, write: bool = False, note: bool = False, allow_root: bool = False) -> VaultPath:
        """Resolve `raw` (vault-relative, or absolute inside the vault).

        Refuses NUL bytes, `..` escapes, absolute paths outside the vault, symlinks that
        resolve outside it, names or paths longer than the file system takes, and — for
        writes — anything inside a dot folder such as `.obsidian` or `.git`. With
        `note=True` the path must name a `.md` file.
        """
        if not isinstance(raw, str):
            raise InvalidRequest("A path must be a string.", path=_shown(repr(raw)))
        if "\x00" in raw:
            raise InvalidRequest("The path contains a NUL byte.", path=_shown(raw.replace("\x00", "\\x00")))
        if len(raw) > MAX_RAW_CHARS:
            raise InvalidRequest(
                f"The path is {len(raw)} characters; the file system allows {self.path_max} bytes.",
                path=_shown(raw),
                path_chars=len(raw),
                limit=self.path_max,
            )
        text = raw.strip()
        text = text if text.isascii() else nfc(text)  # ASCII has one normal form
        if not text or text in (".", "/"):
            if allow_root:
                return VaultPath("", self._root_text)
            raise InvalidRequest("The path is empty.", path=_shown(raw))

        parts = self._relative_parts(text, raw)
        if not parts:
            if allow_root:
                return VaultPath("", self._root_text)
            raise InvalidRequest("The path names the vault root, not a note.", path=_shown(raw))
        if write and any(part.startswith(".") for part in parts):
            raise PermissionDenied(
                "H0 does not write into dot folders or dot files (.obsidian, .git, …).", path=_shown(raw)
            )
        if note and not parts[-1].lower().endswith(NOTE_SUFFIX):
            raise InvalidRequest("Notes are Markdown files: the path must end in .md.", path=_shown(raw))

        self._check_lengths(parts, raw)
        rel = "/".join(parts)
        absolute = os.path.join(self._root_text, *parts)
        if not text.isascii():  # ASCII names have one normal form only
            absolute = self._match_normalisation(absolute)
        mode = self._plainly_inside(absolute, len(parts))
        if mode is None:
            real = Path(os.path.realpath(absolute))
            if real != self.root_real and not real.is_relative_to(self.root_real):
                raise PermissionDenied("The path resolves outside the vault (through a symlink).", path=_shown(raw))
        return VaultPath(rel, absolute, mode if mode is not None and stat.S_ISREG(mode) else 0)

    def _plainly_inside(self, absolute: str, depth: int) -> int | None:
        """The mode of `absolute` (0 when it does not exist) when it cannot lead outside the vault: the root is
        still the folder it was (one stat: a root, or a folder above it, re-pointed elsewhere since is caught)
        and no existing component below it is a symlink (one lstat each). None otherwise: the caller checks
        the whole real path — what a symlink anywhere always costs. Resolving the whole path on every call
        was ~10 lstats, a tenth of a read_note."""
        try:
            st = os.stat(self._root_text)
        except OSError:
            return None
        if (st.st_dev, st.st_ino) != self.root_identity:
            return None
        below = [absolute]
        for _ in range(depth - 1):  # the components below the root, deepest first
            below.append(os.path.dirname(below[-1]))
        mode = 0
        for component in reversed(below):
            try:
                info = os.lstat(component)
            except OSError:
                return 0  # absent from here down: nothing below can be a link
            if is_link(info):
                return None
            mode = info.st_mode
        return mode

    def _check_lengths(self, parts: list[str], raw: str) -> None:
        """Refuse what the kernel would refuse with ENAMETOOLONG, with the numbers, up front."""
        if raw.isascii() and max(map(len, parts)) <= self.name_max and self._root_bytes + len(raw) + 1 < self.path_max:
            return  # ASCII: a character a byte, and the path no longer than what was asked
        for part in parts:
            size = len(part.encode("utf-8"))
            if size > self.name_max:
                raise InvalidRequest(
                    f"The name is {size} bytes; the file system allows {self.name_max}. Use a shorter name.",
                    path=_shown(raw),
                    name_bytes=size,
                    limit=self.name_max,
                )
        total = self._root_bytes + sum(len(part.encode("utf-8")) + 1 for part in parts)
        if total >= self.path_max:  # PATH_MAX counts the terminating NUL
            raise InvalidRequest(
                f"The path is {total} bytes ({len(parts)} levels deep); the file system allows "
                f"{self.path_max - 1}. Use a shorter path.",
                path=_shown(raw),
                path_bytes=total,
                depth=len(parts),
                limit=self.path_max - 1,
            )

    def _relative_parts(self, text: str, raw: str) -> list[str]:
        if text.startswith("/"):
            absolute = Path(os.path.normpath(text))
            for base in (self.root, self.root_real):
                if absolute == base or absolute.is_relative_to(base):
                    return list(absolute.relative_to(base).parts)
            raise PermissionDenied("Absolute paths must lie inside the vault.", path=_shown(raw))
        parts: list[str] = []
        for part in text.split("/"):  # as PurePosixPath's parts of a relative path, without building one
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    raise PermissionDenied("The path escapes the vault with '..'.", path=_shown(raw))
                parts.pop()
                continue
            parts.append(part)
        # The spec's examples write "vault/Needs_Action/x.md": accept the vault's own name
        # as a prefix when no folder of that name exists inside the vault.
        if len(parts) > 1 and parts[0] == self._root_name and not os.path.exists(self.root / parts[0]):
            parts = parts[1:]
        return parts

    @staticmethod
    def _match_normalisation(absolute: str) -> str:
        """Find an existing file whose name differs only in Unicode normalisation (NFD on macOS).

        ASCII names have one form only; for others the decomposed spelling is checked
        directly — a directory scan per lookup would cost O(folder size) on every write.
        """
        folder, name = os.path.split(absolute)
        # os.path.exists, not Path.exists: it answers False (never raises) on EACCES.
        if name.isascii() or os.path.exists(absolute):
            return absolute
        for form in ("NFD", "NFC"):
            variant = unicodedata.normalize(form, name)
            if variant != name and os.path.exists(os.path.join(folder, variant)):
                return os.path.join(folder, variant)
        return absolute


def _shown(raw: str) -> str:
    """A path as an error shows it: clipped, so a hostile 10 KB path does not flood the log."""
    if len(raw) <= _SHOWN_CHARS:
        return raw
    return f"{raw[:_SHOWN_CHARS]}… [{len(raw) - _SHOWN_CHARS} more chars]"
