"""What one of H0's changes wrote, remembered when it is known here without reading it back: the
daemon's routes and index then take the note in as written (h0.vault.own_writes)."""

from __future__ import annotations

from collections.abc import Sequence

from h0.errors import H0Error
from h0.vault import Moved, Note
from h0.vault.api import Applied, Change, Move, NoteRef, Update, Write
from h0.vault.own_writes import OwnWrites, merged


def remember(written: OwnWrites | None, change: Change, result: Applied | H0Error, read: Note | None) -> None:
    """Record what `change` wrote (answered by `result`) when it is known: a whole note written, or
    `read` with keys set when the change was made over it (its hash guarded the update, or is the
    hash the moved note had). Anything else is not recorded: it is read again when it matters."""
    if written is None:
        return
    if isinstance(change, Write) and isinstance(result, NoteRef):
        written.wrote(result.path, result.hash, change.frontmatter, change.body)
    elif read is None:
        return
    elif isinstance(change, Update) and isinstance(result, NoteRef) and read.hash == change.if_match:
        written.wrote(result.path, result.hash, merged(read.frontmatter, change.set, change.remove), read.body)
    elif isinstance(change, Move) and isinstance(result, Moved) and result.hash and read.hash == result.moved_hash:
        written.wrote(
            result.destination, result.hash, merged(read.frontmatter, change.set_frontmatter or {}), read.body
        )


def touched(changes: Sequence[Change]) -> list[str]:
    """The notes a batch of changes writes, moves away or moves to (a move into a folder: to its own name there)."""
    paths: list[str] = []
    for change in changes:
        if isinstance(change, Move):
            to = change.destination
            paths += [change.source, to + change.source.rsplit("/", 1)[-1] if to.endswith("/") else to]
        else:
            paths.append(change.path)
    return paths
