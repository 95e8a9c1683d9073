"""Whether a note read from disk may be shown to an MCP client, asked of the vault index: the vault server's
`read_note` (h0.mcp.vault_view). The index lends its parse of those very bytes and, holding them, answers as a
listing does; anything else the disclosure gate judges from the bytes just read. And the parse a listing may
take (`parse_at`)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from pydantic_core import from_json

from h0.vault.disclosure import thread_keys
from h0.vault.index.db import Damaged
from h0.vault.paths import nfc

if TYPE_CHECKING:
    from h0.vault.index import VaultIndex


def why_private(index: VaultIndex, rel: str, frontmatter: dict[str, Any], body: str, *, as_held: bool) -> str | None:
    """Why the note read at `rel` is private, in the gate's words; None when an MCP client may see it. Asked right
    after the index's `sync`, of the index as that left it. `as_held`: the index holds these very bytes (its
    frontmatter was lent). Then the index's own answer clears them, the one a listing gives: it judged these bytes
    by the gate, and their folder, thread and people by the index of now. A note it hides, mail while there are
    private people (whose addresses the gate reads itself), and bytes it does not hold are judged by the gate,
    with the private thread keys the index knows."""
    private = index.privacy.last()
    if as_held and nfc(rel) not in private.paths and not private.addresses:
        return None
    keys = thread_keys(rel, frontmatter)
    return index.gate.why(rel, frontmatter, index.privacy.private_keys(keys, rel) if keys else frozenset(), body)


class NoteCheck:
    """One note read from disk, judged by an index brought up to date once (`VaultIndex.checking`): `lend` is the
    note parser's `lent` (h0.vault.note.parse) — the index's frontmatter for these bytes, looked up with the
    index's version in one read of its file — and `why_private` answers as `why_private` does, of that version."""

    def __init__(self, index: VaultIndex) -> None:
        self.index = index
        self.held = False  # the index holds the bytes read
        self.version: tuple[int, int, int] | None = None  # the index's version as the look-up saw it

    def lend(self, rel: str, digest: str) -> dict[str, Any] | None:
        try:
            rows = self.index.db.rows(
                "SELECT v.data_version, d.frontmatter FROM pragma_data_version() AS v "
                "LEFT JOIN docs AS d ON d.path = ? AND d.hash = ? AND d.problem IS NULL",
                (nfc(rel), digest),
            )
            changed, text = rows[0]
            # Keys repeat from note to note (and are kept once); values mostly do not (a cache of them is memory).
            data = from_json(text, cache_strings="keys") if text is not None else None
        except (Damaged, sqlite3.Error, ValueError, IndexError):
            return None  # no version: `why_private` brings the index up to date the usual way
        self.version = self.index.db.versioned(int(changed))
        self.held = isinstance(data, dict)
        return data if isinstance(data, dict) else None

    def why_private(self, rel: str, frontmatter: dict[str, Any], body: str) -> str | None:
        if self.version is None:
            self.index.sync()  # not looked up (no properties) or the look-up failed: the usual way, damage rebuilt
        else:
            self.index.privacy.current(self.version)  # the private notes of the version the look-up saw
        return why_private(self.index, rel, frontmatter, body, as_held=self.held)


def parse_at(index: VaultIndex, path: str) -> tuple[int, int, int, str] | None:
    """(mtime_ns, size, inode, frontmatter JSON) of the note at `path` as the index read it without a problem, or
    None: one note's `VaultIndex.parses`, for a listing to take while the file still has that signature
    (h0.vault.listing.FrontmatterCache.lend_from). Never waits for a sync, never raises."""
    try:
        rows = index.db.rows(
            "SELECT mtime_ns, size, ino, frontmatter FROM docs WHERE path = ? AND problem IS NULL", (nfc(path),)
        )
    except (Damaged, sqlite3.Error):
        return None
    return (int(rows[0][0]), int(rows[0][1]), int(rows[0][2]), str(rows[0][3])) if rows else None
