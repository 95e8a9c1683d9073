"""The index's SQLite database: one connection per thread, writes in one transaction each, and a fresh
file when the old one is damaged or deleted (said once in the log). Its tables: h0.vault.index.schema
(`entities` computed once when a note changes, so a reply's context is a few look-ups, never a
tokenization of candidate notes). WAL, a busy timeout: two processes (the daemon's vault server and
Claude Code's) read and update it at once, each write one `BEGIN IMMEDIATE` transaction.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing, nullcontext
from pathlib import Path
from typing import Any

from loguru import logger

from h0.state.binds import chunks, marks
from h0.vault.index.extract import Extracted, frontmatter_json
from h0.vault.index.names import NAMES_SCHEMA
from h0.vault.index.schema import BUSY_TIMEOUT_MS, CACHE_KIB, SCHEMA, SCHEMA_VERSION
from h0.vault.paths import link_key

# A row a consumer other than the human may see (h0.vault.disclosure): `h0_private`, registered on each
# connection, answers from the index's private notes as of its last sync (h0.vault.index.privacy: its own
# marks, its folder judged with the settings of now, a private person's mail, its thread).
VISIBLE = "NOT h0_private(docs.id)"
_TOKENIZER = "unicode61 remove_diacritics 2"  # the same as fts's (schema.py): a query is tokenized as the notes were


def busy(exc: sqlite3.Error) -> bool:
    """Another connection holds the database (SQLITE_BUSY, SQLITE_LOCKED and their extended codes): try
    again later. Any other error means the index file cannot be trusted."""
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class Damaged(Exception):
    """The database file is not a usable index (deleted, truncated, corrupted): rebuild it."""


def pack(note: Extracted) -> bytes:
    """title, meta and body, exactly as indexed (needed again to delete the row from `fts`)."""
    if note.packed is not None:
        return note.packed
    return zlib.compress(f"{note.title}\x00{note.meta}\x00{note.body}".encode("utf-8", "surrogatepass"), 1)


def unpack(packed: bytes) -> tuple[str, str, str]:
    title, meta, body = zlib.decompress(packed).decode("utf-8", "surrogatepass").split("\x00", 2)
    return title, meta, body


class IndexDB:
    """The index file of one vault (`path`), or an in-memory one (`path` None: a state folder that
    cannot be written). Thread-safe: one connection per thread; writes serialised by SQLite."""

    def __init__(self, path: Path | None, private: Callable[[int], bool] = lambda doc: False) -> None:
        self.path = path
        self.private = private  # whether a row is private (h0.vault.index.privacy), as the SQL function h0_private(id)
        # This process's writes (each a new number, handed out after its commit): with SQLite's data_version (other
        # connections' commits), the index's version.
        self.writes = 0
        self._write_numbers = itertools.count(1)
        self._local = threading.local()
        self._memory: sqlite3.Connection | None = None
        self._memory_lock = threading.RLock()
        self._generation = 0  # bumped on a rebuild: threads drop their old connections
        self._whole: tuple[int, int, int, int] | None = None  # the file's status when last found whole
        self._create()

    # ------------------------------------------------------------------ connections

    def _connect(self) -> sqlite3.Connection:
        if self.path is None:
            db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        else:
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # a rebuildable cache: a power cut costs a rebuild at most
        db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        db.create_function("h0_private", 1, lambda doc: int(self.private(int(doc))))
        db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.tok USING fts5(t, tokenize='{_TOKENIZER}')")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.tok_vocab USING fts5vocab('temp', 'tok', 'row')")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.tok_at USING fts5vocab('temp', 'tok', 'instance')")
        return db

    def db(self) -> sqlite3.Connection:
        if self.path is None:
            if self._memory is None:
                self._memory = self._connect()
            return self._memory
        cached = getattr(self._local, "db", None)
        if cached is not None and cached[0] == self._generation:
            connection: sqlite3.Connection = cached[1]  # this thread's, of the current generation
            return connection
        if cached is not None:
            cached[1].close()
        db = self._connect()
        self._local.db = (self._generation, db)
        return db

    def _create(self) -> None:
        try:
            db = self.db()
            db.executescript(SCHEMA + NAMES_SCHEMA)  # with the names' change token
            row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if row is None:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise Damaged(f"schema {row[0]}, expected {SCHEMA_VERSION}")
        except (sqlite3.DatabaseError, Damaged) as exc:
            self.rebuild_file(str(exc))

    def rebuild_file(self, why: str) -> None:
        """Start over with an empty index file (the caller re-indexes the vault)."""
        logger.warning("the vault index {} is not usable ({}); rebuilding it", self.path or "(in memory)", why)
        with self._memory_lock:
            self._generation += 1
            cached = getattr(self._local, "db", None)
            if cached is not None:
                try:
                    cached[1].close()
                except sqlite3.Error:
                    pass
                self._local.db = None
            if self.path is None:
                self._memory = None
            else:
                for suffix in ("", "-wal", "-shm"):
                    try:
                        os.unlink(f"{self.path}{suffix}")
                    except FileNotFoundError:
                        pass
                    except OSError as exc:
                        logger.warning("could not remove {}{}: {}", self.path, suffix, exc)
            db = self.db()
            db.executescript(SCHEMA + NAMES_SCHEMA)  # with the names' change token
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))

    def healthy(self) -> bool:
        """Whether the file is still a whole index (deleted, truncated or overwritten under us: no).

        Read from the file itself, not through SQLite, whose page cache would go on answering from
        a file someone truncated: its 100-byte header (the magic string, the page size and count)
        against its size. Damage deeper inside is met by the query that reads it (Damaged: rebuild). A file
        with the status (inode, size, mtime) it had when last found whole is not read again (each query asks)."""
        if self.path is not None:
            try:
                status = os.stat(self.path)
                signature = (status.st_ino, status.st_size, status.st_mtime_ns, self._generation)
                if signature == self._whole:
                    return True
                with open(self.path, "rb") as handle:
                    header = handle.read(100)
                    size = os.fstat(handle.fileno()).st_size
            except OSError:
                return False
            if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
                return False
            page_size = int.from_bytes(header[16:18], "big")
            page_size = 65536 if page_size == 1 else page_size
            pages = int.from_bytes(header[28:32], "big")
            valid_for = int.from_bytes(header[92:96], "big")
            changes = int.from_bytes(header[24:28], "big")
            if valid_for == changes and size < page_size * pages and not self._whole_to_sqlite():
                return False
        try:
            self.db().execute("SELECT count(*) FROM meta").fetchone()
        except sqlite3.DatabaseError:
            return False
        if self.path is not None:
            self._whole = signature
        return True

    def _whole_to_sqlite(self) -> bool:
        """Whether a fresh connection (no page cache) reads the file as whole. A header that counts more pages
        than the file holds is what a truncated file shows, and also, for an instant, what another process's
        checkpoint shows: it copies the log's pages into the file in page order, the header first, before the
        file has grown. SQLite reads through the log and tells the two apart; the index is rebuilt only when
        it too finds the file damaged (deleting a whole index under another process would damage it)."""
        try:
            with closing(sqlite3.connect(str(self.path), timeout=5)) as fresh:
                row = fresh.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError:
            return False
        return row is not None and row[0] == "ok"

    def version(self) -> tuple[int, int, int]:
        """What changes whenever the index does, in this process or another: (the file's generation, this
        process's writes, SQLite's data_version of this thread's connection)."""
        try:
            changed = int(self.db().execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            if busy(exc):
                raise
            raise Damaged(str(exc)) from exc
        return self.versioned(changed)

    def versioned(self, data_version: int) -> tuple[int, int, int]:
        """The index's version (`version`) for SQLite's data_version as a query saw it (pragma_data_version())."""
        return self._generation, self.writes, data_version

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:  # sqlite3.Row or tuples, by row_factory
        try:
            return self.db().execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            if busy(exc):
                raise
            raise Damaged(str(exc)) from exc

    def signatures(self, paths: Sequence[str]) -> list[tuple[str, int, int, int]]:
        """(path, mtime_ns, size, ino) of those of `paths` the index holds."""
        found: list[tuple[str, int, int, int]] = []
        for chunk in chunks(paths):
            found += self.rows(f"SELECT path, mtime_ns, size, ino FROM docs WHERE path IN ({marks(len(chunk))})", chunk)
        return found

    # ------------------------------------------------------------------ writes

    def write(self, upserts: Sequence[Extracted], deletes: Iterable[str], *, learn: bool = True) -> None:
        """Index `upserts` (new or changed notes) and drop `deletes` (paths), in one transaction.
        `learn=False` leaves their terms to one `learn_all_terms()` at the end of a bulk build."""
        deletes = list(deletes)
        if not upserts and not deletes:
            return
        db = self.db()
        try:
            with self._memory_lock if self.path is None else nullcontext():
                db.execute("BEGIN IMMEDIATE")
                try:
                    for path in deletes:
                        self._drop(db, path)
                    for note in upserts:
                        self._drop(db, note.path)
                        self._insert(db, note)
                    if learn:
                        self._learn_terms(db, upserts)
                    db.execute("COMMIT")
                    self.writes = next(self._write_numbers)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except sqlite3.DatabaseError as exc:
            if busy(exc):
                raise
            raise Damaged(str(exc)) from exc

    @staticmethod
    def _drop(db: sqlite3.Connection, path: str) -> None:
        row = db.execute("SELECT id, packed FROM docs WHERE path = ?", (path,)).fetchone()
        if row is None:
            return
        doc, packed = row
        title, meta, body = unpack(packed)
        db.execute(
            "INSERT INTO fts(fts, rowid, title, meta, body) VALUES ('delete', ?, ?, ?, ?)", (doc, title, meta, body)
        )
        db.execute("DELETE FROM docs WHERE id = ?", (doc,))
        db.execute("DELETE FROM addresses WHERE doc = ?", (doc,))
        db.execute("DELETE FROM links WHERE doc = ?", (doc,))
        db.execute("DELETE FROM threads WHERE doc = ?", (doc,))
        db.execute("DELETE FROM entities WHERE doc = ?", (doc,))

    @staticmethod
    def _insert(db: sqlite3.Connection, note: Extracted) -> None:
        folder = note.path.split("/", 1)[0] if "/" in note.path else ""
        sig = note.signature
        cursor = db.execute(
            "INSERT INTO docs (path, name, folder, mtime_ns, size, ino, hash, private, person, frontmatter, problem, "
            "packed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                note.path,
                link_key(note.path),
                folder,
                sig.mtime_ns,
                sig.size,
                sig.ino,
                note.hash,
                int(note.private),
                int(note.person),
                frontmatter_json(note),
                note.problem,
                pack(note),
            ),
        )
        doc = cursor.lastrowid
        db.execute(
            "INSERT INTO fts (rowid, title, meta, body) VALUES (?, ?, ?, ?)", (doc, note.title, note.meta, note.body)
        )
        if note.addresses:
            db.executemany(
                "INSERT INTO addresses VALUES (?, ?, ?, lower(?))", [(a, doc, f, folder) for a, f in note.addresses]
            )
        if note.links:
            db.executemany("INSERT INTO links VALUES (?, ?)", [(doc, target) for target in note.links])
        if note.threads:
            db.executemany("INSERT INTO threads VALUES (?, ?)", [(doc, key) for key in note.threads])
        if note.entities:
            db.executemany(
                "INSERT INTO entities VALUES (?, ?, ?, lower(?))",
                [(doc, key, kind, folder) for key, kind in note.entities],
            )

    def checkpoint(self) -> None:
        """After a bulk build: fold the write-ahead log into the file now, not in the next small write."""
        if self.path is not None:
            try:
                self.db().execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.DatabaseError as exc:
                logger.debug("index checkpoint skipped: {}", exc)

    def learn_all_terms(self) -> None:
        """After a bulk build: every term of the index's own vocabulary into `terms`, at once."""
        db = self.db()
        try:
            with self._memory_lock if self.path is None else nullcontext():
                db.execute("BEGIN IMMEDIATE")
                try:
                    new = db.execute(
                        "SELECT term FROM fts_vocab WHERE term NOT IN (SELECT term FROM terms_seen)"
                    ).fetchall()
                    self._add_terms(db, new)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except sqlite3.DatabaseError as exc:
            raise Damaged(str(exc)) from exc

    @classmethod
    def _learn_terms(cls, db: sqlite3.Connection, notes: Sequence[Extracted]) -> None:
        """Put the terms of `notes` into `terms` (exactly as fts tokenized them: the same tokenizer)."""
        if not notes:
            return
        db.executemany("INSERT INTO temp.tok (t) VALUES (?)", [(f"{n.title}\n{n.meta}\n{n.body}",) for n in notes])
        new = db.execute("SELECT term FROM temp.tok_vocab WHERE term NOT IN (SELECT term FROM terms_seen)").fetchall()
        db.execute("DELETE FROM temp.tok")
        cls._add_terms(db, new)

    @staticmethod
    def _add_terms(db: sqlite3.Connection, new: list[tuple[str]]) -> None:
        if new:
            db.executemany("INSERT OR IGNORE INTO terms_seen VALUES (?)", new)
            db.executemany("INSERT INTO terms (term) VALUES (?)", new)

    # ------------------------------------------------------------------ reads

    def tokens(self, text: str) -> list[str]:
        """`text` tokenized as the notes were (unicode61, diacritics removed), in order of appearance."""
        db = self.db()
        with self._memory_lock if self.path is None else nullcontext():
            db.execute("INSERT INTO temp.tok (t) VALUES (?)", (text,))
            try:
                placed = db.execute('SELECT term, "offset" FROM temp.tok_at').fetchall()
            finally:
                db.execute("DELETE FROM temp.tok")
        return [term for term, _ in sorted(placed, key=lambda item: item[1])]

    def terms_containing(self, fragment: str, limit: int) -> list[str] | None:
        """Indexed terms that contain `fragment` (already tokenized); None when there are more than `limit`."""
        if len(fragment) >= 3:
            rows = self.rows("SELECT term FROM terms WHERE terms MATCH ? LIMIT ?", (_quoted(fragment), limit + 1))
        else:
            rows = self.rows("SELECT term FROM terms_seen WHERE instr(term, ?) > 0 LIMIT ?", (fragment, limit + 1))
        terms = [row[0] for row in rows]
        return None if len(terms) > limit else terms


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'
