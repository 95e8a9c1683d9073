"""The names of the vault's notes (their titles and aliases: NAME keys, h0.vault.index.entities), kept in
memory while none of them changes: an email's phrases are matched against them here, and only the
phrases that are a note's name are looked up in the index (h0.vault.index.about), not every run of
words of every email.

Whether they changed is said by the index file itself: a trigger marks each NAME row added or deleted
with a fresh random token in `meta` (whichever process wrote it: the daemon's index, the vault
server's, Claude Code's), and the names are read again when the token is not the one they were read
at. Names kept that the file no longer holds (a rebuilt index, before its first name) cost a look-up
that finds nothing; a name the file holds is never missing: adding it changed the token. Opening
the index writes nothing. Bounded: past MAX_NAMES, no names are kept and every phrase is looked up,
as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from h0.vault.index.entities import NAME, Names

MAX_NAMES = 100_000  # titles and aliases kept in memory (a few MB at most)
NAMES_TOKEN = "names"  # the `meta` row a change of any note's names sets to a fresh token
# Part of the index's schema (h0.vault.index.db): the partial index reads every name without the other keys.
NAMES_SCHEMA = f"""
CREATE INDEX IF NOT EXISTS entities_names ON entities (key) WHERE kind = '{NAME}';
CREATE TRIGGER IF NOT EXISTS names_added AFTER INSERT ON entities WHEN new.kind = '{NAME}' BEGIN
    INSERT OR REPLACE INTO meta VALUES ('{NAMES_TOKEN}', hex(randomblob(8))); END;
CREATE TRIGGER IF NOT EXISTS names_dropped AFTER DELETE ON entities WHEN old.kind = '{NAME}' BEGIN
    INSERT OR REPLACE INTO meta VALUES ('{NAMES_TOKEN}', hex(randomblob(8))); END;
"""


class NoteNames:
    """Every NAME key of one index (private notes' and mail folders' too: the look-up that follows judges
    them), read again only when one changed. Thread-safe."""

    def __init__(self, rows: Callable[[str, Sequence[Any]], list[Any]]) -> None:
        self.rows = rows  # the index's reader (h0.vault.index.db.IndexDB.rows)
        self._kept: tuple[str | None, Names | None] | None = None
        self._lock = threading.Lock()

    def current(self) -> Names | None:
        """The names as the index holds them now; None when there are more than MAX_NAMES."""
        # The token first: a change committed between the two reads makes the names newer than the token
        # they are kept under, so they are read once more next time — never older than it.
        token = self.rows("SELECT value FROM meta WHERE name = ?", (NAMES_TOKEN,))
        version = str(token[0][0]) if token else None
        kept = self._kept
        if kept is not None and kept[0] == version:
            return kept[1]
        with self._lock:
            rows = self.rows(f"SELECT DISTINCT key FROM entities WHERE kind = '{NAME}' LIMIT ?", (MAX_NAMES + 1,))
            names = Names.of(str(row[0]) for row in rows) if len(rows) <= MAX_NAMES else None
            self._kept = (version, names)
        return names
