"""Which notes of the index are private, as the disclosure gate says (h0.vault.disclosure), for every answer
the index gives: search, related notes, people, a listing.

Computed from the few private things outward, never by judging every row: the notes private by their own
words or unreadable (`docs.private`, stored when the note is read), those in a private folder (only the
top-level folders the gate covers are looked at, with the gate's folder test of now), the private
people (addresses that only private People notes name) and the mail from or to them, then — one step, as the gate — every note sharing
a thread key with one of those. Kept until the index changes (this process's writes, or another
process's: SQLite's data_version), so a quiet index answers "is it private?" from memory, and a listing
of thousands of notes costs a set look-up a note.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from h0.state.binds import chunks, marks
from h0.vault.disclosure import MAIL_FIELDS, Disclosure
from h0.vault.index.db import IndexDB
from h0.vault.person import PERSON_ADDRESS_KEYS  # where a People note names its person


@dataclass(frozen=True, slots=True)
class Private:
    """The index's private notes at one version of it."""

    version: tuple[int, int, int]
    folders: tuple[tuple[str, ...], str | None]  # the gate's private folders it was worked out with (Disclosure.key)
    own: frozenset[int]  # private by themselves: marks, unreadable, folder, a private person's mail
    hidden: frozenset[int]  # those and every note of their threads
    paths: frozenset[str]  # the paths of `hidden`
    keys: dict[str, frozenset[str]]  # each thread key a note of `own` holds: the paths of those notes
    addresses: frozenset[str]  # private people: addresses only private People notes name


class IndexPrivacy:
    """The private notes of one index, recomputed when it changed (thread-safe)."""

    def __init__(self, db: IndexDB, gate: Disclosure) -> None:
        self.db = db
        self.gate = gate
        self._now: Private | None = None
        self._paths: tuple[tuple[int, int, int], frozenset[str]] | None = None
        self._lock = threading.Lock()

    def current(self, version: tuple[int, int, int] | None = None) -> Private:
        """The private notes as the index holds them now, by the gate's private folders of now (`version`: the
        index's version as a look-up just saw it, IndexDB.versioned; None: look)."""
        version = self.db.version() if version is None else version
        now = self._now
        if now is not None and now.version == version and now.folders == self.gate.key:
            return now
        with self._lock:
            now = self._now
            if now is None or now.version != version or now.folders != self.gate.key:
                now = self._now = self._compute(version)
        return now

    def last(self) -> Private:
        """The private notes as the last `current()` found them (a query right after the index's sync, which ends
        with one: no second look at the file's version), or as they are now when the gate's folders changed."""
        now = self._now
        if now is not None and now.folders == self.gate.key:
            return now
        return self.current()

    def use(self, gate: Disclosure) -> None:
        """Judge folders by this gate from the next answer on (the owner changed which folders are private)."""
        self.gate = gate

    def private(self, doc: int) -> bool:
        """Whether the row `doc` is private, as of the last `current()` (what the SQL function h0_private asks:
        every query of the index refreshes it first). Before any, every row is."""
        now = self._now
        return now is None or doc in now.hidden

    def indexed(self) -> frozenset[str]:
        """Every path the index holds now (kept until it changes, like the private notes)."""
        version = self.db.version()
        kept = self._paths
        if kept is not None and kept[0] == version:
            return kept[1]
        paths = frozenset(str(row[0]) for row in self.db.rows("SELECT path FROM docs"))
        self._paths = (version, paths)
        return paths

    def _compute(self, version: tuple[int, int, int]) -> Private:
        gate = self.gate
        own: dict[int, str] = {
            int(doc): str(path) for doc, path in self.db.rows("SELECT id, path FROM docs WHERE private = 1")
        }
        for (top,) in self.db.rows("SELECT DISTINCT folder FROM docs"):
            if gate.covers(str(top)):
                rows = self.db.rows("SELECT id, path FROM docs WHERE folder = ?", (top,))
                own.update((int(doc), str(path)) for doc, path in rows if gate.never(str(path)))
        people = self.db.rows(
            "SELECT addresses.doc, addresses.address FROM docs JOIN addresses ON addresses.doc = docs.id "
            f"WHERE docs.person = 1 AND addresses.field IN ({marks(len(PERSON_ADDRESS_KEYS))})",
            PERSON_ADDRESS_KEYS,
        )
        # A private person: every People note naming the address is private (a private note about someone who
        # also has a public People note is a private note, not a private person).
        public = {str(address) for doc, address in people if doc not in own}
        addresses = frozenset(str(address) for doc, address in people if doc in own and str(address) not in public)
        own.update(self._docs_naming("addresses", "address", addresses, fields=MAIL_FIELDS))
        holders: dict[str, set[str]] = {}
        for chunk in chunks(sorted(own)):
            for key, doc in self.db.rows(f"SELECT key, doc FROM threads WHERE doc IN ({marks(len(chunk))})", chunk):
                holders.setdefault(str(key), set()).add(own[int(doc)])
        keys = {key: frozenset(paths) for key, paths in holders.items()}
        hidden = dict(own)
        hidden.update(self._docs_naming("threads", "key", keys))
        return Private(
            version, gate.key, frozenset(own), frozenset(hidden), frozenset(hidden.values()), keys, addresses
        )

    def _docs_naming(
        self, table: str, column: str, values: Iterable[str], fields: Sequence[str] = ()
    ) -> Iterator[tuple[int, str]]:
        """(id, path) of each note with a row of `table` (addresses, threads) whose `column` is one of `values`
        (and, for addresses, whose field is one of `fields`), asked a chunk of values at a time."""
        field = f" AND {table}.field IN ({marks(len(fields))})" if fields else ""
        for chunk in chunks(sorted(values)):
            for doc, path in self.db.rows(
                f"SELECT DISTINCT docs.id, docs.path FROM {table} JOIN docs ON docs.id = {table}.doc "
                f"WHERE {table}.{column} IN ({marks(len(chunk))}){field}",
                (*chunk, *fields),
            ):
                yield int(doc), str(path)

    def private_keys(self, keys: Iterable[str], besides: str | None = None) -> frozenset[str]:
        """Those of these thread keys that a note private by itself holds (not the note at `besides`), as of the
        index's last sync (VaultIndex.private_keys syncs first)."""
        held = self.last().keys  # no query: the private notes' keys are kept with them (the caller synced)
        return frozenset(key for key in keys if (paths := held.get(key)) and paths - {besides})
