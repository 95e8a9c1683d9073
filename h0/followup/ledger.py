"""The follow-up ledger: what H0 saw of each conversation, and when each thread needs a look.

It lives in H0's state database (tables `followup_messages` and `followup_threads`, see
h0.state), outside the notes. A message is recorded once, by its Message-ID (or, without
one, by the provider's id), however many ways H0 saw it — ingest, the provider's sent mail, H0's
own send ledger — and recording it marks its thread `dirty`. A thread is looked at again when it
is dirty or its `due_at` has passed (two partial indexes), so a pass costs what changed and what
fell due, not the number of threads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from h0.followup.threads import Message
from h0.state import StateDB
from h0.state.history import message_columns, stored_message

SENDS_MARK = "followup_sends_epoch"  # meta: H0's own sends up to this sent_epoch are recorded


@dataclass(slots=True)
class ThreadRow:
    thread: str
    dirty: bool = True
    due_at: float | None = None
    state: str = ""
    anchor: str | None = None
    note: str | None = None
    draft: str | None = None
    override: bool | None = None
    checked_at: float = 0.0
    gen: int = 0


def _mark(db: sqlite3.Connection, threads: Sequence[str]) -> None:
    """Mark these threads (created when new) for the next pass; `gen` says a pass's look at them is stale."""
    db.executemany(
        "INSERT INTO followup_threads (thread, dirty) VALUES (?, 1) ON CONFLICT(thread) DO UPDATE SET dirty = 1, gen = gen + 1",
        [(t,) for t in threads],
    )


def _row_message(row: dict[str, Any]) -> Message:
    return Message(
        **stored_message(row),
        seen_at=float(row["seen_at"]),
        automated=row["automated"],
        list_address=row["list_address"],
        asks=None if row["asks"] is None else bool(row["asks"]),
        ask=row["ask"],
    )


