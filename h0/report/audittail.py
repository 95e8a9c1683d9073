"""The audit records `h0 status` and the dashboard use: the last KEEP_DAYS days of `Logs/`, read
incrementally (`AuditTail`, kept by the daemon's dashboard between refreshes, parses only the lines
appended since), and which of the errors among them still hold."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from h0.mail.compose.recipients import FIELDS, recipient_lists
from h0.platform.fs import regular_file
from h0.vault.audit import utcnow

STREAMS = ("h0", "gmail_mcp", "vault_mcp")
KEEP_DAYS = 7
# Events of H0's own stream the status needs besides errors.
_KEPT = frozenset(
    {
        "email_filed",
        "sends_paused",
        "send_deferred",
        "send_failed",
        "mcp_unavailable",
        "send_outcome_unknown",
        "copy_filed",  # h0.report.approved.copies_filed
        "handler_error",
        "read_error",
        "send_refused",
        "send_held",
        "email_delivery_failed",
        "email_ingested",
        "triage_decision",
        "draft_rejected",
        "daemon_started",
        "daemon_stopped",
        "note_unsnoozed",  # the briefing's "back from snooze"
        "control_note_changed",  # h0.report.control: changes to the control notes H0 did not see the owner make
        "control_note_confirmed",
        "control_note_not_confirmed",
    }
)
_ERRORS = frozenset({"error", "critical"})
_HEAD = 64  # a log file's first bytes (its first record's timestamp): with the inode, who it is


class AuditTail:
    """The records of the last KEEP_DAYS days of the audit streams that the status uses,
    read incrementally: each `refresh` parses only what was appended since the last one."""

    def __init__(self, logs_dir: Path, days: int = KEEP_DAYS, per_file: int = 20_000) -> None:
        self.logs_dir = Path(logs_dir)
        self.days = days
        self.per_file = per_file
        # file name → (identity: inode and first bytes, offset read to, mtime then, records kept)
        self._files: dict[str, tuple[tuple[int, bytes], int, int, list[dict[str, Any]]]] = {}
        self._merged: list[dict[str, Any]] | None = None

    def refresh(self) -> list[dict[str, Any]]:
        """Every kept record, oldest first (timestamps are UTC ISO strings: they sort as text)."""
        first = (utcnow() - dt.timedelta(days=self.days)).date().isoformat()
        seen = set()
        for stream in STREAMS:
            try:
                paths = list(self.logs_dir.glob(f"{stream}_*.jsonl"))
            except OSError:
                paths = []
            for path in paths:
                if path.stem[len(stream) + 1 :] >= first:
                    seen.add(path.name)
                    self._read(path, stream)
        for name in set(self._files) - seen:
            del self._files[name]
            self._merged = None
        if self._merged is None:
            merged = [r for *_, records in self._files.values() for r in records]
            merged.sort(key=lambda r: str(r.get("timestamp", "")))
            self._merged = merged
        return self._merged

    def _read(self, path: Path, stream: str) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        known = self._files.get(path.name)
        if known is not None and known[1] == st.st_size and known[2] == st.st_mtime_ns:
            return  # unchanged: the common case costs one stat
        try:
            with regular_file(path) as handle:
                identity = (st.st_ino, handle.read(_HEAD))
                _, offset, _, records = known if known is not None and known[0] == identity else (None, 0, 0, [])
                if st.st_size < offset:  # truncated: read it again
                    offset, records = 0, []
                handle.seek(offset)
                chunk = handle.read(max(0, st.st_size - offset))
        except OSError:
            return
        end = chunk.rfind(b"\n") + 1  # a line being written is read next time, whole
        for line in chunk[:end].splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and (
                record.get("severity") in _ERRORS
                or (stream == "h0" and record.get("event") in _KEPT)
                or (stream == "gmail_mcp" and record.get("event") == "email_sent")  # the mail server's, the one record
            ):
                record["stream"] = stream
                records.append(record)
        del records[: max(0, len(records) - self.per_file)]
        self._files[path.name] = (identity, offset + end, st.st_mtime_ns if end == len(chunk) else 0, records)
        self._merged = None


# What resolves an earlier error about the same note: it went out, was filed, or was triaged after all.
_RESOLVED_BY = frozenset({"email_sent", "email_filed", "triage_decision", "draft_rejected", "note_rejected"})


def current_errors(
    records: list[dict[str, Any]], since: str, events: frozenset[str] | None = None
) -> list[dict[str, Any]]:
    """The errors (or, with `events`, the records of those events) since `since` that still hold: one
    about a note that later went out (or was filed, triaged, rejected) is fixed and drops out of the
    current lists — it stays in the log (`h0 log`)."""
    fixed_at: dict[str, str] = {}
    for record in records:
        if record.get("event") in _RESOLVED_BY:
            for key in ("path", "note", "done_path"):
                if record.get(key):
                    fixed_at[str(record[key])] = max(
                        fixed_at.get(str(record[key]), ""), str(record.get("timestamp", ""))
                    )
    current = []
    for record in records:
        wanted = record.get("event") in events if events is not None else record.get("severity") in _ERRORS
        if not wanted or str(record.get("timestamp", "")) < since:
            continue
        paths = [str(record[k]) for k in ("path", "returned_to") if record.get(k)]
        if any(fixed_at.get(p, "") > str(record.get("timestamp", "")) for p in paths):
            continue
        current.append(record)
    return current


def sent_recipients(record: dict[str, Any]) -> dict[str, list[str]]:
    """Every recipient of an `email_sent` record by real address (records before the field: from `to`)."""
    lists = record.get("recipients")
    if isinstance(lists, dict):
        return {field: [str(a) for a in lists.get(field) or []] for field in FIELDS}
    return recipient_lists(record.get("to"), record.get("cc"), record.get("bcc"))
