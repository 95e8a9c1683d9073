"""The send ledger: one row per Message-ID with the send's whole history, and the one question asked
before every send — may it go now? — answered with the idempotency key and the caps in one
`BEGIN IMMEDIATE` transaction, so two processes can neither pass a cap together nor send one key twice."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from h0.platform.proc import process_alive
from h0.state.connection import Database

# Columns a caller may set when it claims a send.
# `note_name`: the note's file name as sync tools' copies share it (h0.vault.copies.original_name).
_CLAIM_FIELDS = ("note_path", "note_hash", "reply_to", "source", "recipients", "subject", "backend", "note_name")


@dataclass(frozen=True, slots=True)
class Cap:
    window_s: float
    limit: int
    label: str  # "hourly" / "daily"


@dataclass(frozen=True, slots=True)
class Claim:
    """The answer to "may this send go out now?".

    status: claimed (go: a pending row is written) · already_sent (same key, same content, this very
    note, not yet filed: a crash between the send and the filing) · copy (the same message was sent, or
    its send's outcome is unknown, for another note — or for this note, which was filed since; with
    `copies_by_bytes`, also a note whose bytes were sent under another key) · filing (a copy whose
    original, sent moments ago, is not filed yet: look again, so the copy can say where it went)
    · conflict (same key, other content) · in_progress (another live process is sending it)
    · unresolved (an earlier attempt has no known outcome: ask the provider) · rate_limited
    · answered (exclusive_reply: another message already answers the same email).
    `row` is the send the answer is about.
    """

    status: str
    row: dict[str, Any] | None = None
    retry_after: float | None = None
    cap: Cap | None = None


class SendLedger(Database):
    """The state database's sends: claimed, marked sent, failed or filed, and looked up."""

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
        copies_by_bytes: bool = False,
        **fields: Any,
    ) -> Claim:
        """Check the key and the caps and, if the send may go, record it as pending — atomically."""
        now = time.time() if now is None else now
        pid = os.getpid()
        note_path = fields.get("note_path")
        try:
            with self._tx() as db:
                rows = [
                    dict(r)
                    for r in db.execute("SELECT * FROM sends WHERE idempotency_key = ? ORDER BY started_at", (key,))
                ]
                for row in rows:
                    if row["state"] == "sent":
                        if row["content_hash"] != content_hash:
                            return Claim("conflict", row)
                        if not _another_note(row, note_path):
                            return Claim("already_sent", row)
                        return Claim("filing" if _being_filed(row, now, in_flight_s) else "copy", row)
                for row in rows:
                    if row["state"] not in ("pending", "unknown"):
                        continue
                    if row["content_hash"] != content_hash:
                        return Claim("conflict", row)
                    if (
                        row["state"] == "pending"
                        and row["pid"] != pid
                        and process_alive(row["pid"])
                        and now - row["started_at"] < in_flight_s
                    ):
                        return Claim("in_progress", row)
                    if row["state"] == "unknown" and _another_note(row, note_path):
                        return Claim("filing" if _being_filed(row, now, in_flight_s) else "copy", row)
                    return Claim("unresolved", row)
                if copies_by_bytes and fields.get("note_hash"):
                    same = db.execute(
                        "SELECT * FROM sends WHERE note_hash = ? AND state IN ('sent', 'unknown') "
                        "ORDER BY started_at LIMIT 1",
                        (fields["note_hash"],),
                    ).fetchone()
                    if same is not None:
                        return Claim("copy", dict(same))
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
                if extra["note_name"] is None and extra["note_path"]:
                    extra["note_name"] = os.path.basename(extra["note_path"])
                db.execute(
                    "INSERT OR REPLACE INTO sends (rfc822_message_id, idempotency_key, content_hash, state, pid, "
                    "started_at, note_path, note_hash, reply_to, source, recipients, subject, backend, note_name) "
                    "VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (rfc822_message_id, key, content_hash, pid, now, *(extra[n] for n in _CLAIM_FIELDS)),
                )
                return Claim("claimed")
        except sqlite3.Error as exc:
            raise self.failure(exc, then="; nothing was sent") from exc

    @staticmethod
    def _answered(
        db: sqlite3.Connection, key: str, reply_to: object, source: object, now: float, in_flight_s: float
    ) -> dict[str, Any] | None:
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
            "ORDER BY started_at LIMIT 1",
            (key, *args, now - in_flight_s),
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

    def mark_sent(
        self,
        rfc822_message_id: str,
        *,
        provider_message_id: str | None,
        thread_id: str | None,
        sent_at: str,
        backend: str,
        now: float | None = None,
    ) -> None:
        self._write(
            "UPDATE sends SET state = 'sent', sent_epoch = ?, sent_at = ?, provider_message_id = ?, thread_id = ?, "
            "backend = ?, error = NULL, reason = NULL WHERE rfc822_message_id = ?",
            (time.time() if now is None else now, sent_at, provider_message_id, thread_id, backend, rfc822_message_id),
        )

    def mark_failed(
        self, rfc822_message_id: str, *, error: str, reason: str, unknown: bool = False, bounce: bool = False
    ) -> None:
        self._write(
            "UPDATE sends SET state = ?, error = ?, reason = ?, bounce = ? WHERE rfc822_message_id = ? AND state != 'sent'",
            ("unknown" if unknown else "failed", error, reason, int(bounce), rfc822_message_id),
        )

    def mark_filed(self, rfc822_message_id: str, filed_path: str) -> None:
        self._write(
            "UPDATE sends SET filed_path = ?, filed_at = ? WHERE rfc822_message_id = ?",
            (filed_path, time.time(), rfc822_message_id),
        )

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
        rows = self._rows(
            "SELECT sent_epoch FROM sends WHERE state = 'sent' AND sent_epoch >= ? ORDER BY sent_epoch",
            (now - seconds,),
        )
        return [row["sent_epoch"] for row in rows]

    def sent_recipients(self, after: float = 0.0) -> list[tuple[float, str]]:
        """(sent_epoch, recipients) of the sends after `after`, oldest first: whom this vault wrote to."""
        rows = self._rows(
            "SELECT sent_epoch, recipients FROM sends WHERE state = 'sent' AND sent_epoch > ? ORDER BY sent_epoch",
            (after,),
        )
        return [(row["sent_epoch"], row["recipients"] or "") for row in rows]

    def recently_sent_named(self, note_name: str, seconds: float, now: float | None = None) -> list[dict[str, Any]]:
        """Sends of a note with this file name in the last `seconds`."""
        now = time.time() if now is None else now
        return self._rows(
            "SELECT * FROM sends WHERE state = 'sent' AND note_name = ? AND sent_epoch >= ? ORDER BY sent_epoch DESC",
            (note_name, now - seconds),
        )

    def unfiled_sends(self, seconds: float, now: float | None = None) -> list[dict[str, Any]]:
        """Sent notes not yet recorded as filed (a crash between the send and the filing)."""
        now = time.time() if now is None else now
        return self._rows(
            "SELECT * FROM sends WHERE state = 'sent' AND note_path IS NOT NULL AND filed_path IS NULL "
            "AND sent_epoch >= ? ORDER BY sent_epoch",
            (now - seconds,),
        )

    def sends_since(self, epoch: float, limit: int = 1000) -> list[dict[str, Any]]:
        """Messages H0 sent after `epoch` (sent_epoch), oldest first."""
        return self._rows(
            "SELECT * FROM sends WHERE state = 'sent' AND sent_epoch > ? ORDER BY sent_epoch LIMIT ?", (epoch, limit)
        )


def _another_note(row: dict[str, Any], note_path: object) -> bool:
    """Whether a claim for the note at `note_path` is a copy of the send in `row`: the send was of another
    note, or of this one, which has been filed since (and is back: a copy made or restored at its path)."""
    return isinstance(note_path, str) and (row["filed_path"] is not None or row["note_path"] != note_path)


def _being_filed(row: dict[str, Any], now: float, in_flight_s: float) -> bool:
    """The send in `row` (of another note) went out or ended moments ago and its note is not filed yet."""
    return row["filed_path"] is None and now - (row["sent_epoch"] or row["started_at"]) < in_flight_s