class FollowupLedger:
    """Thread-safe like the StateDB under it (one connection per thread)."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    # -- recording ------------------------------------------------------------------------

    def record(self, messages: Iterable[Message]) -> list[str]:
        """Record messages (one transaction); returns the threads that changed. A message seen before keeps
        what was learnt of it: sent by the owner stays so, a judgement or a note path is not forgotten, and
        its time only ever moves earlier."""
        rows = [m for m in messages]
        if not rows:
            return []
        with self.state.writing() as db:
            for m in rows:
                db.execute(
                    "INSERT INTO followup_messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET outbound = max(outbound, excluded.outbound), "
                    "provider_id = coalesce(provider_id, excluded.provider_id), "
                    "at = min(at, excluded.at), automated = coalesce(automated, excluded.automated), "
                    "list_address = coalesce(list_address, excluded.list_address), "
                    "asks = coalesce(excluded.asks, asks), ask = coalesce(excluded.ask, ask), "
                    "note = coalesce(note, excluded.note)",
                    (
                        *message_columns(m),
                        m.seen_at,
                        m.automated,
                        m.list_address,
                        None if m.asks is None else int(m.asks),
                        m.ask,
                        m.note,
                    ),
                )
            threads = sorted({m.thread for m in rows})
            _mark(db, threads)
        return threads

    def touch(self, threads: Sequence[str]) -> None:
        """Mark these threads for the next pass (created when new): something the pass reads changed — an
        email's triage — so what is owed never waits on a recheck or on the order the passes ran in."""
        wanted = sorted({t for t in threads if t})
        if not wanted:
            return
        with self.state.writing() as db:
            _mark(db, wanted)

    def known(self, keys: Sequence[str]) -> set[str]:
        """Which of these message keys are recorded."""
        return {r["key"] for r in self.state.query_in("SELECT key FROM followup_messages WHERE key IN ({})", keys)}

    # -- what needs a look ------------------------------------------------------------------

    def work(self, now: float, limit: int | None = None) -> list[str]:
        """Threads that are dirty or whose deadline has passed, and those whose open follow-up waits on someone
        who has written to the owner since the message it is about, in any thread (`last_heard`: the look closes
        it, so it is looked at once)."""
        sql = (
            "SELECT thread FROM followup_threads WHERE dirty = 1 UNION "
            "SELECT thread FROM followup_threads WHERE due_at IS NOT NULL AND due_at <= ? UNION "
            "SELECT t.thread FROM followup_threads t JOIN followup_messages a ON a.key = t.anchor, "
            "json_each(a.recipients) r WHERE t.state = 'awaited' AND EXISTS (SELECT 1 FROM followup_messages m "
            "WHERE m.sender = json_extract(r.value, '$[1]') AND m.outbound = 0 AND m.automated IS NULL "
            "AND m.at > a.at)"
        )
        rows = self.state.query(sql + (f" LIMIT {int(limit)}" if limit else ""), (now,))
        return [r["thread"] for r in rows]

    def messages(self, threads: Sequence[str]) -> dict[str, list[Message]]:
        found: dict[str, list[Message]] = {t: [] for t in threads}
        for row in self.state.query_in("SELECT * FROM followup_messages WHERE thread IN ({}) ORDER BY at", threads):
            found.setdefault(row["thread"], []).append(_row_message(row))
        return found

    def threads(self, threads: Sequence[str]) -> dict[str, ThreadRow]:
        found: dict[str, ThreadRow] = {}
        for row in self.state.query_in("SELECT * FROM followup_threads WHERE thread IN ({})", threads):
            found[row["thread"]] = ThreadRow(
                row["thread"],
                bool(row["dirty"]),
                row["due_at"],
                row["state"] or "",
                row["anchor"],
                row["note"],
                row["draft"],
                None if row["override"] is None else bool(row["override"]),
                row["checked_at"] or 0.0,
                row["gen"],
            )
        return found

    def settle(self, rows: Iterable[ThreadRow], now: float) -> None:
        """Write back what a pass decided for these threads (one transaction): no longer dirty, looked at now.
        A thread that changed while the pass ran (its `gen` moved on) stays dirty, for the next pass."""
        values = [(r.gen, r.due_at, r.state, r.anchor, r.note, r.draft, now, r.thread) for r in rows]
        if not values:
            return
        with self.state.writing() as db:
            db.executemany(
                "UPDATE followup_threads SET dirty = CASE WHEN gen = ? THEN 0 ELSE 1 END, due_at = ?, state = ?, "
                "anchor = ?, note = ?, draft = ?, checked_at = ? WHERE thread = ?",
                values,
            )

    def set_overrides(self, overrides: dict[str, bool | None]) -> list[str]:
        """The `awaiting:` a note of each thread says (None: none says); returns the threads whose word changed."""
        if not overrides:
            return []
        current = self.threads(list(overrides))
        changed = [
            (None if v is None else int(v), t)
            for t, v in overrides.items()
            if t in current and current[t].override != v
        ]
        if changed:
            with self.state.writing() as db:
                db.executemany(
                    "UPDATE followup_threads SET override = ?, dirty = 1, gen = gen + 1 WHERE thread = ?", changed
                )
        return [t for _, t in changed]

    def overridden(self) -> set[str]:
        """Threads whose `awaiting:` word is set (to see which notes stopped saying it)."""
        return {r["thread"] for r in self.state.query("SELECT thread FROM followup_threads WHERE override IS NOT NULL")}

    def last_heard(self, addresses: Sequence[str]) -> dict[str, float]:
        """When each of these people last wrote to the owner, in any thread (not the owner's mail, never an
        auto-reply, a bounce or other machine-made mail); a person never heard from is absent."""
        rows = self.state.query_in(
            "SELECT sender, max(at) AS at FROM followup_messages WHERE outbound = 0 AND automated IS NULL "
            "AND sender IN ({}) GROUP BY sender",
            sorted(set(addresses)),
        )
        return {r["sender"]: float(r["at"]) for r in rows}

    # -- the mailing lists seen ------------------------------------------------------------------

    def list_addresses(self) -> set[str]:
        return {
            r["list_address"]
            for r in self.state.query(
                "SELECT DISTINCT list_address FROM followup_messages WHERE list_address IS NOT NULL"
            )
        }

    # -- H0's own sends, read from the send ledger once -------------------------------------------

    def sends_mark(self) -> float:
        rows = self.state.query("SELECT value FROM meta WHERE name = ?", (SENDS_MARK,))
        try:
            return float(rows[0]["value"]) if rows else 0.0
        except ValueError:
            return 0.0

    def set_sends_mark(self, epoch: float) -> None:
        with self.state.writing() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (SENDS_MARK, repr(float(epoch))))

    def stats(self) -> dict[str, int]:
        """Counts for benchmarks and tests."""
        row = self.state.query(
            "SELECT (SELECT count(*) FROM followup_messages) AS messages, "
            "(SELECT count(*) FROM followup_threads) AS threads, "
            "(SELECT count(*) FROM followup_threads WHERE dirty = 1) AS dirty"
        )[0]
        return {k: int(v) for k, v in row.items()}
