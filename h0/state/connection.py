"""One vault's state database opened: a SQLite connection per thread (WAL, full sync), its
`BEGIN IMMEDIATE` transactions, and the installation's secret kept next to it."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from h0.errors import InternalError
from h0.state.binds import chunks, marks
from h0.state.schema import SCHEMA, SCHEMA_VERSION
from h0.state.secret import SECRET_FILE, load_or_create_secret

BUSY_TIMEOUT_MS = 30_000
DB_FILE = "state.db"


class Transaction:
    """`with …:` one BEGIN IMMEDIATE transaction: committed when the block ends, rolled back on an exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


class Database:
    """The state database of one vault. Thread-safe: one SQLite connection per thread."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise InternalError(f"Cannot create H0's state folder {self.directory}: {exc.strerror or exc}") from exc
        self.path = self.directory / DB_FILE
        self._local = threading.local()
        self._secret: bytes | None = None
        self._secret_lock = threading.Lock()
        try:
            db = self._db()
            db.executescript(SCHEMA)  # idempotent; executescript commits on its own
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.Error as exc:
            raise self.failure(exc, opening=True) from exc

    def failure(self, exc: sqlite3.Error, *, opening: bool = False, then: str = "") -> InternalError:
        """The typed error for an sqlite error met on this database (`then`: what it means, "; nothing was sent")."""
        return InternalError(f"H0's state database {self.path}{' cannot be opened' if opening else ''}: {exc}{then}")

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")  # a send record must survive a power cut
            self._local.db = db
        return db

    def _tx(self) -> Transaction:
        try:
            return Transaction(self._db())
        except sqlite3.Error as exc:
            raise self.failure(exc, opening=True) from exc

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        try:
            return [dict(row) for row in self._db().execute(sql, args).fetchall()]
        except sqlite3.Error as exc:
            raise self.failure(exc) from exc

    def _write(self, sql: str, args: Sequence[Any]) -> int:
        with self.writing() as db:
            return db.execute(sql, args).rowcount

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """`with state.writing() as db:` — one BEGIN IMMEDIATE transaction, an sqlite error in it rolled back and
        raised as this database's `failure`."""
        try:
            with self._tx() as db:
                yield db
        except sqlite3.Error as exc:
            raise self.failure(exc) from exc

    def transaction(self) -> Transaction:
        """`with state.transaction() as db:` — one BEGIN IMMEDIATE transaction on this thread's connection
        (for the stores built on this database, e.g. h0.followup.ledger); sqlite errors are the caller's to map."""
        return self._tx()

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a read, as dicts; an sqlite error is an InternalError."""
        return self._rows(sql, args)

    def query_in(self, sql: str, values: Iterable[Any], *, before: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of `sql` for each of `values` (repeats dropped, order kept): its one `{}` is an IN list, filled a
        chunk at a time (h0.state.binds); `before`: arguments bound ahead of the list."""
        rows: list[dict[str, Any]] = []
        for chunk in chunks(list(dict.fromkeys(values))):
            rows += self._rows(sql.format(marks(len(chunk))), (*before, *chunk))
        return rows

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # ------------------------------------------------------------------ secret

    @property
    def secret(self) -> bytes:
        with self._secret_lock:
            if self._secret is None:
                self._secret = load_or_create_secret(self.directory / SECRET_FILE)
            return self._secret

    def mac(self, purpose: str, data: bytes | str) -> str:
        """HMAC-SHA256 of `data` under this installation's secret, separated by purpose (hex)."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        return hmac.new(self.secret, purpose.encode("ascii") + b"\0" + raw, hashlib.sha256).hexdigest()
