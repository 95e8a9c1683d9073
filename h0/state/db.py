"""H0's durable bookkeeping for one vault: one SQLite database and one secret, outside the notes.

Every process that can send (the daemon's mail server, Claude Code's) shares them, so the
send caps, the idempotency keys and "already sent" hold across processes and restarts:
deleting or syncing `Logs/` no longer resets them (the JSONL logs stay the human-readable
audit trail). The send ledger is `h0.state.ledger`; the tables are `h0.state.schema`; the
connection and its transactions are `h0.state.connection`.

Where: `H0_STATE_DIR` if set, else the per-user state folder of the OS (XDG state home,
~/Library/Application Support, %LOCALAPPDATA%), then one sub-folder per vault keyed by the
vault's real path. It holds `state.db` (WAL) and `secret.key` (mode 0600): the
per-installation secret that idempotency keys and Message-IDs derive from, so nobody who
can only read the vault can mint them.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from h0.platform.fs import user_state_root
from h0.state.connection import DB_FILE
from h0.state.ledger import SendLedger

__all__ = ["DB_FILE", "NOTE_WRITES_DAYS", "StateDB", "default_state_root", "state_dir_for"]

NOTE_WRITES_DAYS = 7
DELTA_LINKS_KEPT = 100  # the newest delta links of a folder are kept whatever their age
DELTA_LINKS_DAYS = 2


def default_state_root() -> Path:
    """The per-user folder for H0's state on this OS (h0.platform.fs decides where)."""
    return user_state_root()


def state_dir_for(vault_root: Path, configured: Path | None = None) -> Path:
    """The state folder of one vault: `<root>/<vault name>-<hash of its real path>`."""
    real = os.path.realpath(vault_root)
    digest = hashlib.sha256(os.path.normcase(real).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in Path(real).name)[:40] or "vault"
    return Path(configured or default_state_root()) / f"{name}-{digest}"


class StateDB(SendLedger):
    """The state database of one vault: the send ledger, and the rest of H0's bookkeeping."""

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

    # ------------------------------------------------------------------ approvals

    def first_seen_attachments(self, note_path: str, note_hash: str, hashes: dict[str, str]) -> dict[str, str]:
        """Record `hashes` as this approved note version's attachments unless already recorded;
        return what was recorded first."""
        with self.writing() as db:
            db.execute(
                "INSERT OR IGNORE INTO approvals VALUES (?, ?, ?, ?)",
                (note_path, note_hash, json.dumps(hashes, sort_keys=True), time.time()),
            )
            row = db.execute(
                "SELECT attachments FROM approvals WHERE note_path = ? AND note_hash = ?", (note_path, note_hash)
            ).fetchone()
        recorded: dict[str, str] = json.loads(row[0])
        return recorded

    # ------------------------------------------------------------------ note writes (h0.vault.last_change)

    def record_note_writes(
        self, writes: Iterable[tuple[str, str, str | None, str, str | None]], now: float | None = None
    ) -> None:
        """Record (name_key, path, note_hash, tool, client) writes made now, in one transaction;
        rows older than NOTE_WRITES_DAYS go at the same time."""
        now = time.time() if now is None else now
        rows = [(key, path, now, digest, tool, client) for key, path, digest, tool, client in writes]
        if not rows:
            return
        with self.writing() as db:
            db.executemany("INSERT INTO note_writes VALUES (?, ?, ?, ?, ?, ?)", rows)
            db.execute("DELETE FROM note_writes WHERE at < ?", (now - NOTE_WRITES_DAYS * 86400.0,))

    def note_writes(self, name_key: str, since: float = 0.0) -> list[dict[str, Any]]:
        """The recorded writes of notes named `name_key` since `since`, oldest first."""
        return self._rows(
            "SELECT * FROM note_writes WHERE name_key = ? AND at >= ? ORDER BY at, rowid", (name_key, since)
        )

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
        with self.writing() as db:
            db.execute("INSERT OR IGNORE INTO mail_sync (source, updated_at) VALUES (?, ?)", (source, time.time()))
            stored = db.execute("SELECT cursor FROM mail_sync WHERE source = ?", (source,)).fetchone()[0]
            if cursor is not None and (stored is None or int(cursor) > int(stored)):
                changes["cursor"] = str(int(cursor))
            if changes:
                columns = ", ".join(f"{name} = ?" for name in changes)
                db.execute(
                    f"UPDATE mail_sync SET {columns}, updated_at = ? WHERE source = ?",
                    (*changes.values(), time.time(), source),
                )
        row = self.mail_sync(source)
        assert row is not None
        return row

    # ------------------------------------------------------------------ ingested marks kept here

    def record_ingested(
        self, source: str, messages: Iterable[tuple[str, str | None]], now: float | None = None
    ) -> None:
        """Remember (provider id, Message-ID or None) pairs as ingested from `source`, in one transaction."""
        now = time.time() if now is None else now
        rows = [(source, message_id, rfc822 or None, now) for message_id, rfc822 in messages]
        if not rows:
            return
        with self.writing() as db:
            db.executemany("INSERT OR REPLACE INTO ingested VALUES (?, ?, ?, ?)", rows)

    def ingested_among(self, source: str, message_ids: Sequence[str], rfc822s: Sequence[str] = ()) -> set[str]:
        """The provider ids and Message-IDs of these that H0 recorded as ingested from `source`."""
        found: set[str] = set()
        for column, values in (("message_id", message_ids), ("rfc822", [v for v in rfc822s if v])):
            sql = f"SELECT {column} AS v FROM ingested WHERE source = ? AND {column} IN ({{}})"
            found.update(row["v"] for row in self.query_in(sql, values, before=(source,)))
        return found

    # ------------------------------------------------------------------ sent mail (a stream of its own)

    def sent_cursor(self, source: str) -> int | None:
        rows = self._rows("SELECT cursor FROM sent_sync WHERE source = ?", (source,))
        return int(rows[0]["cursor"]) if rows else None

    def set_sent_cursor(self, source: str, cursor: int) -> None:
        self._write("INSERT OR REPLACE INTO sent_sync VALUES (?, ?, ?)", (source, str(int(cursor)), time.time()))

    # ------------------------------------------------------------------ delta links (Microsoft Graph)

    def add_delta_link(self, source: str, link: str, now: float | None = None) -> int:
        """Keep `link` as the next cursor of `source` and return it; links kept more than DELTA_LINKS_KEPT
        cursors and DELTA_LINKS_DAYS ago go at the same time."""
        now = time.time() if now is None else now
        with self.writing() as db:
            last = db.execute("SELECT MAX(seq) FROM delta_links WHERE source = ?", (source,)).fetchone()[0]
            seq = int(last or 0) + 1
            db.execute("INSERT INTO delta_links VALUES (?, ?, ?, ?)", (source, seq, link, now))
            db.execute(
                "DELETE FROM delta_links WHERE source = ? AND seq < ? AND at < ?",
                (source, seq - DELTA_LINKS_KEPT, now - DELTA_LINKS_DAYS * 86400.0),
            )
        return seq

    def delta_link(self, source: str, seq: int) -> str | None:
        """The link kept as cursor `seq` of `source`, or None (never kept, or pruned)."""
        rows = self._rows("SELECT link FROM delta_links WHERE source = ? AND seq = ?", (source, int(seq)))
        return str(rows[0]["link"]) if rows else None
