"""H0's durable bookkeeping for one vault: one SQLite database and one secret, outside the notes.

Every process that can send (the daemon's mail server, Claude Code's) shares them, so the
send caps, the idempotency keys and "already sent" hold across processes and restarts:
deleting or syncing `Logs/` no longer resets them (the JSONL logs stay the human-readable
audit trail). A key is claimed and the caps are counted in one `BEGIN IMMEDIATE`
transaction, so two processes can neither pass a cap together nor send one key twice.

Where: `H0_STATE_DIR` if set, else the per-user state folder of the OS (XDG state home,
~/Library/Application Support, %LOCALAPPDATA%), then one sub-folder per vault keyed by the
vault's real path. It holds `state.db` (WAL) and `secret.key` (mode 0600): the
per-installation secret that idempotency keys and Message-IDs derive from, so nobody who
can only read the vault can mint them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from h0.errors import InternalError
from h0.platform.proc import process_alive

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 30_000
SECRET_FILE = "secret.key"
DB_FILE = "state.db"
NOTE_WRITES_DAYS = 7

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
-- One row per Message-ID (derived from its idempotency key): the send's whole history.
CREATE TABLE IF NOT EXISTS sends (
    rfc822_message_id   TEXT PRIMARY KEY,
    idempotency_key     TEXT NOT NULL,
    content_hash        TEXT NOT NULL,
    state               TEXT NOT NULL,      -- pending | sent | failed | unknown
    pid                 INTEGER,
    started_at          REAL NOT NULL,
    sent_epoch          REAL,
    sent_at             TEXT,
    provider_message_id TEXT,
    thread_id           TEXT,
    backend             TEXT,
    error               TEXT,
    reason              TEXT,
    bounce              INTEGER,
    note_path           TEXT,
    note_name           TEXT,
    note_hash           TEXT,
    reply_to            TEXT,
    source              TEXT,
    recipients          TEXT,
    subject             TEXT,
    filed_path          TEXT,
    filed_at            REAL
);
CREATE INDEX IF NOT EXISTS sends_key ON sends (idempotency_key);
CREATE INDEX IF NOT EXISTS sends_sent ON sends (state, sent_epoch);
CREATE INDEX IF NOT EXISTS sends_provider ON sends (provider_message_id);
CREATE INDEX IF NOT EXISTS sends_reply ON sends (reply_to);
CREATE INDEX IF NOT EXISTS sends_source ON sends (source);
CREATE INDEX IF NOT EXISTS sends_name ON sends (note_name);
-- What an approved note's attachments were when H0 first read the note in Approved/.
CREATE TABLE IF NOT EXISTS approvals (
    note_path   TEXT NOT NULL,
    note_hash   TEXT NOT NULL,
    attachments TEXT NOT NULL,
    first_seen  REAL NOT NULL,
    PRIMARY KEY (note_path, note_hash)
);
-- Where mail ingest stands in each mailbox (Gmail: a historyId, decimal text: uint64 does not fit
-- SQLite's signed INTEGER), the query catch-up in progress (JSON), and when the next one is due.
CREATE TABLE IF NOT EXISTS mail_sync (
    source       TEXT PRIMARY KEY,          -- backend:account, e.g. gmail:ann@example.com
    cursor       TEXT,                      -- only ever moves forward (compared as integers)
    catch_up     TEXT,                      -- {"cursor": …, "served": …} while a catch-up runs
    catch_up_due REAL,                      -- epoch seconds: the next reconciliation by query
    since        REAL,                      -- epoch seconds: when H0 first synced this mailbox
    failures     INTEGER NOT NULL DEFAULT 0,
    updated_at   REAL NOT NULL
);
-- Who changed a note through H0's own servers, and when (h0.vault.seen): keyed by the note's
-- name, so a draft's history follows it from Drafts/ into Approved/. Kept for NOTE_WRITES_DAYS.
CREATE TABLE IF NOT EXISTS note_writes (
    name_key  TEXT NOT NULL,               -- h0.vault.paths.folder_key of the file name
    path      TEXT NOT NULL,
    at        REAL NOT NULL,               -- epoch seconds
    note_hash TEXT,
    tool      TEXT NOT NULL,               -- write_note, apply_changes, create_draft, …
    client    TEXT                         -- the MCP client's name ("H0" for the daemon)
);
CREATE INDEX IF NOT EXISTS note_writes_name ON note_writes (name_key, at);
-- What H0 ingested from a mailbox that keeps no custom keywords (an IMAP server whose PERMANENTFLAGS
-- have no \\*): the mark that would have been on the message, kept here. By the provider's id
-- (UIDVALIDITY-UID) and by Message-ID, so a renumbered mailbox still yields no second note.
CREATE TABLE IF NOT EXISTS ingested (
    source     TEXT NOT NULL,              -- as in mail_sync
    message_id TEXT NOT NULL,              -- the provider's id
    rfc822     TEXT,                       -- the Message-ID header, when the message has one
    at         REAL NOT NULL,
    PRIMARY KEY (source, message_id)
);
CREATE INDEX IF NOT EXISTS ingested_rfc822 ON ingested (source, rfc822);
-- Where reading a mailbox's sent mail stands, when it is a stream of its own (IMAP: the Sent folder's
-- UIDVALIDITY << 32 | last UID); Gmail's sent mail comes in the mail_sync history itself.
CREATE TABLE IF NOT EXISTS sent_sync (
    source     TEXT PRIMARY KEY,
    cursor     TEXT NOT NULL,
    updated_at REAL NOT NULL
);
-- Follow-ups (h0.followup.ledger): every message of a conversation H0 saw — received, or sent by the
-- owner from any client — and per thread what is owed or awaited and when to look again.
CREATE TABLE IF NOT EXISTS followup_messages (
    key          TEXT PRIMARY KEY,          -- the Message-ID, else "id:" + the provider's id
    provider_id  TEXT,
    thread       TEXT NOT NULL,             -- the provider's thread id (IMAP: the thread's first Message-ID)
    outbound     INTEGER NOT NULL,          -- 1: the owner sent it
    sender       TEXT NOT NULL,             -- the From address, lower-case
    recipients   TEXT NOT NULL,             -- JSON [[name, address], …] of To and Cc
    subject      TEXT NOT NULL,
    at           REAL NOT NULL,             -- when it was written, never later than when H0 first saw it
    seen_at      REAL NOT NULL,
    automated    TEXT,                      -- auto_reply | bounce | list
    list_address TEXT,
    asks         INTEGER,                   -- the owner's message asks something of its recipients (1/0)
    ask          TEXT,                      -- the sentence that asks, cut short
    note         TEXT                       -- the note H0 wrote for it (a received email)
);
CREATE INDEX IF NOT EXISTS followup_messages_thread ON followup_messages (thread, at);
CREATE TABLE IF NOT EXISTS followup_threads (
    thread     TEXT PRIMARY KEY,
    dirty      INTEGER NOT NULL DEFAULT 1,  -- something changed (a message, an override): look again
    due_at     REAL,                        -- epoch seconds: the next deadline to look at, if any
    state      TEXT NOT NULL DEFAULT '',    -- "awaited" while a follow-up note of H0's is open
    anchor     TEXT,                        -- the owner's message that note is about (key)
    note       TEXT,                        -- that note (Needs_Action/FOLLOWUP_….md)
    draft      TEXT,                        -- and its follow-up draft
    override   INTEGER,                     -- a note's `awaiting:` true (1) / false (0); NULL: the rules decide
    checked_at REAL NOT NULL DEFAULT 0,
    gen        INTEGER NOT NULL DEFAULT 0   -- bumped by every change: a pass clears `dirty` only for what it saw
);
CREATE INDEX IF NOT EXISTS followup_threads_due ON followup_threads (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS followup_threads_dirty ON followup_threads (dirty) WHERE dirty = 1;
"""

