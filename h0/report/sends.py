"""What H0 sent (`h0 log` without a NOTE): every message the mail server sent (its `email_sent`),
joined by Message-ID with its pre-send record (recipients, subject) and by idempotency key with
H0's filing (`email_filed`: where the note is now). Oldest first, so the newest is next to the prompt.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h0.mail.compose.recipients import describe_recipients, recipient_lists
from h0.report.logread import ALL_TIME, LogReader, TimeRange, local_time, plain
from h0.vault.layout import LOGS


@dataclass
class Send:
    sent_at: str
    to: str
    subject: str
    note: str | None  # where the note is filed now (Done/…), else where it was sent from
    filed: bool
    provider_message_id: str | None
    rfc822_message_id: str | None
    idempotency_key: str | None
    backend: str | None
    cc: str | None
    bcc: str | None
    sent_from: str | None  # the path in Approved/ it was sent from
    at: dt.datetime = field(repr=False)
    note_exists: bool | None = None

    def as_json(self) -> dict[str, Any]:
        return {**{k: v for k, v in self.__dict__.items() if k != "at"}, "recipients": self.recipient_lists()}

    def recipients(self) -> str:
        return " ".join(x for x in (self.to, self.cc or "", self.bcc or "") if x)

    def recipient_lists(self) -> dict[str, list[str]]:
        """Every recipient by real address (display names dropped), per field."""
        return recipient_lists(self.to, self.cc, self.bcc)


@dataclass
class SendList:
    sends: list[Send]  # the ones shown, oldest first
    total: int  # how many matched before --limit
    skipped: int  # malformed log lines


def list_sends(
    root: Path, window: TimeRange = ALL_TIME, *, to: str | None = None, note: str | None = None, limit: int = 0
) -> SendList:
    """The messages sent in `window`, oldest first; with `limit`, the newest `limit` of them."""
    reader = LogReader(Path(root) / LOGS, window)
    pre: dict[str, dict[str, Any]] = {}
    sent: dict[str, dict[str, Any]] = {}
    for record in reader.records("gmail_mcp", ("pre_send_audit", "email_sent")):
        rfc = str(record.get("rfc822_message_id") or f"?{record['timestamp']}")
        if record["event"] == "pre_send_audit":
            pre[rfc] = record
        else:
            sent.setdefault(rfc, record)
    handler_sent: dict[str, dict[str, Any]] = {}
    filed: dict[str, str] = {}
    # A filing can follow its send by a while (finished at the next start): read a day further.
    for record in reader.records("h0", ("email_sent", "email_filed"), extra_days=1, whole_days=True):
        if record["event"] == "email_filed" and record.get("idempotency_key") and record.get("done_path"):
            filed[str(record["idempotency_key"])] = str(record["done_path"])
        elif record["event"] == "email_sent" and not record.get("already_sent") and reader.window.holds(record["at"]):
            handler_sent.setdefault(str(record.get("rfc822_message_id") or f"?{record['timestamp']}"), record)
    for rfc, record in handler_sent.items():
        sent.setdefault(rfc, record)  # the mail server could not write its own record

    sends = [_send(rfc, record, pre.get(rfc), handler_sent.get(rfc), filed) for rfc, record in sent.items()]
    if to:
        sends = [s for s in sends if to.casefold() in s.recipients().casefold()]
    if note:
        sends = [s for s in sends if note.casefold() in f"{s.note or ''} {s.sent_from or ''}".casefold()]
    sends.sort(key=lambda s: s.at)
    total = len(sends)
    if limit > 0:
        sends = sends[-limit:]
    for send in sends:
        if send.note:
            send.note_exists = (Path(root) / send.note).is_file()
    return SendList(sends, total, reader.skipped)


def _send(
    rfc: str, record: dict[str, Any], pre: dict[str, Any] | None, handler: dict[str, Any] | None, filed: dict[str, str]
) -> Send:
    about = dict(pre or handler or record)
    lists = about.get("recipients")
    if isinstance(lists, dict):  # H0's own record: every field by real address (the mail server's record lost)
        for field in ("cc", "bcc"):
            about.setdefault(field, ", ".join(map(str, lists.get(field) or [])) or None)
    key = record.get("idempotency_key")
    sent_from = record.get("note_path") or record.get("path")
    done = filed.get(str(key)) if key else None
    return Send(
        sent_at=str(record.get("timestamp")),
        to=_text(about.get("to")),
        subject=_text(about.get("subject")),
        note=done or (str(sent_from) if sent_from else None),
        filed=done is not None,
        provider_message_id=_opt(record.get("provider_message_id") or record.get("message_id")),
        rfc822_message_id=None if rfc.startswith("?") else rfc,
        idempotency_key=_opt(key),
        backend=_opt(record.get("backend")),
        cc=_opt(about.get("cc")),
        bcc=_opt(about.get("bcc")),
        sent_from=_opt(sent_from),
        at=record["at"],
    )


def _text(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _opt(value: object) -> str | None:
    return None if value is None or value == "" else _text(value)


def render_sends(listing: SendList, window: TimeRange = ALL_TIME) -> str:
    shown = len(listing.sends)
    head = f"{listing.total} message(s) sent{window.describe()}, oldest first"
    if shown < listing.total:
        head += f" — showing the newest {shown} of {listing.total} (--limit 0 shows all)"
    lines = [head + ":"]
    for s in listing.sends:
        where = plain(s.note, 120) if s.note else "(no note: sent directly)"
        if s.note and not s.filed:
            where += " (not filed)"
        elif s.note_exists is False:
            where += " (no longer there)"
        lines.append(
            f'{local_time(s.sent_at)}  {describe_recipients(s.recipient_lists())}  "{plain(s.subject, 80)}"  '
            f"{where}  id {plain(s.provider_message_id or '?', 80)}"
        )
    return "\n".join(lines)
