"""The send ledger: what was sent, read back from the mail server's own audit log.

The audit log (`Logs/gmail_mcp_<date>.jsonl`) is the single source of truth; the ledger
is an in-memory index over its last 30 days, built at start and brought up to date by
reading only the bytes appended since (so it also sees what other processes wrote, and
survives restarts). It answers three questions: has this idempotency key been sent (or
is its outcome unknown)? how many mails went out in the last hour / day? what became of
this message id?

Events it understands:
  pre_send_audit  — written before the backend is called (idempotency_key, rfc822_message_id, …)
  email_sent      — the provider accepted it (provider_message_id, thread_id, sent_at)
  send_failed     — it did not go out (reason, retryable, bounce) or may have (outcome: unknown)
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from h0.vault.audit import AuditLog

PRE_SEND = "pre_send_audit"
SENT = "email_sent"
FAILED = "send_failed"
HOUR = 3600.0
DAY = 86400.0


@dataclass(slots=True)
class Attempt:
    """One Message-ID's history: the latest pre-send record and the outcome after it."""

    pre: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None

    @property
    def state(self) -> str:
        """'sent', 'failed', 'unknown' (outcome unknown), or 'pending' (no outcome yet)."""
        if self.outcome is None:
            return "pending"
        if self.outcome.get("event") == SENT:
            return "sent"
        return "unknown" if self.outcome.get("outcome") == "unknown" else "failed"


def record_epoch(record: dict[str, Any]) -> float | None:
    try:
        stamp = dt.datetime.fromisoformat(str(record.get("timestamp", "")).replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.UTC)
    return stamp.timestamp()


class SendLedger:
    """Index of the send events in one audit stream. Thread-safe."""

    def __init__(self, audit: AuditLog, *, days: int = 30) -> None:
        self.audit = audit
        self.days = days
        self._lock = threading.Lock()
        self._offsets: dict[Path, int] = {}
        self._attempts: dict[str, Attempt] = {}
        self._by_key: dict[str, list[str]] = {}
        self._by_provider_id: dict[str, str] = {}
        self._sent_times: list[float] = []
        self.refresh()

    # -- reading -------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read whatever was appended to the log files since the last call."""
        with self._lock:
            first_day = (dt.datetime.now(dt.UTC) - dt.timedelta(days=self.days)).date()
            for path in sorted(self.audit.logs_dir.glob(f"{self.audit.stream}_*.jsonl")):
                try:
                    if dt.date.fromisoformat(path.stem[len(self.audit.stream) + 1 :]) < first_day:
                        continue
                except ValueError:
                    continue
                self._read_new(path)

    def _read_new(self, path: Path) -> None:
        offset = self._offsets.get(path, 0)
        try:
            with path.open("rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
        except OSError:
            return
        end = chunk.rfind(b"\n") + 1  # a line still being written is read next time
        if end == 0:
            return
        self._offsets[path] = offset + end
        for line in chunk[:end].splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                self._index(record)

    def _index(self, record: dict[str, Any]) -> None:
        event = record.get("event")
        rfc = record.get("rfc822_message_id")
        if event not in (PRE_SEND, SENT, FAILED) or not isinstance(rfc, str):
            return
        attempt = self._attempts.setdefault(rfc, Attempt())
        key = record.get("idempotency_key")
        if isinstance(key, str):
            ids = self._by_key.setdefault(key, [])
            if rfc not in ids:
                ids.append(rfc)
        if event == PRE_SEND:
            if attempt.state != "sent":  # a later try of a sent message changes nothing
                attempt.pre, attempt.outcome = record, None
            return
        if attempt.state == "sent":
            return
        attempt.outcome = record
        if event == SENT:
            provider_id = record.get("provider_message_id")
            if isinstance(provider_id, str):
                self._by_provider_id[provider_id] = rfc
            stamp = record_epoch(record)
            if stamp is not None:
                bisect.insort(self._sent_times, stamp)

    # -- questions -----------------------------------------------------------------------

    def for_key(self, key: str) -> Attempt | None:
        """The attempt that decides what a send with this key should do now:
        a sent one if any, else the latest."""
        self.refresh()
        with self._lock:
            attempts = [self._attempts[rfc] for rfc in self._by_key.get(key, ())]
        for attempt in attempts:
            if attempt.state == "sent":
                return attempt
        return attempts[-1] if attempts else None

    def for_message(self, message_id: str) -> Attempt | None:
        """The attempt for a provider id or an RFC 5322 Message-ID."""
        self.refresh()
        with self._lock:
            rfc = self._by_provider_id.get(message_id, message_id)
            return self._attempts.get(rfc) or self._attempts.get(f"<{message_id.strip('<>')}>")

    def sends_within(self, seconds: float, now: float | None = None) -> list[float]:
        """Epoch times of the sends in the last `seconds`, oldest first."""
        self.refresh()
        now = time.time() if now is None else now
        with self._lock:
            start = bisect.bisect_left(self._sent_times, now - seconds)
            return self._sent_times[start:]

    # -- writing -------------------------------------------------------------------------

    def write(self, event: str, severity: str = "info", **fields: Any) -> dict[str, Any]:
        """Append to the audit log (raising if that fails) and index what was written."""
        record = self.audit.write(event, severity, **fields)
        self.refresh()
        return record