# Columns a caller may set when it claims a send.
_CLAIM_FIELDS = ("note_path", "note_hash", "reply_to", "source", "recipients", "subject", "backend")


def default_state_root() -> Path:
    """The per-user folder for H0's state on this OS (h0.platform.fs decides where)."""
    from h0.platform.fs import user_state_root

    return user_state_root()


def state_dir_for(vault_root: Path, configured: Path | None = None) -> Path:
    """The state folder of one vault: `<root>/<vault name>-<hash of its real path>`."""
    real = os.path.realpath(vault_root)
    digest = hashlib.sha256(os.path.normcase(real).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in Path(real).name)[:40] or "vault"
    return Path(configured or default_state_root()) / f"{name}-{digest}"


@dataclass(frozen=True, slots=True)
class Cap:
    window_s: float
    limit: int
    label: str  # "hourly" / "daily"


@dataclass(frozen=True, slots=True)
class Claim:
    """The answer to "may this send go out now?".

    status: claimed (go: a pending row is written) · already_sent (same key, same content)
    · conflict (same key, other content) · in_progress (another live process is sending it)
    · unresolved (an earlier attempt has no known outcome: ask the provider) · rate_limited
    · answered (exclusive_reply: another message already answers the same email).
    """

    status: str
    row: dict[str, Any] | None = None
    retry_after: float | None = None
    cap: Cap | None = None


