"""`VaultAPI`: the vault as H0's handlers use it, in three verbs — read notes, list a folder, apply changes.

Like httpx's transport (one `handle_request`, plain values in and out), the seam is small so that
each implementation is small: `LocalVault` (this module: the domain, in process) and `McpVault`
(`h0.mcp.api`: the vault server's `read_notes`, `list_notes` and `apply_changes`). The daemon
composes them with one typed fallback (`h0.mcp.client.Fallback`): MCP first, the local vault when
the server is unreachable. Each verb answers with the same types — `Note`, `NoteRef`, `Moved`,
paths — and an item's failure is its typed `H0Error` in its place, never raised for the batch.

`Notes` is the one client over the seam: a note at a time (`read`, `write`, `update`, `move`), each
one verb with one item, its error raised (a listing of a folder that is not there is empty). The
changes are values (`Write`, `Update`, `Move`): a handler that writes a batch builds them and calls
`apply` once; so is a listing's query (`ListQuery`).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from h0.errors import H0Error, InternalError, NotFound
from h0.vault.note import Note
from h0.vault.store import Moved, Vault

MAX_BATCH = 500  # notes per read_many / changes per apply over MCP


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


@dataclass(frozen=True, slots=True)
class ListQuery:
    """Which notes to list: those of a folder (`recursive`: and of its sub-folders) matching any of the
    'field:value' filters, at most `limit` of them."""

    directory: str = ""
    filter: str | Sequence[str] | None = None
    recursive: bool = False
    limit: int | None = None


Change = Write | Update | Move
Applied = NoteRef | Moved
A = TypeVar("A", NoteRef, Moved)
T = TypeVar("T")


class VaultAPI(Protocol):
    """The vault's three verbs. Each raises a typed `H0Error` only for the call as a whole (the server
    unreachable); an item that fails is answered in its place."""

    def read_many(self, paths: Sequence[str]) -> list[Note | H0Error]:
        """Each note, or the error reading it raised, in the order asked."""
        ...

    def list(self, query: ListQuery) -> list[str]:
        """Paths of the notes the query names (sorted)."""
        ...

    def apply(self, changes: Sequence[Change]) -> builtins.list[Applied | H0Error]:
        """Apply changes in order, each on its own: each one's result, or its error, in its place."""
        ...


class LocalVault:
    """`VaultAPI` over the domain's `Vault`, in this process."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def read_many(self, paths: Sequence[str]) -> list[Note | H0Error]:
        results: list[Note | H0Error] = []
        for path in paths:
            try:
                results.append(self.vault.read_note(path))
            except H0Error as error:
                results.append(error)
        return results

    def list(self, query: ListQuery) -> list[str]:
        listing = self.vault.list_notes(query.directory, query.filter, recursive=query.recursive, limit=query.limit)
        return [n.path for n in listing.notes]

    def apply(self, changes: Sequence[Change]) -> builtins.list[Applied | H0Error]:
        results: list[Applied | H0Error] = []
        for change in changes:
            try:
                results.append(self._apply(change))
            except H0Error as error:
                results.append(error)
        return results

    def _apply(self, change: Change) -> Applied:
        if isinstance(change, Write):
            note = self.vault.write_note(
                change.path, change.frontmatter, change.body, if_match=change.if_match, create_only=change.create_only
            )
            return NoteRef(note.path, note.hash)
        if isinstance(change, Update):
            note = self.vault.update_frontmatter(
                change.path, change.set, remove=change.remove, if_match=change.if_match
            )
            return NoteRef(note.path, note.hash)
        return self.vault.move_note(
            change.source,
            change.destination,
            overwrite=change.overwrite,
            rename_if_exists=change.rename_if_exists,
            set_frontmatter=change.set_frontmatter,
        )


class Notes:
    """A note at a time over a `VaultAPI`: each method is one verb with one item, and raises its error."""

    def __init__(self, api: VaultAPI) -> None:
        self.api = api

    def read(self, path: str) -> Note:
        return self._single(self.api.read_many([path]), Note)

    def read_many(self, paths: Sequence[str]) -> list[Note | H0Error]:
        return self.api.read_many(paths)

    def list(
        self,
        directory: str = "",
        filter: str | Sequence[str] | None = None,
        *,
        recursive: bool = False,
        limit: int | None = None,
    ) -> list[str]:
        """Paths of the notes of a folder matching any of the filters; none when the folder does not exist."""
        try:
            return self.api.list(ListQuery(directory, filter, recursive, limit))
        except NotFound:
            return []

    def apply(self, changes: Sequence[Change]) -> builtins.list[Applied | H0Error]:
        return self.api.apply(changes)

    def write(
        self,
        path: str,
        frontmatter: Mapping[str, Any],
        body: str,
        *,
        if_match: str | None = None,
        create_only: bool = False,
    ) -> NoteRef:
        return self._one(Write(path, frontmatter, body, if_match, create_only), NoteRef)

    def update(
        self, path: str, changes: Mapping[str, Any], *, remove: Sequence[str] = (), if_match: str | None = None
    ) -> NoteRef:
        return self._one(Update(path, changes, tuple(remove), if_match), NoteRef)

    def move(
        self,
        source: str,
        destination: str,
        *,
        overwrite: bool = False,
        rename_if_exists: bool = False,
        set_frontmatter: Mapping[str, Any] | None = None,
    ) -> Moved:
        return self._one(Move(source, destination, overwrite, rename_if_exists, set_frontmatter), Moved)

    def _one(self, change: Change, answer: type[A]) -> A:
        return self._single(self.api.apply([change]), answer)

    @staticmethod
    def _single(results: Sequence[object], answer: type[T]) -> T:
        """The one answer of a one-item call: raised when it is an error, checked to be of its kind."""
        if len(results) != 1:
            raise InternalError(f"{len(results)} answers to one {answer.__name__} asked")
        (result,) = results
        if isinstance(result, H0Error):
            raise result
        if not isinstance(result, answer):
            raise InternalError(f"a {type(result).__name__} answered where a {answer.__name__} was asked")
        return result
