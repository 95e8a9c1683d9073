"""Mail kept as history: what H0 learns from without a note per message (docs/mail-in.md).

`h0 import` and a first mail sync keep older mail and the owner's sent mail here (table
`history`, h0.state.schema), one row per message by the follow-up ledger's key (its Message-ID),
so past replies per person, the owner's voice, thread context and duplicate checks are one
indexed query each, never a walk of the vault. An import's progress lives here too: the recent
mail it holds until its pass ends (`import_work`) and where it stands in each file
(`import_files`), written in the same transaction as the messages they describe, so a stop at
any moment (Ctrl-C, a full disk, a crash) resumes without a message lost or kept twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from h0.state.db import StateDB


@dataclass(frozen=True, slots=True)
class HistoryMessage:
    """One message as history keeps it."""

    key: str
    thread: str
    outbound: bool  # the owner wrote it
    sender: str  # lower-case address
    recipients: tuple[tuple[str, str], ...]  # (display name, lower-case address) of To and Cc
    subject: str
    at: float  # epoch seconds
    text: str  # the message's own words (quoted history and signature cut)
    signature: str = ""
    provider_id: str | None = None
    note: str | None = None
    origin: str = "import"

    def thread_fields(self) -> dict[str, str]:
        """What ties it to its conversation, named as a note's frontmatter names it (its thread, the message it
        is), so the disclosure gate reads its thread keys as a note's (h0.vault.disclosure.thread_keys)."""
        return {"thread_id": self.thread, "message_id": self.provider_id or self.key}


@dataclass(frozen=True, slots=True)
class FileMark:
    """Where an import stands in one file: every message before `offset` is kept."""

    file: str
    size: int
    mtime_ns: int
    head: str
    offset: int = 0
    done: bool = False

    def same_file(self, other: FileMark) -> bool:
        return (self.size, self.mtime_ns, self.head) == (other.size, other.mtime_ns, other.head)


@dataclass(frozen=True, slots=True)
class HeldWork:
    """Recent mail an import holds until its pass ends (as JSON: the email model's dump)."""

    key: str
    at: float
    email: str


