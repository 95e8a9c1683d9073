"""One index of the vault: literal search far faster than a scan, related notes, people by address.

    index = VaultIndex.open(vault_root, state_dir=settings.h0_state_dir, disclosure=Disclosure(("journal",)))
    index.search("quarterly invoice", folder="Done", limit=20, offset=0)   # -> SearchPage
    index.related(text=email_body, limit=5)                               # -> [Related(path, score, why)]
    index.notes_for_address("dana@example.com")                           # -> [path, …] People notes first
    index.is_private("Journal/2026-11-24.md")                             # -> bool
    index.shown(["Notes/a.md", "Journal/b.md"])                           # -> ["Notes/a.md"]

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
Private notes (h0.vault.disclosure: marked or tagged private, unreadable, in a private folder, a private
person's mail, or in a private thread) are indexed (for the owner's own look-ups) but never returned
unless the caller asks for them; which they are is worked out from the index as it is now
(h0.vault.index.privacy), so a changed PRIVATE_FOLDERS counts at once. `gate` is the disclosure gate
that knows the private people this index holds.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from h0.errors import InvalidRequest
from h0.platform.memory import release_free_memory
from h0.state.binds import marks
from h0.vault.disclosure import Disclosure
from h0.vault.index.about import About, notes_about, outside_folders
from h0.vault.index.db import VISIBLE, Damaged, IndexDB
from h0.vault.index.extract import Extracted, Signature, read_note_file
from h0.vault.index.gather import (
    BATCH,
    CHILD_FROM,
    Reconciled,
    build_in_child,
    compare,
    index_file,
    indexable,
    relative_path,
    take_in,
    walk_notes,
)
from h0.vault.index.names import NoteNames
from h0.vault.index.privacy import IndexPrivacy
from h0.vault.index.query import SearchPage, search_page
from h0.vault.index.reads import NoteCheck
from h0.vault.index.related import Related, related_notes
from h0.vault.paths import link_key, nfc
from h0.vault.person import PERSON_ADDRESS_KEYS
from h0.vault.search import PhraseMatcher, check_query


class VaultIndex:
    """The index of one vault. Thread-safe; any number of processes may share its file."""

    def __init__(self, root: Path, db_path: Path | None, disclosure: Disclosure | None = None) -> None:
        self.root = Path(os.path.abspath(root))
        self._prefix = os.path.join(str(self.root), "")  # the root and its separator: paths below it start so
        self.disclosure = disclosure if disclosure is not None else Disclosure.for_vault(self.root)
        self.db = IndexDB(db_path, lambda doc: self.privacy.private(doc))
        self.privacy = IndexPrivacy(self.db, self.disclosure)
        self.gate = self.disclosure.with_people(self.private_addresses)  # the gate, knowing this index's people
        self.names = NoteNames(self.db.rows)  # the notes' titles and aliases, kept while none changes
        self._pending: set[str] = set()
        self._everything = False
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()

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

    @classmethod
    def shared(
        cls, root: Path, state_dir: Path | None = None, disclosure: Disclosure | None = None, *, look: bool = False
    ) -> VaultIndex:
        """This process's index of `root` for these private folders (opened on first use, kept while held): drafting
        and the reports of one process ask one index. `look`: compare one already open with the vault now."""
        gate = disclosure if disclosure is not None else Disclosure.for_vault(root)
        key = (os.path.normcase(os.path.abspath(root)), str(state_dir), gate.key)
        with _shared_lock:
            found = _shared.get(key)
            if found is None:
                found = _shared[key] = cls.open(root, state_dir, gate)
                return found
        if look:
            found.everything_changed()
            found.sync()
        return found

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

    def sync(self, *, wait: bool = True, settle: bool = True) -> None:
        """Apply what `changed` and `everything_changed` reported, and rebuild a damaged index file.
        `wait=False`: when another thread is applying them already, go on with the index as it is
        (a reader that re-checks what it reads — drafting reads each note from disk — need not queue
        behind a burst of writes). `settle=False`: leave finding the private notes of the index's version of
        now to the caller's next look-up (`NoteCheck`: the version comes with the note's row)."""
        if not wait:
            if not self._sync_lock.acquire(blocking=False):
                self.privacy.current()
                return
            self._sync_lock.release()  # free: take it the usual way (a writer may slip in; then we wait once)
        with self._sync_lock:
            if not self.db.healthy():
                self.db.rebuild_file("the index file was deleted, truncated or corrupted")
                with self._lock:
                    self._everything = True
            with self._lock:
                pending, self._pending = self._pending, set()
                everything, self._everything = self._everything, False
            try:
                if everything:
                    self._reconcile()
                elif pending:
                    self._refresh(sorted(pending))
                if settle:
                    self.privacy.current()  # what every query's h0_private answers from
            except Damaged as exc:
                self.db.rebuild_file(str(exc))
                self._reconcile()
                self.privacy.current()

    def reconcile(self, *, elsewhere: bool = True) -> Reconciled:
        """Compare every note's signature with the index; index what is new or changed, drop what went.
        `elsewhere`: a large build (CHILD_FROM notes or more) is made by a child process."""
        with self._sync_lock:
            try:
                return self._reconcile(elsewhere=elsewhere)
            except Damaged as exc:
                self.db.rebuild_file(str(exc))
                return self._reconcile(elsewhere=elsewhere)

    def _reconcile(self, *, elsewhere: bool = True) -> Reconciled:
        todo, gone, report = compare(self.db, self.root)
        if elsewhere and len(todo) >= CHILD_FROM and self.db.path is not None:
            # A large (re)build in a child process: this one never holds thousands of parsed notes, whose freed memory
            # stays fragmented in the interpreter (a long-lived server's RSS). Then only what changed meanwhile.
            built = len(todo) if build_in_child(self.root, self.db.path) else 0
            del todo, gone
            report = self._reconcile(elsewhere=False)  # what the child could not do, and what changed meanwhile
            report.indexed, report.unchanged = report.indexed + built, max(0, report.unchanged - built)
            return report
        take_in(self.db, todo, gone, report)
        if report.indexed + report.removed >= BATCH:
            release_free_memory()  # a bulk build's freed heap back to the OS (a server keeps running after it)
        return report

    def _refresh(self, rels: list[str]) -> None:
        known = {path: Signature(m, s, i) for path, m, s, i in self.db.signatures(rels)}
        upserts: list[Extracted] = []
        deletes: list[str] = []
        for rel in rels:
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
            note = read_note_file(abs_path, rel) if indexable(rel) else None
            if note is None:
                if rel in known:
                    deletes.append(rel)
            else:
                upserts.append(note)
        self.db.write(upserts, deletes)
        with self._lock:
            again = self._everything
            self._everything = False
        if again:
            self._reconcile()

    def use_disclosure(self, disclosure: Disclosure) -> None:
        """Judge private folders by this gate from the next answer on: the owner changed which folders are
        private (`.h0/private-folders`), and a long-lived process must not answer by the record it started with."""
        if disclosure.key == self.disclosure.key:
            return
        self.disclosure = disclosure
        self.gate = disclosure.with_people(self.private_addresses)
        self.privacy.use(disclosure)

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
        return search_page(self, matcher, folder, limit, offset, include_private)

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

    def people(self) -> list[tuple[str, str]]:
        """(the People note's name, an address it names: h0.vault.person.person_addresses) for every People note,
        private ones included: the attack checks compare a sender with them and show none of their words."""
        self.sync()
        rows = self.db.rows(
            "SELECT DISTINCT docs.path, addresses.address FROM addresses JOIN docs ON docs.id = addresses.doc "
            f"WHERE docs.person = 1 AND addresses.field IN ({marks(len(PERSON_ADDRESS_KEYS))})",
            PERSON_ADDRESS_KEYS,
        )
        return [(str(row[0]).rpartition("/")[2].removesuffix(".md"), str(row[1])) for row in rows]

    def is_private(self, path: str) -> bool:
        """Whether the note at `path` is private (h0.vault.disclosure), judged from the index (a note it does not
        hold is read now; one that cannot be read is private)."""
        rel = relative_path(path, self.root, self._prefix)
        if rel is None:
            return True
        self.sync()
        if rel in self.privacy.indexed():
            return rel in self.privacy.current().paths
        note = read_note_file(os.path.join(self.root, *rel.split("/")), rel)
        if note is None or note.private:
            return True
        keys = self.private_keys(note.threads, besides=rel)
        return self.gate.private(rel, note.frontmatter, keys, note.body)

    def shown(self, paths: Sequence[str]) -> list[str]:
        """Those of these vault-relative note paths a consumer other than the owner may see, in their order: the
        index's answer (a path it does not hold yet is taken in first; one it cannot hold is not shown)."""
        self.sync()
        indexed = self.privacy.indexed()
        missing = [rel for rel in paths if nfc(rel) not in indexed and indexable(nfc(rel))]
        if missing:
            self.changed(missing)
            self.sync()
            indexed = self.privacy.indexed()
        hidden = self.privacy.current().paths
        return [rel for rel in paths if (key := nfc(rel)) in indexed and key not in hidden]

    def private_keys(self, keys: Iterable[str], *, besides: str | None = None) -> frozenset[str]:
        """Those of these thread keys that a private note holds (not the note at `besides`): what makes a
        thread private (h0.vault.disclosure.Disclosure.private). Every key is looked at, however many."""
        wanted = set(keys)
        if not wanted:
            return frozenset()
        self.sync()
        return self.privacy.private_keys(wanted, besides)

    def notes_at(self, path: str) -> list[str]:
        """The note the index holds at `path`, else the notes of that name wherever they are now (an email moves
        from Needs_Action/ to Done/, a draft from Approved/ to Done/); none when it holds neither."""
        rel = relative_path(path, self.root, self._prefix)
        if rel is None:
            return []
        self.sync()
        if rel in self.privacy.indexed():
            return [rel]
        return [
            str(row[0]) for row in self.db.rows("SELECT path FROM docs WHERE name = ? ORDER BY path", (link_key(rel),))
        ]

    def private_addresses(self) -> frozenset[str]:
        """The private people's addresses (lower-cased: only private People notes name them), whose mail is
        private (h0.vault.disclosure)."""
        self.sync(wait=False)
        return self.privacy.last().addresses  # as that sync left them

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

    def parses(self, folders: Iterable[str]) -> list[tuple[str, int, int, int, str]]:
        """(path, mtime_ns, size, inode, frontmatter JSON) of each note of these top-level folders whose
        frontmatter the index read without a problem, as of its last sync: a listing's parse to lend."""
        wanted = list(folders)
        rows = self.db.rows(
            "SELECT path, mtime_ns, size, ino, frontmatter FROM docs WHERE problem IS NULL "
            f"AND folder IN ({marks(len(wanted))})",
            wanted,
        )
        return [(str(p), int(m), int(s), int(i), str(f)) for p, m, s, i, f in rows]

    def checking(self) -> NoteCheck:
        """A check of one note read from disk by this index, brought up to date first (h0.vault.index.reads)."""
        self.sync(settle=False)
        return NoteCheck(self)

    def frontmatter_read(self, path: str, digest: str) -> dict[str, Any] | None:
        """The frontmatter the index read from the note at `path` when its bytes had this content hash
        (h0.vault.note.content_hash), as JSON data; None when it holds no such read (another version of the
        file, or one whose properties it could not read). A reader of those same bytes takes it instead of
        parsing them again (h0.vault.note.parse's `lent`): equal hashes are equal bytes, whatever the file's
        signature says. Never waits for a sync, never raises: a miss only means "parse it yourself"."""
        try:
            rows = self.db.rows(
                "SELECT frontmatter FROM docs WHERE path = ? AND hash = ? AND problem IS NULL", (nfc(path), digest)
            )
            data = from_json(rows[0][0], cache_strings="keys") if rows else None
        except (Damaged, sqlite3.Error, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def count(self) -> int:
        return int(self.db.rows("SELECT count(*) FROM docs")[0][0])


_shared: weakref.WeakValueDictionary[tuple[object, ...], VaultIndex] = weakref.WeakValueDictionary()
_shared_lock = threading.Lock()

__all__ = ["About", "Reconciled", "Related", "SearchPage", "VaultIndex", "walk_notes"]
