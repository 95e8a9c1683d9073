"""Path confinement: turn a caller's path into a vault-relative one, or refuse it."""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from h0.errors import InvalidRequest, PermissionDenied

NOTE_SUFFIX = ".md"


@dataclass(frozen=True, slots=True)
class VaultPath:
    """A path proven to lie inside the vault: `rel` is POSIX and NFC, `abs` is on disk."""

    rel: str
    abs: Path

    @property
    def parts(self) -> tuple[str, ...]:
        return PurePosixPath(self.rel).parts if self.rel else ()

    @property
    def top(self) -> str:
        """The first folder of the path ('' for the vault root)."""
        return self.parts[0] if len(self.parts) > 1 else ""


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def folder_key(name: str) -> str:
    """How folder names are compared: NFC and case-folded (Obsidian on macOS/Windows ignores case)."""
    return nfc(name).casefold()


class PathResolver:
    """Confines paths to one vault root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.abspath(root))
        self.root_real = Path(os.path.realpath(self.root))

    def resolve(self, raw: object, *, write: bool = False, note: bool = False, allow_root: bool = False) -> VaultPath:
        """Resolve `raw` (vault-relative, or absolute inside the vault).

        Refuses NUL bytes, `..` escapes, absolute paths outside the vault, symlinks that
        resolve outside it and — for writes — anything inside a dot folder such as
        `.obsidian` or `.git`. With `note=True` the path must name a `.md` file.
        """
        if not isinstance(raw, str):
            raise InvalidRequest("A path must be a string.", path=repr(raw))
        if "\x00" in raw:
            raise InvalidRequest("The path contains a NUL byte.", path=raw.replace("\x00", "\\x00"))
        text = nfc(raw.strip())
        if not text or text in (".", "/"):
            if allow_root:
                return VaultPath("", self.root)
            raise InvalidRequest("The path is empty.", path=raw)

        parts = self._relative_parts(text, raw)
        if not parts:
            if allow_root:
                return VaultPath("", self.root)
            raise InvalidRequest("The path names the vault root, not a note.", path=raw)
        if write and any(part.startswith(".") for part in parts):
            raise PermissionDenied(
                "H0 does not write into dot folders or dot files (.obsidian, .git, …).", path=raw
            )
        if note and not parts[-1].lower().endswith(NOTE_SUFFIX):
            raise InvalidRequest("Notes are Markdown files: the path must end in .md.", path=raw)

        rel = "/".join(parts)
        absolute = self.root.joinpath(*parts)
        absolute = self._match_normalisation(absolute)
        real = Path(os.path.realpath(absolute))
        if real != self.root_real and not real.is_relative_to(self.root_real):
            raise PermissionDenied("The path resolves outside the vault (through a symlink).", path=raw)
        return VaultPath(rel, absolute)

    def relative(self, absolute: Path) -> str:
        """The vault-relative POSIX form of an absolute path inside the vault."""
        return nfc(Path(os.path.abspath(absolute)).relative_to(self.root).as_posix())

    def _relative_parts(self, text: str, raw: str) -> list[str]:
        posix = PurePosixPath(text)
        if posix.is_absolute():
            absolute = Path(os.path.normpath(text))
            for base in (self.root, self.root_real):
                if absolute == base or absolute.is_relative_to(base):
                    return list(absolute.relative_to(base).parts)
            raise PermissionDenied("Absolute paths must lie inside the vault.", path=raw)
        parts: list[str] = []
        for part in posix.parts:
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    raise PermissionDenied("The path escapes the vault with '..'.", path=raw)
                parts.pop()
                continue
            parts.append(part)
        # The spec's examples write "vault/Needs_Action/x.md": accept the vault's own name
        # as a prefix when no folder of that name exists inside the vault.
        if len(parts) > 1 and parts[0] == self.root.name and not (self.root / parts[0]).exists():
            parts = parts[1:]
        return parts

    @staticmethod
    def _match_normalisation(absolute: Path) -> Path:
        """Find an existing file whose name differs only in Unicode normalisation (NFD on macOS).

        ASCII names have one form only; for others the decomposed spelling is checked
        directly — a directory scan per lookup would cost O(folder size) on every write.
        """
        name = absolute.name
        if name.isascii() or absolute.exists():
            return absolute
        for form in ("NFD", "NFC"):
            variant = absolute.with_name(unicodedata.normalize(form, name))
            if variant.name != name and variant.exists():
                return variant
        return absolute
