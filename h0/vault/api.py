"""`VaultAPI`: the vault as H0's handlers use it, whoever implements it.

Two implementations, one protocol: `LocalVault` (this module: the domain, in process) and
`McpVault` (`h0.mcp.api`: the vault server over MCP). The daemon composes them with one
fallback wrapper (`h0.mcp.client.with_fallback`): MCP first, the local vault when the server
is unreachable. Both answer with the same types — `Note`, `NoteRef`, `Moved`, lists of
paths — and raise the same typed `H0Error`s, so a handler never sees a dict or knows which
one answered.

The batch calls (`read_many`, `apply`) exist for throughput: over MCP, one call carries a
whole batch of notes (triage of a burst), and an item's failure is returned in its place,
never raised for the batch.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from h0.errors import H0Error, InvalidRequest, NotFound, ParseError, PermissionDenied
from h0.vault.note import Note
from h0.vault.store import Moved, Vault

MAX_BATCH = 500  # notes per read_many / changes per apply


@dataclass(frozen=True, slots=True)
class NoteRef:
    """Where a note is and the hash of its content now (what a write answers)."""

    path: str
    hash: str


@dataclass(frozen=True, slots=True)
class Write:
    """Write a whole note (`create_only`: fail with Conflict if it exists)."""

    path: str
    frontmatter: Mapping[str, Any]
    body: str
    if_match: str | None = None
    create_only: bool = False


@dataclass(frozen=True, slots=True)
class Update:
    """Merge keys into a note's frontmatter (`remove`: keys dropped); the body is untouched."""

    path: str
    set: Mapping[str, Any]
    remove: tuple[str, ...] = ()
    if_match: str | None = None


@dataclass(frozen=True, slots=True)
class Move:
    """Move a note (a destination ending in '/' is a folder), annotating it in the same step."""

    source: str
    destination: str
    overwrite: bool = False
    rename_if_exists: bool = False
    set_frontmatter: Mapping[str, Any] | None = field(default=None)


Change = Write | Update | Move
Applied = NoteRef | Moved


class VaultAPI(Protocol):
    """The vault operations handlers use. Every method raises typed `H0Error`s only."""

    def read(self, path: str) -> Note: ...

    def read_many(self, paths: Sequence[str]) -> list[Note | H0Error]:
        """Each note, or the error reading it raised, in the order asked."""
        ...

    def write(
        self,
        path: str,
        frontmatter: Mapping[str, Any],
        body: str,
        *,
        if_match: str | None = None,
        create_only: bool = False,
    ) -> NoteRef: ...

    def update(
        self,
        path: str,
        changes: Mapping[str, Any],
        *,
        remove: Sequence[str] = (),
        if_match: str | None = None,
    ) -> NoteRef: ...

    def move(
        self,
        source: str,
        destination: str,
        *,
        overwrite: bool = False,
        rename_if_exists: bool = False,
        set_frontmatter: Mapping[str, Any] | None = None,
    ) -> Moved: ...

    def list(
        self,
        directory: str = "",
        filter: str | Sequence[str] | None = None,
        *,
        recursive: bool = False,
        limit: int | None = None,
    ) -> list[str]:
        """Paths of the notes of a folder (sorted), matching any of the 'field:value' filters."""
        ...

    def exists(self, path: str) -> bool: ...

    def apply(self, changes: Sequence[Change]) -> builtins.list[Applied | H0Error]:
        """Apply changes in order, each on its own: each one's result, or its error, in its place."""
        ...


class LocalVault:
    """`VaultAPI` over the domain's `Vault`, in this process."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def read(self, path: str) -> Note:
        return self.vault.read_note(path)

    def read_many(self, paths: Sequence[str]) -> list[Note | H0Error]:
        results: list[Note | H0Error] = []
        for path in paths:
            try:
                results.append(self.vault.read_note(path))
            except H0Error as error:
                results.append(error)
        return results

    def write(
        self,
        path: str,
        frontmatter: Mapping[str, Any],
        body: str,
        *,
        if_match: str | None = None,
        create_only: bool = False,
    ) -> NoteRef:
        note = self.vault.write_note(path, frontmatter, body, if_match=if_match, create_only=create_only)
        return NoteRef(note.path, note.hash)

    def update(
        self,
        path: str,
        changes: Mapping[str, Any],
        *,
        remove: Sequence[str] = (),
        if_match: str | None = None,
    ) -> NoteRef:
        note = self.vault.update_frontmatter(path, changes, remove=tuple(remove), if_match=if_match)
        return NoteRef(note.path, note.hash)

    def move(
        self,
        source: str,
        destination: str,
        *,
        overwrite: bool = False,
        rename_if_exists: bool = False,
        set_frontmatter: Mapping[str, Any] | None = None,
    ) -> Moved:
        return self.vault.move_note(
            source, destination, overwrite=overwrite, rename_if_exists=rename_if_exists, set_frontmatter=set_frontmatter
        )

    def list(
        self,
        directory: str = "",
        filter: str | Sequence[str] | None = None,
        *,
        recursive: bool = False,
        limit: int | None = None,
    ) -> list[str]:
        return [n.path for n in self.vault.list_notes(directory, filter, recursive=recursive, limit=limit).notes]

    def exists(self, path: str) -> bool:
        return self.vault.exists(path)

    def apply(self, changes: Sequence[Change]) -> builtins.list[Applied | H0Error]:
        results: list[Applied | H0Error] = []
        for change in changes:
            try:
                results.append(apply_one(self, change))
            except H0Error as error:
                results.append(error)
        return results


def apply_one(api: VaultAPI, change: Change) -> Applied:
    """One change through `api`'s single-note calls."""
    if isinstance(change, Write):
        return api.write(
            change.path, change.frontmatter, change.body, if_match=change.if_match, create_only=change.create_only
        )
    if isinstance(change, Update):
        return api.update(change.path, change.set, remove=change.remove, if_match=change.if_match)
    return api.move(
        change.source,
        change.destination,
        overwrite=change.overwrite,
        rename_if_exists=change.rename_if_exists,
        set_frontmatter=change.set_frontmatter,
    )


def exists_by_reading(api: VaultAPI, path: str) -> bool:
    """`exists` for an implementation without a cheaper way: a note that reads, or is there but
    unreadable (corrupt frontmatter, too large), exists; no note, or a path that cannot name
    one (outside the vault, a folder), does not. Anything else (the server unreachable) raises."""
    try:
        api.read(path)
    except (NotFound, InvalidRequest, PermissionDenied) as error:
        return isinstance(error, InvalidRequest) and "limit" in error.details  # too large: it is there
    except ParseError:
        return True
    return True
