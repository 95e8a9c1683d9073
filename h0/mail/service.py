"""The mail service: everything the mail MCP server offers, as plain Python.

It owns one backend, the send ledger and the retry policy, and answers with plain dicts
shaped like the server's output models (the server only validates and wraps them).
Reads are retried on retryable failures; sends go through `Sender` (sending.py).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from h0.config import Settings
from h0.errors import H0Error, InvalidRequest, NotFound
from h0.mail.addresses import check_address, refuse_line_breaks
from h0.mail.backend import Fetched, MailBackend, open_backend
from h0.mail.htmltext import html_to_text, truncate
from h0.mail.ledger import DAY, HOUR, SendLedger
from h0.mail.retry import RetryPolicy
from h0.mail.sending import Caps, Sender
from h0.vault.audit import AuditLog, iso
from h0.vault.layout import LOGS

T = TypeVar("T")
AUDIT_STREAM = "gmail_mcp"
MAX_BODY_CHARS = 100_000
MAX_LABEL_CHARS = 225
HEALTH_NETWORK_BUDGET_S = 2.0


def _iso_date(fetched: Fetched) -> str | None:
    if fetched.internal_date_ms:
        return iso(dt.datetime.fromtimestamp(fetched.internal_date_ms / 1000, dt.UTC))
    header = fetched.headers.get("Date")
    if not header:
        return None
    try:
        stamp = parsedate_to_datetime(str(header))
    except (TypeError, ValueError):
        return None
    return iso(stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC))


def _header(fetched: Fetched, name: str) -> str:
    value = fetched.headers.get(name)
    return str(value) if value is not None else ""


class MailService:
    """One per server process. Thread-safe: tools run in worker threads."""

    def __init__(self, settings: Settings, backend: MailBackend | None = None) -> None:
        self.settings = settings
        self.backend = backend or open_backend(settings)
        self.audit = AuditLog(settings.vault_path / LOGS, AUDIT_STREAM)
        self.ledger = SendLedger(self.audit)
        self.policy = RetryPolicy.from_settings(settings)
        self.sender = Sender(
            self.backend, self.ledger, self.policy,
            Caps(settings.rate_limit_per_hour, settings.rate_limit_per_day), settings.vault_path,
        )

    def close(self) -> None:
        self.backend.close()

    def shutdown(self, timeout: float = 30.0) -> bool:
        """Stop taking sends and wait up to `timeout` s for those in flight (the contract's
        graceful shutdown); True if all finished and were recorded."""
        return self.sender.drain(timeout)

    def _read(self, what: str, call: Callable[[int], T]) -> T:
        return self.policy.run(call, what=what)

    # -- sending -------------------------------------------------------------------------

    def send_email(self, **arguments: Any) -> dict[str, Any]:
        return asdict(self.sender.send(**arguments))

    # -- reading -------------------------------------------------------------------------

    def list_emails(self, query: str, max_results: int) -> dict[str, Any]:
        refuse_line_breaks("query", query)
        found = self._read("list_emails", lambda _: self.backend.list_messages(query, max_results))
        return {
            "emails": [
                {
                    "id": item.id, "thread_id": item.thread_id, "subject": _header(item, "Subject"),
                    "sender": _header(item, "From"), "date": _iso_date(item), "snippet": item.snippet,
                    "labels": item.labels,
                }
                for item in found
            ]
        }

    def get_email(self, message_id: str) -> dict[str, Any]:
        fetched = self._read("get_email", lambda _: self.backend.get_message(message_id))
        text = fetched.text
        if text is None and fetched.html is not None:
            text = html_to_text(fetched.html)
        text = (text or "").replace("\r\n", "\n")  # mail is CRLF on the wire; notes are not
        body, cut = truncate(text, MAX_BODY_CHARS)
        return {
            "id": fetched.id, "thread_id": fetched.thread_id, "rfc822_message_id": _header(fetched, "Message-ID") or None,
            "subject": _header(fetched, "Subject"), "sender": _header(fetched, "From"), "to": _header(fetched, "To"),
            "cc": _header(fetched, "Cc"), "date": _iso_date(fetched), "body": body, "body_truncated": cut,
            "body_format": "plain" if fetched.text is not None else ("html" if fetched.html is not None else "none"),
            "has_attachments": bool(fetched.attachments),
            "attachment_names": [a.filename for a in fetched.attachments],
            "attachments": [asdict(a) for a in fetched.attachments],
            "labels": fetched.labels,
        }

    # -- labels --------------------------------------------------------------------------

    @staticmethod
    def _label_name(name: str) -> str:
        refuse_line_breaks("label name", name)
        name = name.strip()
        if not name or len(name) > MAX_LABEL_CHARS:
            raise InvalidRequest(f"A label name must be 1–{MAX_LABEL_CHARS} characters.", field="label_name")
        return name

    def add_label(self, message_id: str, label_name: str) -> dict[str, Any]:
        name = self._label_name(label_name)
        label = self._read("add_label", lambda _: self.backend.ensure_label(name))
        labels = self._read("add_label", lambda _: self.backend.modify_labels(message_id, [label.id], []))
        return {"message_id": message_id, "label_id": label.id, "label_name": label.name, "created": label.created, "labels": labels}

    def move_email(self, message_id: str, destination_label: str) -> dict[str, Any]:
        """Gmail has no folders: "moving" adds the destination label and takes the message out of the inbox."""
        name = self._label_name(destination_label)
        label = self._read("move_email", lambda _: self.backend.ensure_label(name))
        remove = [] if label.id == "INBOX" else ["INBOX"]
        labels = self._read("move_email", lambda _: self.backend.modify_labels(message_id, [label.id], remove))
        return {"message_id": message_id, "destination_label": label.name, "label_id": label.id,
                "created": label.created, "labels": labels}

    # -- checks --------------------------------------------------------------------------

    @staticmethod
    def validate_email(address: str) -> dict[str, Any]:
        checked = check_address(address)
        return {"email": address, "valid": checked.valid, "normalized": checked.normalized,
                "reason": checked.reason, "suggestion": checked.suggestion}

    def email_status(self, message_id: str) -> dict[str, Any]:
        refuse_line_breaks("message_id", message_id)
        attempt = self.ledger.for_message(message_id.strip())
        if attempt is not None:
            outcome = attempt.outcome or {}
            rfc = str(outcome.get("rfc822_message_id") or (attempt.pre or {}).get("rfc822_message_id"))
            result = {"message_id": message_id, "rfc822_message_id": rfc}
            if attempt.state == "sent":
                bounced_ms = self._quietly(lambda: self.backend.find_bounce(rfc))
                if bounced_ms:
                    stamp = iso(dt.datetime.fromtimestamp(bounced_ms / 1000, dt.UTC))
                    return {**result, "status": "bounced", "timestamp": stamp, "error": "a delivery-failure report arrived"}
                return {**result, "status": "sent", "timestamp": outcome.get("sent_at") or outcome.get("timestamp")}
            if attempt.state == "failed":
                status = "bounced" if outcome.get("bounce") else "failed"
                return {**result, "status": status, "timestamp": outcome.get("timestamp"), "error": outcome.get("reason")}
            stamp = (attempt.pre or {}).get("timestamp")
            return {**result, "status": "unknown", "timestamp": stamp, "error": "the send's outcome was never confirmed"}
        if self.backend.can_read:
            try:
                fetched = self._read("get_email_status", lambda _: self.backend.get_message(message_id))
            except NotFound:
                fetched = None
            if fetched is not None and "SENT" in fetched.labels:
                return {"message_id": message_id, "status": "sent", "timestamp": _iso_date(fetched),
                        "rfc822_message_id": _header(fetched, "Message-ID") or None}
        return {"message_id": message_id, "status": "unknown", "timestamp": None}

    @staticmethod
    def _quietly(call: Callable[[], T]) -> T | None:
        try:
            return call()
        except H0Error:
            return None

    def health(self) -> dict[str, Any]:
        started = time.monotonic()
        problems = list(self.backend.problems())
        token = self.backend.token_state()
        account = None
        if token not in ("missing", "revoked"):
            account = self.backend.account(HEALTH_NETWORK_BUDGET_S)
            if account is None and self.backend.can_read:
                problems.append(f"Gmail did not confirm the account within {HEALTH_NETWORK_BUDGET_S:.0f} s")
        logs = self.audit.logs_dir
        if not os.access(logs if logs.exists() else logs.parent, os.W_OK):
            problems.append(f"cannot write the audit log in {logs}: sends are refused without it")
        return {
            "status": "ok" if not problems else "degraded",
            "backend": self.backend.name,
            "account": account,
            "token": token,
            "sends_last_hour": len(self.ledger.sends_within(HOUR)),
            "sends_last_day": len(self.ledger.sends_within(DAY)),
            "rate_limit_per_hour": self.settings.rate_limit_per_hour,
            "rate_limit_per_day": self.settings.rate_limit_per_day,
            "problems": problems,
            "notes": [self.backend.notice] if self.backend.notice else [],
            "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
        }