class StoredMessage(Protocol):
    """What every table of messages keeps of one (history's HistoryMessage, the follow-up ledger's Message)."""

    @property
    def key(self) -> str: ...
    @property
    def provider_id(self) -> str | None: ...
    @property
    def thread(self) -> str: ...
    @property
    def outbound(self) -> bool: ...
    @property
    def sender(self) -> str: ...
    @property
    def recipients(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def subject(self) -> str: ...
    @property
    def at(self) -> float: ...


def message_columns(m: StoredMessage) -> tuple[Any, ...]:
    """The first columns of every table of messages, in their order, as written (`stored_message` reads them
    back): key, provider_id, thread, outbound, sender, recipients (JSON [[name, address], …]), subject, at."""
    return (
        m.key,
        m.provider_id,
        m.thread,
        int(m.outbound),
        m.sender,
        json.dumps([list(r) for r in m.recipients]),
        m.subject,
        m.at,
    )


def stored_message(row: Mapping[str, Any]) -> dict[str, Any]:
    """The columns every table of messages keeps (history, the follow-up ledger), read back as the message
    models name them: its key, thread, whether it was told the owner wrote it, who, to whom, what, when."""
    return {
        "key": row["key"],
        "thread": row["thread"],
        "outbound": bool(row["outbound"]),
        "sender": row["sender"] or "",
        "recipients": stored_recipients(row["recipients"]),
        "subject": row["subject"] or "",
        "at": float(row["at"]),
        "provider_id": row["provider_id"],
        "note": row["note"],
    }


def stored_recipients(text: str | None) -> tuple[tuple[str, str], ...]:
    """A `recipients` column as written (JSON [[name, address], …]) read back; () when it cannot be."""
    try:
        return tuple((str(n), str(a)) for n, a in json.loads(text or "[]"))
    except (ValueError, TypeError):
        return ()


def _message(row: dict[str, Any]) -> HistoryMessage:
    return HistoryMessage(
        **stored_message(row), text=row["text"] or "", signature=row["signature"] or "", origin=row["origin"]
    )


class MailHistory:
    """The history tables of one vault's state database (thread-safe like the StateDB under it)."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    # -- writing ----------------------------------------------------------------------------

    def commit(
        self,
        messages: Sequence[HistoryMessage],
        *,
        hold: Sequence[HeldWork] = (),
        mark: FileMark | None = None,
    ) -> int:
        """Keep `messages` (a key kept before stays as it was), hold `hold` for the end of the pass and
        move the file's mark, in ONE transaction. Returns how many messages were new."""
        with self.state.writing() as db:
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        *message_columns(m),
                        m.text,
                        m.signature or None,
                        m.note,
                        m.origin,
                    )
                    for m in messages
                ],
            )
            added = db.total_changes - before
            db.executemany(
                "INSERT OR IGNORE INTO history_to VALUES (?, ?, ?)",
                [(addr, m.key, m.at) for m in messages if m.outbound for _, addr in m.recipients],
            )
            db.executemany("INSERT OR IGNORE INTO import_work VALUES (?, ?, ?)", [(h.key, h.at, h.email) for h in hold])
            if mark is not None:
                db.execute(
                    "INSERT OR REPLACE INTO import_files VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (mark.file, mark.size, mark.mtime_ns, mark.head, mark.offset, int(mark.done), time.time()),
                )
        return int(added)

    def set_notes(self, notes: dict[str, str]) -> None:
        """Record the note written for each of these keys, and release them from the held work."""
        if not notes:
            return
        with self.state.writing() as db:
            db.executemany("UPDATE history SET note = ? WHERE key = ?", [(n, k) for k, n in notes.items()])
            db.executemany("DELETE FROM import_work WHERE key = ?", [(k,) for k in notes])

    def release(self, keys: Iterable[str]) -> None:
        """Held work that stays history (answered, or already a note elsewhere)."""
        rows = [(k,) for k in keys]
        if not rows:
            return
        with self.state.writing() as db:
            db.executemany("DELETE FROM import_work WHERE key = ?", rows)

    # -- reading ----------------------------------------------------------------------------

    def known(self, keys: Sequence[str]) -> set[str]:
        """Which of these keys history already keeps."""
        return {r["key"] for r in self.state.query_in("SELECT key FROM history WHERE key IN ({})", keys)}

    def held(self, limit: int = 500) -> list[HeldWork]:
        """Recent mail an import holds, oldest first."""
        rows = self.state.query("SELECT * FROM import_work ORDER BY at, key LIMIT ?", (limit,))
        return [HeldWork(r["key"], float(r["at"]), r["email"]) for r in rows]

    def answered_after(self, thread: str, at: float) -> bool:
        """Did the owner write in this thread after `at`?"""
        rows = self.state.query(
            "SELECT 1 AS x FROM history WHERE thread = ? AND outbound = 1 AND at > ? LIMIT 1", (thread, at)
        )
        return bool(rows)

    def thread(self, thread: str, *, before: float | None = None, limit: int = 20) -> list[HistoryMessage]:
        """The thread's messages written before `before` (all when None), the latest `limit`, oldest first."""
        rows = self.state.query(
            "SELECT * FROM history WHERE thread = ? AND at < ? ORDER BY at DESC LIMIT ?",
            (thread, float("inf") if before is None else before, limit),
        )
        return [_message(r) for r in reversed(rows)]

    def sent(self, limit: int = 2_000) -> list[HistoryMessage]:
        """The owner's latest messages, newest first."""
        rows = self.state.query("SELECT * FROM history WHERE outbound = 1 ORDER BY at DESC LIMIT ?", (limit,))
        return [_message(r) for r in rows]

    def sent_to(self, address: str, limit: int = 3) -> list[HistoryMessage]:
        """The owner's latest messages to this address (To or Cc), newest first."""
        rows = self.state.query(
            "SELECT h.* FROM history_to t JOIN history h ON h.key = t.key WHERE t.address = ? "
            "ORDER BY t.at DESC LIMIT ?",
            (address.strip().lower(), limit),
        )
        return [_message(r) for r in rows]

    def sent_signature(self) -> tuple[int, float]:
        """Changes whenever the owner's kept messages change (how many, the newest): a cache's key."""
        rows = self.state.query("SELECT count(*) AS n, coalesce(max(at), 0) AS m FROM history WHERE outbound = 1")
        return (int(rows[0]["n"]), float(rows[0]["m"])) if rows else (0, 0.0)

    def counts(self) -> dict[str, int]:
        rows = self.state.query(
            "SELECT count(*) AS n, coalesce(sum(outbound), 0) AS sent, count(note) AS notes FROM history"
        )
        row = rows[0] if rows else {"n": 0, "sent": 0, "notes": 0}
        return {"messages": int(row["n"]), "sent": int(row["sent"]), "notes": int(row["notes"])}

    # -- an import's place in each file --------------------------------------------------------

    def mark(self, file: str) -> FileMark | None:
        rows = self.state.query("SELECT * FROM import_files WHERE file = ?", (file,))
        if not rows:
            return None
        r = rows[0]
        return FileMark(r["file"], int(r["size"]), int(r["mtime_ns"]), r["head"], int(r["offset"]), bool(r["done"]))