def _secret_from(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    except FileExistsError:
        if hasattr(os, "fchmod") and path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)  # never leave the secret readable by others
        text = path.read_text(encoding="ascii").strip()
        if len(text) < 64:
            raise InternalError(f"H0's secret {path} is damaged; delete it only if nothing is pending.", path=str(path))
        return bytes.fromhex(text)
    value = secrets.token_hex(32)
    try:
        os.write(fd, value.encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return bytes.fromhex(value)


class StateDB:
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
            db.executescript(_SCHEMA)  # idempotent; executescript commits on its own
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path} cannot be opened: {exc}") from exc

    @classmethod
    def for_vault(cls, vault_root: Path, configured: Path | None = None) -> StateDB:
        directory = state_dir_for(vault_root, configured)
        db = cls(directory)
        marker = directory / "vault.txt"
        if not marker.exists():
            try:
                marker.write_text(f"{os.path.realpath(vault_root)}\n", encoding="utf-8")
            except OSError:
                pass
        return db

    # ------------------------------------------------------------------ plumbing

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

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, kind: object, exc: object, tb: object) -> None:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def _tx(self) -> StateDB._Tx:
        try:
            return StateDB._Tx(self._db())
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path} cannot be opened: {exc}") from exc

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        try:
            return [dict(row) for row in self._db().execute(sql, args).fetchall()]
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path}: {exc}") from exc

    def _write(self, sql: str, args: Sequence[Any]) -> int:
        try:
            with self._tx() as db:
                return db.execute(sql, args).rowcount
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path}: {exc}") from exc

    def transaction(self) -> StateDB._Tx:
        """`with state.transaction() as db:` — one BEGIN IMMEDIATE transaction on this thread's connection
        (for the stores built on this database, e.g. h0.followup.ledger); sqlite errors are the caller's to map."""
        return self._tx()

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a read, as dicts; an sqlite error is an InternalError."""
        return self._rows(sql, args)

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
                self._secret = _secret_from(self.directory / SECRET_FILE)
            return self._secret

    def mac(self, purpose: str, data: bytes | str) -> str:
        """HMAC-SHA256 of `data` under this installation's secret, separated by purpose (hex)."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        return hmac.new(self.secret, purpose.encode("ascii") + b"\0" + raw, hashlib.sha256).hexdigest()

    # ------------------------------------------------------------------ sends

    def claim_send(
        self,
        *,
        key: str,
        rfc822_message_id: str,
        content_hash: str,
        caps: Iterable[Cap],
        in_flight_s: float,
        now: float | None = None,
        exclusive_reply: bool = False,
        **fields: Any,
    ) -> Claim:
        """Check the key and the caps and, if the send may go, record it as pending — atomically."""
        now = time.time() if now is None else now
        pid = os.getpid()
        try:
            with self._tx() as db:
                rows = [dict(r) for r in db.execute(
                    "SELECT * FROM sends WHERE idempotency_key = ? ORDER BY started_at", (key,))]
                for row in rows:
                    if row["state"] == "sent":
                        return Claim("already_sent" if row["content_hash"] == content_hash else "conflict", row)
                for row in rows:
                    if row["state"] not in ("pending", "unknown"):
                        continue
                    if row["content_hash"] != content_hash:
                        return Claim("conflict", row)
                    if (row["state"] == "pending" and row["pid"] != pid and process_alive(row["pid"])
                            and now - row["started_at"] < in_flight_s):
                        return Claim("in_progress", row)
                    return Claim("unresolved", row)
                if exclusive_reply:
                    answered = self._answered(db, key, fields.get("reply_to"), fields.get("source"), now, in_flight_s)
                    if answered is not None:
                        return Claim("answered", answered)
                for cap in caps:
                    times = self._counted(db, cap.window_s, now, in_flight_s)
                    if len(times) >= cap.limit:
                        index = len(times) - cap.limit
                        frees_at = times[index] + cap.window_s if times else now + cap.window_s
                        return Claim("rate_limited", retry_after=max(1.0, round(frees_at - now, 1)), cap=cap)
                extra = {name: fields.get(name) for name in _CLAIM_FIELDS}
                extra["note_name"] = os.path.basename(extra["note_path"]) if extra["note_path"] else None
                db.execute(
                    "INSERT OR REPLACE INTO sends (rfc822_message_id, idempotency_key, content_hash, state, pid, "
                    "started_at, note_path, note_hash, reply_to, source, recipients, subject, backend, note_name) "
                    "VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (rfc822_message_id, key, content_hash, pid, now, *(extra[n] for n in _CLAIM_FIELDS), extra["note_name"]),
                )
                return Claim("claimed")
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path}: {exc}; nothing was sent") from exc

    @staticmethod
    def _answered(db: sqlite3.Connection, key: str, reply_to: object, source: object, now: float,
                  in_flight_s: float) -> dict[str, Any] | None:
        """Another message (sent, or being sent right now) that answers the same email."""
        clauses, args = [], []
        for column, value in (("reply_to", reply_to), ("source", source)):
            if isinstance(value, str) and value:
                clauses.append(f"{column} = ?")
                args.append(value)
        if not clauses:
            return None
        row = db.execute(
            f"SELECT * FROM sends WHERE idempotency_key != ? AND ({' OR '.join(clauses)}) AND "
            "(state = 'sent' OR state = 'unknown' OR (state = 'pending' AND started_at >= ?)) "
            "ORDER BY started_at LIMIT 1", (key, *args, now - in_flight_s),
        ).fetchone()
        return dict(row) if row is not None else None

    @staticmethod
    def _counted(db: sqlite3.Connection, window_s: float, now: float, in_flight_s: float) -> list[float]:
        """Times of the sends a cap counts: sent in the window, plus sends in flight or of
        unknown outcome (they may have gone out), oldest first."""
        since = now - window_s
        rows = db.execute(
            "SELECT sent_epoch AS t FROM sends WHERE state = 'sent' AND sent_epoch >= ? "
            "UNION ALL SELECT started_at FROM sends WHERE state = 'unknown' AND started_at >= ? "
            "UNION ALL SELECT started_at FROM sends WHERE state = 'pending' AND started_at >= ? ORDER BY 1",
            (since, since, max(since, now - in_flight_s)),
        ).fetchall()
        return [row[0] for row in rows]

    def mark_sent(self, rfc822_message_id: str, *, provider_message_id: str | None, thread_id: str | None,
                  sent_at: str, backend: str, now: float | None = None) -> None:
        self._write(
            "UPDATE sends SET state = 'sent', sent_epoch = ?, sent_at = ?, provider_message_id = ?, thread_id = ?, "
            "backend = ?, error = NULL, reason = NULL WHERE rfc822_message_id = ?",
            (time.time() if now is None else now, sent_at, provider_message_id, thread_id, backend, rfc822_message_id),
        )

    def mark_failed(self, rfc822_message_id: str, *, error: str, reason: str, unknown: bool = False,
                    bounce: bool = False) -> None:
        self._write(
            "UPDATE sends SET state = ?, error = ?, reason = ?, bounce = ? WHERE rfc822_message_id = ? AND state != 'sent'",
            ("unknown" if unknown else "failed", error, reason, int(bounce), rfc822_message_id),
        )

    def mark_filed(self, rfc822_message_id: str, filed_path: str) -> None:
        self._write("UPDATE sends SET filed_path = ?, filed_at = ? WHERE rfc822_message_id = ?",
                    (filed_path, time.time(), rfc822_message_id))

    def send_for_key(self, key: str) -> dict[str, Any] | None:
        """The row that decides what a send with this key does now: a sent one, else the latest."""
        rows = self._rows("SELECT * FROM sends WHERE idempotency_key = ? ORDER BY state = 'sent' DESC, started_at DESC",
                          (key,))
        return rows[0] if rows else None

    def send_for_message(self, message_id: str) -> dict[str, Any] | None:
        """The row of a provider message id or an RFC 5322 Message-ID (with or without <>)."""
        bare = message_id.strip().strip("<>")
        rows = self._rows(
            "SELECT * FROM sends WHERE provider_message_id = ? OR rfc822_message_id = ? OR rfc822_message_id = ? LIMIT 1",
            (message_id.strip(), message_id.strip(), f"<{bare}>"),
        )
        return rows[0] if rows else None

    def sends_within(self, seconds: float, now: float | None = None) -> list[float]:
        """Epoch times of the sends in the last `seconds`, oldest first."""
        now = time.time() if now is None else now
        rows = self._rows("SELECT sent_epoch FROM sends WHERE state = 'sent' AND sent_epoch >= ? ORDER BY sent_epoch",
                          (now - seconds,))
        return [row["sent_epoch"] for row in rows]

    def sent_recipients(self, after: float = 0.0) -> list[tuple[float, str]]:
        """(sent_epoch, recipients) of the sends after `after`, oldest first: whom this vault wrote to."""
        rows = self._rows("SELECT sent_epoch, recipients FROM sends WHERE state = 'sent' AND sent_epoch > ? "
                          "ORDER BY sent_epoch", (after,))
        return [(row["sent_epoch"], row["recipients"] or "") for row in rows]

    def recently_sent_named(self, note_name: str, seconds: float, now: float | None = None) -> list[dict[str, Any]]:
        """Sends of a note with this file name in the last `seconds`."""
        now = time.time() if now is None else now
        return self._rows("SELECT * FROM sends WHERE state = 'sent' AND note_name = ? AND sent_epoch >= ? "
                          "ORDER BY sent_epoch DESC", (note_name, now - seconds))

    def unfiled_sends(self, seconds: float, now: float | None = None) -> list[dict[str, Any]]:
        """Sent notes not yet recorded as filed (a crash between the send and the filing)."""
        now = time.time() if now is None else now
        return self._rows("SELECT * FROM sends WHERE state = 'sent' AND note_path IS NOT NULL AND filed_path IS NULL "
                          "AND sent_epoch >= ? ORDER BY sent_epoch", (now - seconds,))

    # ------------------------------------------------------------------ approvals

    def first_seen_attachments(self, note_path: str, note_hash: str, hashes: dict[str, str]) -> dict[str, str]:
        """Record `hashes` as this approved note version's attachments unless already recorded;
        return what was recorded first."""
        try:
            with self._tx() as db:
                db.execute("INSERT OR IGNORE INTO approvals VALUES (?, ?, ?, ?)",
                           (note_path, note_hash, json.dumps(hashes, sort_keys=True), time.time()))
                row = db.execute("SELECT attachments FROM approvals WHERE note_path = ? AND note_hash = ?",
                                 (note_path, note_hash)).fetchone()
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path}: {exc}") from exc
        return json.loads(row[0])

    # ------------------------------------------------------------------ note writes (h0.vault.seen)

    def record_note_writes(self, writes: Iterable[tuple[str, str, str | None, str, str | None]],
                           now: float | None = None) -> None:
        """Record (name_key, path, note_hash, tool, client) writes made now, in one transaction;
        rows older than NOTE_WRITES_DAYS go at the same time."""
        now = time.time() if now is None else now
        rows = [(key, path, now, digest, tool, client) for key, path, digest, tool, client in writes]
        if not rows:
            return
        try:
            with self._tx() as db:
                db.executemany("INSERT INTO note_writes VALUES (?, ?, ?, ?, ?, ?)", rows)
                db.execute("DELETE FROM note_writes WHERE at < ?", (now - NOTE_WRITES_DAYS * 86400.0,))
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path}: {exc}") from exc

    def note_writes(self, name_key: str, since: float = 0.0) -> list[dict[str, Any]]:
        """The recorded writes of notes named `name_key` since `since`, oldest first."""
        return self._rows("SELECT * FROM note_writes WHERE name_key = ? AND at >= ? ORDER BY at, rowid",
                          (name_key, since))

    # ------------------------------------------------------------------ mail sync

    def mail_sync(self, source: str) -> dict[str, Any] | None:
        """The sync row of one mailbox (`catch_up` decoded), or None before its first sync."""
        rows = self._rows("SELECT * FROM mail_sync WHERE source = ?", (source,))
        if not rows:
            return None
        row = rows[0]
        row["catch_up"] = json.loads(row["catch_up"]) if row["catch_up"] else None
        return row

    def update_mail_sync(self, source: str, *, cursor: int | None = None, **changes: Any) -> dict[str, Any]:
        """Change a mailbox's sync row (created if missing) in one transaction; returns the row.

        `cursor` only moves forward: a value not above the stored one is ignored, so neither a
        late acknowledgement nor a second process can take ingest back (or past what it has).
        Other keys (`catch_up`, `catch_up_due`, `since`, `failures`) are set as given (None clears).
        """
        unknown = set(changes) - {"catch_up", "catch_up_due", "since", "failures"}
        if unknown:
            raise ValueError(f"unknown mail_sync fields: {sorted(unknown)}")
        if "catch_up" in changes and changes["catch_up"] is not None:
            changes["catch_up"] = json.dumps(changes["catch_up"], sort_keys=True)
        try:
            with self._tx() as db:
                db.execute("INSERT OR IGNORE INTO mail_sync (source, updated_at) VALUES (?, ?)", (source, time.time()))
                stored = db.execute("SELECT cursor FROM mail_sync WHERE source = ?", (source,)).fetchone()[0]
                if cursor is not None and (stored is None or int(cursor) > int(stored)):
                    changes["cursor"] = str(int(cursor))
                if changes:
                    columns = ", ".join(f"{name} = ?" for name in changes)
                    db.execute(f"UPDATE mail_sync SET {columns}, updated_at = ? WHERE source = ?",
                               (*changes.values(), time.time(), source))
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path}: {exc}") from exc
        row = self.mail_sync(source)
        assert row is not None
        return row

    # ------------------------------------------------------------------ ingested marks kept here

    def record_ingested(self, source: str, messages: Iterable[tuple[str, str | None]], now: float | None = None) -> None:
        """Remember (provider id, Message-ID or None) pairs as ingested from `source`, in one transaction."""
        now = time.time() if now is None else now
        rows = [(source, message_id, rfc822 or None, now) for message_id, rfc822 in messages]
        if not rows:
            return
        try:
            with self._tx() as db:
                db.executemany("INSERT OR REPLACE INTO ingested VALUES (?, ?, ?, ?)", rows)
        except sqlite3.Error as exc:
            raise InternalError(f"H0's state database {self.path}: {exc}") from exc

    def ingested_among(self, source: str, message_ids: Sequence[str], rfc822s: Sequence[str] = ()) -> set[str]:
        """The provider ids and Message-IDs of these that H0 recorded as ingested from `source`."""
        found: set[str] = set()
        by_column = (("message_id", list(dict.fromkeys(message_ids))), ("rfc822", [v for v in dict.fromkeys(rfc822s) if v]))
        for column, values in by_column:
            for start in range(0, len(values), 500):
                chunk = values[start:start + 500]
                marks = ", ".join("?" * len(chunk))
                rows = self._rows(f"SELECT {column} AS v FROM ingested WHERE source = ? AND {column} IN ({marks})",
                                  (source, *chunk))
                found.update(row["v"] for row in rows)
        return found

    # ------------------------------------------------------------------ sent mail (a stream of its own)

    def sent_cursor(self, source: str) -> int | None:
        rows = self._rows("SELECT cursor FROM sent_sync WHERE source = ?", (source,))
        return int(rows[0]["cursor"]) if rows else None

    def set_sent_cursor(self, source: str, cursor: int) -> None:
        self._write("INSERT OR REPLACE INTO sent_sync VALUES (?, ?, ?)", (source, str(int(cursor)), time.time()))

    def sends_since(self, epoch: float, limit: int = 1000) -> list[dict[str, Any]]:
        """Messages H0 sent after `epoch` (sent_epoch), oldest first."""
        return self._rows("SELECT * FROM sends WHERE state = 'sent' AND sent_epoch > ? ORDER BY sent_epoch LIMIT ?",
                          (epoch, limit))
