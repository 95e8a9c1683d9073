"""One index of the vault: literal search far faster than a scan, related notes, people by address.

    index = VaultIndex.open(vault_root, state_dir=settings.h0_state_dir, disclosure=Disclosure(("journal",)))
    index.search("quarterly invoice", folder="Done", limit=20, offset=0)   # -> SearchPage
    index.related(text=email_body, limit=5)                               # -> [Related(path, score, why)]
    index.notes_for_address("dana@example.com")                           # -> [path, …] People notes first
    index.is_private("Journal/2026-11-24.md")                             # -> bool

Where: SQLite (FTS5, from the standard library) in H0's state folder for this vault, beside the
send ledger — outside the notes, so neither Obsidian nor a sync tool (iCloud, Dropbox, Syncthing)
ever sees or copies a live database between machines; in memory when that folder cannot be written.
Fresh: `reconcile()` compares every note's (mtime, size, inode) with the index at start — a vault
edited while H0 was stopped is right at once — and `changed(paths)` / `sync()` apply what a watcher
reports (the vault server runs one; each query first applies what it has reported). Never stale: a
result whose file changed since it was indexed is read again before it is returned (and re-indexed).
Complete: a search checks each candidate against the note's bytes by the full scan's own rule, and
the candidates are a superset of the notes holding the phrase (h0.vault.index.query).

What it never holds: `Logs/`, hidden folders (`.obsidian/`, `.h0/`, `.trash/`), anything not a
regular `*.md` file (a FIFO named `x.md` is never opened), notes deeper than MAX_FOLDER_DEPTH.
Private notes (h0.vault.disclosure: marked private, in a private folder, or in a private thread) are
indexed (for the owner's own look-ups) but never returned unless the caller asks for them; a note's
folder and thread are judged when asked (db.VISIBLE), so a changed PRIVATE_FOLDERS counts at once.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from h0.errors import InternalError, InvalidRequest
from h0.vault.disclosure import Disclosure
from h0.vault.index.about import About, notes_about, outside_folders
from h0.vault.index.db import PRIVATE_PEER, VISIBLE, Damaged, IndexDB
from h0.vault.index.extract import Extracted, Signature, read_note_file
from h0.vault.index.gather import (
    BATCH,
    MAX_DEFERRED,
    Reconciled,
    extract_all,
    index_file,
    indexable,
    own_mail,
    relative_path,
    walk_notes,
)
from h0.vault.index.names import NoteNames
from h0.vault.index.query import every_row, plan, ranked
from h0.vault.index.related import Related, related_notes
from h0.vault.own_writes import OwnWrites
from h0.vault.search import PhraseMatcher, SearchHit, check_query, read_file


@dataclass(frozen=True, slots=True)
class SearchPage:
    hits: list[SearchHit]
    more: bool  # more notes match past this page
    offset: int = 0


class VaultIndex:
    """The index of one vault. Thread-safe; any number of processes may share its file."""

    def __init__(self, root: Path, db_path: Path | None, disclosure: Disclosure | None = None) -> None:
        self.root = Path(os.path.abspath(root))
        self._prefix = os.path.join(str(self.root), "")  # the root and its separator: paths below it start so
        self.disclosure = disclosure if disclosure is not None else Disclosure.for_vault(self.root)
        self.db = IndexDB(db_path, self.disclosure.never)
        self.names = NoteNames(self.db.rows)  # the notes' titles and aliases, kept while none changes
        self._pending: set[str] = set()
        self._held: set[str] = set()  # changed notes H0 was writing at the last sync (see `_refresh`)
        self._held_mark = 0
        self._deferred: set[str] = set()  # H0's own writes to its mail folders, for when H0 is idle (`catch_up`)
        self._everything = False
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self.written: OwnWrites | None = None  # what H0 wrote lately (the daemon's): taken in without a parse

    @classmethod
    def open(
        cls,
        root: Path,
        state_dir: Path | None = None,
        disclosure: Disclosure | None = None,
        *,
        reconcile: bool = True,
    ) -> VaultIndex:
        """The index of `root` in its state folder (memory when that cannot be written), reconciled."""
        index = cls(root, index_file(root, state_dir), disclosure)
        if reconcile:
            index.reconcile()
        return index

    # ------------------------------------------------------------------ keeping it fresh

    def changed(self, paths: Iterable[str]) -> None:
        """Note that these paths (vault-relative or absolute) changed, appeared or went; applied by `sync`."""
        rels = [rel for rel in (relative_path(p, self.root, self._prefix) for p in paths) if rel is not None]
        with self._lock:
            self._pending.update(rels)

    def everything_changed(self) -> None:
        """The watcher lost events (or a folder moved): the next `sync` reconciles the whole vault."""
        with self._lock:
            self._everything = True

    def sync(self, *, wait: bool = True) -> None:
        """Apply what `changed` and `everything_changed` reported, and rebuild a damaged index file.
        `wait=False`: when another thread is applying them already, go on with the index as it is
        (a reader that re-checks what it reads — drafting reads each note from disk — need not queue
        behind a burst of writes)."""
        if not wait:
            if not self._sync_lock.acquire(blocking=False):
                return
            self._sync_lock.release()  # free: take it the usual way (a writer may slip in; then we wait once)
        with self._sync_lock:
            if not self.db.healthy():
                self.db.rebuild_file("the index file was deleted, truncated or corrupted")
                with self._lock:
                    self._everything = True
            with self._lock:
                if self._held and self.written is not None and self.written.landed() != self._held_mark:
                    self._pending |= self._held
                    self._held = set()
                if self._deferred and self.written is None:  # no daemon says when it is idle any more
                    self._pending, self._deferred = self._pending | self._deferred, set()
                pending, self._pending = self._pending, set()
                everything, self._everything = self._everything, False
            try:
                if everything:
                    self._reconcile()
                elif pending:
                    self._refresh(sorted(pending))
            except Damaged as exc:
                self.db.rebuild_file(str(exc))
                self._reconcile()

    def catch_up(self) -> None:
        """Take in the writes left for H0's idle time (h0.vault.own_writes: `more_coming`, `idle`)."""
        with self._lock:
            if not self._deferred:
                return
            self._pending |= self._deferred
            self._deferred = set()
        self.sync()

    def reconcile(self) -> Reconciled:
        """Compare every note's signature with the index; index what is new or changed, drop what went."""
        with self._sync_lock:
            try:
                return self._reconcile()
            except Damaged as exc:
                self.db.rebuild_file(str(exc))
                return self._reconcile()

    def _reconcile(self) -> Reconciled:
        known = {
            path: Signature(m, s, i) for path, m, s, i in self.db.rows("SELECT path, mtime_ns, size, ino FROM docs")
        }
        report = Reconciled()
        todo: list[tuple[str, str]] = []
        seen: set[str] = set()
        for rel, abs_path, info in walk_notes(self.root):
            seen.add(rel)
            if known.get(rel) == Signature.of(info):
                report.unchanged += 1
            else:
                todo.append((abs_path, rel))
        gone = [path for path in known if path not in seen]
        for batch in extract_all(todo):
            self.db.write(batch, (), learn=False)
            report.indexed += len(batch)
        self.db.write([], gone, learn=False)
        report.removed = len(gone)
        if report.indexed:
            self.db.learn_all_terms()
        if report.indexed + report.removed >= BATCH:
            self.db.checkpoint()
        return report

    def _refresh(self, rels: list[str]) -> None:
        known = {path: Signature(m, s, i) for path, m, s, i in self._signatures(rels)}
        upserts: list[Extracted] = []
        as_written = self.written.known if self.written is not None else None  # H0's own writes and parses
        parsed = self.written.parsed if self.written is not None else None  # this parse, for triage's read
        deletes: list[str] = []
        landed = self.written.landed() if self.written is not None else 0
        later: list[str] = []  # notes H0 is writing: taken in as written once the write is answered
        defer = self.written is not None and len(self._deferred) < MAX_DEFERRED and self.written.more_coming()
        deferred: list[str] = []
        for rel in rels:
            if self.written is not None and self.written.in_flight(rel):
                later.append(rel)
                continue
            if defer and own_mail(rel) and self.written is not None and self.written.latest(rel) is not None:
                deferred.append(rel)
                continue
            abs_path = os.path.join(self.root, *rel.split("/"))
            try:
                info = os.lstat(abs_path)
            except OSError:
                info = None
            if info is not None and stat.S_ISDIR(info.st_mode):  # a folder appeared or moved in: its notes too
                self.everything_changed()
                continue
            if info is not None and known.get(rel) == Signature.of(info):
                continue  # unchanged: an event for its access time, or for a write this index already has
            note = read_note_file(abs_path, rel, as_written, parsed) if indexable(rel) else None
            if note is None:
                if rel in known:
                    deletes.append(rel)
            else:
                upserts.append(note)
        self.db.write(upserts, deletes)
        with self._lock:
            self._deferred.update(deferred)
            if later:
                self._held.update(later)
                self._held_mark = landed  # looked at again once another batch of H0's changes is answered
            again = self._everything
            self._everything = False
        if again:
            self._reconcile()

    def _signatures(self, rels: list[str]) -> list[tuple[str, int, int, int]]:
        found: list[tuple[str, int, int, int]] = []
        for start in range(0, len(rels), 500):
            chunk = rels[start : start + 500]
            found += self.db.rows(
                f"SELECT path, mtime_ns, size, ino FROM docs WHERE path IN ({','.join('?' * len(chunk))})", chunk
            )
        return found

    # ------------------------------------------------------------------ search

    def search(
        self, query: str, *, folder: str = "", limit: int = 50, offset: int = 0, include_private: bool = False
    ) -> SearchPage:
        """Notes holding `query` (literal, case-insensitive; body and frontmatter values), best first.

        The same notes a full scan of the folder finds; `limit` of them from `offset`, and whether
        there are more. `folder` is vault-relative ('' for the whole vault), already confined."""
        matcher = PhraseMatcher(check_query(query))
        if limit < 1 or offset < 0:
            raise InvalidRequest("limit must be at least 1 and offset at least 0.", limit=limit, offset=offset)
        self.sync()
        found = plan(self.db, query)
        if found.empty:
            return SearchPage([], False, offset)
        where, args = self._scope(folder, include_private)
        if found.expression is None:
            rows = self._guarded(
                every_row(self.db, f"SELECT path, mtime_ns, size, ino FROM docs WHERE {where} ORDER BY path", args)
            )
        else:
            rows = self._guarded(ranked(self.db, found.expression, where, args, first=offset + limit + 16))
        hits: list[SearchHit] = []
        stale: list[str] = []
        skipped = 0
        for path, mtime_ns, size, ino in rows:
            read = read_file(os.path.join(self.root, *path.split("/")))
            if read is None:
                stale.append(path)
                continue
            data, info = read
            if Signature.of(info) != Signature(mtime_ns, size, ino):
                stale.append(path)  # answered from what is on disk now; re-indexed below
            hit = matcher.first(data)
            if hit is None:
                continue
            if skipped < offset:
                skipped += 1
                continue
            if len(hits) == limit:
                self._later(stale)
                return SearchPage(hits, True, offset)
            hits.append(SearchHit(path, hit[0], hit[1]))
        self._later(stale)
        return SearchPage(hits, False, offset)

    def _later(self, stale: list[str]) -> None:
        if stale:
            self.changed(stale)

    def _scope(self, folder: str, include_private: bool) -> tuple[str, list[object]]:
        clauses: list[str] = ["1"]
        args: list[object] = []
        if folder:
            clauses.append("(docs.path LIKE ? ESCAPE '\\')")
            args.append(_like_prefix(folder.strip("/")) + "/%")
        if not include_private:
            clauses.append(VISIBLE)
        return " AND ".join(clauses), args

    def _guarded(self, rows: Iterator[tuple[str, int, int, int]]) -> Iterator[tuple[str, int, int, int]]:
        """Rows read from the index; on a damaged file it is rebuilt at the next sync (a retryable error now)."""
        try:
            yield from rows
        except sqlite3.DatabaseError as exc:
            self.everything_changed()
            raise InternalError(
                f"The vault index could not be read ({exc}); it is being rebuilt, ask again.", retryable=True
            ) from exc

    # ------------------------------------------------------------------ people, privacy, related

    def notes_for_address(
        self, address: str, *, include_private: bool = False, skip_folders: Iterable[str] = (), wait: bool = True
    ) -> list[str]:
        """Notes naming `address` (People notes — email/emails/aliases in their frontmatter — first);
        notes in `skip_folders` (top-level folders, any case: a sender's hundreds of emails) left out.
        `wait`: as `sync`'s."""
        self.sync(wait=wait)
        # The skipped folders are passed over in the address's index entries (never a sender's thousands of
        # emails read); the gate's test (a Python function and a thread look-up a row) only for the notes left.
        hits, args = outside_folders(
            "SELECT doc FROM addresses",
            "address = ?",
            [address.strip().lower()],
            [f.lower() for f in skip_folders if f],
        )
        visible = "" if include_private else f" AND {VISIBLE}"
        rows = self.db.rows(
            f"SELECT DISTINCT docs.path, docs.person FROM docs WHERE docs.id IN ({hits}){visible} "
            "ORDER BY docs.person DESC, docs.path",
            args,
        )
        return [row[0] for row in rows]

    def person_addresses(self) -> list[str]:
        """Every address a People note names (email/emails/aliases), private ones included: the
        phishing check compares a sender's domain with them and shows none of their words."""
        self.sync()
        rows = self.db.rows(
            "SELECT DISTINCT addresses.address FROM addresses JOIN docs ON docs.id = addresses.doc WHERE docs.person = 1"
        )
        return [str(row[0]) for row in rows]

    def is_private(self, path: str) -> bool:
        """Whether the note at `path` is private (h0.vault.disclosure), its thread judged from the index."""
        rel = relative_path(path, self.root, self._prefix)
        if rel is None:
            return False
        self.sync()
        rows = self.db.rows(f"SELECT {VISIBLE} FROM docs WHERE path = ?", (rel,))
        if rows:
            return not rows[0][0]
        note = read_note_file(os.path.join(self.root, *rel.split("/")), rel)
        return self.disclosure.own_private(rel, note.frontmatter if note else None)

    def private_keys(self, keys: Iterable[str], *, besides: str | None = None) -> frozenset[str]:
        """Those of these thread keys that a private note holds (not the note at `besides`): what makes a
        thread private (h0.vault.disclosure.Disclosure.private)."""
        wanted = sorted(set(keys))[:500]
        if not wanted:
            return frozenset()
        self.sync()
        rows = self.db.rows(
            "SELECT DISTINCT other.key FROM threads other JOIN docs peer ON peer.id = other.doc "
            f"WHERE other.key IN ({','.join('?' * len(wanted))}) AND {PRIVATE_PEER} AND peer.path != ?",
            [*wanted, besides or ""],
        )
        return frozenset(str(row[0]) for row in rows)

    def related(
        self, *, text: str | None = None, path: str | None = None, limit: int = 10, include_private: bool = False
    ) -> list[Related]:
        self.sync()
        return related_notes(self, text=text, path=path, limit=limit, include_private=include_private)

    def about(
        self,
        *,
        text: str,
        addresses: Sequence[str] = (),
        skip_folders: Iterable[str] = (),
        limit: int = 10,
        wait: bool = True,
    ) -> list[About]:
        """The notes an email (`text`, its `addresses`) is about, best first, each with why
        (h0.vault.index.about: people, organisations, names and codes — never a shared common word).
        Private notes never; notes in `skip_folders` (top-level folders) left out. `wait`: as `sync`'s."""
        self.sync(wait=wait)
        return notes_about(self, text=text, addresses=addresses, skip_folders=skip_folders, limit=limit)

    def count(self) -> int:
        return int(self.db.rows("SELECT count(*) FROM docs")[0][0])


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


__all__ = ["About", "Reconciled", "Related", "SearchPage", "VaultIndex", "walk_notes"]
