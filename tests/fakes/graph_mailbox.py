"""The fake Graph's mailbox: folders, messages as Graph renders them, the OData filters H0 sends, delta logs.

Messages are kept as Graph's own properties (from, toRecipients, body, internetMessageHeaders, …), rendered
per `$select`. The `$filter` grammar is the subset Graph's mail API documents and H0 uses — clauses joined by
`and` — and a filtered listing with `$orderby=receivedDateTime` must start with that property, as Graph
requires (else 400 InefficientFilter). Anything else is a 400, as Graph answers a filter it does not take.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
import secrets
from dataclasses import dataclass, field
from typing import Any


class GraphError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


WELL_KNOWN = ("inbox", "sentitems", "drafts", "archive", "junkemail", "deleteditems")
DISPLAY = {
    "inbox": "Inbox",
    "sentitems": "Sent Items",
    "drafts": "Drafts",
    "archive": "Archive",
    "junkemail": "Junk Email",
    "deleteditems": "Deleted Items",
}


def graph_id(prefix: str = "AAMkAD") -> str:
    """An id shaped like Graph's immutable ids (base64url, '=' padded)."""
    return prefix + base64.urlsafe_b64encode(secrets.token_bytes(60)).decode()[:-2] + "=="


def iso(epoch_s: float) -> str:
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def recipient(address: str, name: str = "") -> dict[str, Any]:
    return {"emailAddress": {"name": name or address, "address": address}}


@dataclass
class StoredMessage:
    id: str
    folder: str  # folder id
    props: dict[str, Any]  # Graph's properties, as they would be rendered
    received_s: float
    attachments: list[dict[str, Any]] = field(default_factory=list)

    def render(self, select: list[str] | None, expand: str | None = None) -> dict[str, Any]:
        full = {**self.props, "id": self.id, "parentFolderId": self.folder, "receivedDateTime": iso(self.received_s)}
        full["hasAttachments"] = bool(self.attachments)
        chosen = {k: v for k, v in full.items() if select is None or k in select or k == "id"}
        if expand and expand.startswith("attachments"):
            chosen["attachments"] = [{"@odata.type": "#microsoft.graph.fileAttachment", **a} for a in self.attachments]
        return chosen


_LITERAL = r"'((?:[^']|'')*)'"
_CLAUSES: list[tuple[str, re.Pattern[str]]] = [
    ("received", re.compile(r"receivedDateTime (ge|gt|lt|le) (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")),
    ("isRead", re.compile(r"isRead eq (true|false)")),
    ("flag", re.compile(r"flag/flagStatus eq 'flagged'")),
    ("attachments", re.compile(r"hasAttachments eq true")),
    ("category", re.compile(r"categories/any\(c:c eq " + _LITERAL + r"\)")),
    ("from", re.compile(r"from/emailAddress/address eq " + _LITERAL)),
    ("to", re.compile(r"toRecipients/any\(r:r/emailAddress/address eq " + _LITERAL + r"\)")),
    ("subject", re.compile(r"contains\(subject," + _LITERAL + r"\)")),
    ("msgid", re.compile(r"internetMessageId eq " + _LITERAL)),
    ("conversation", re.compile(r"conversationId eq " + _LITERAL)),
]


def parse_filter(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The filter as (clause kind, its values), or GraphError 400 for anything outside the grammar."""
    clauses, at = [], 0
    while True:
        for kind, pattern in _CLAUSES:
            match = pattern.match(text, at)
            if match:
                clauses.append((kind, tuple(g.replace("''", "'") for g in match.groups())))
                at = match.end()
                break
        else:
            raise GraphError(400, "ErrorInvalidUrlQueryFilter", f"The filter is not supported: {text[at : at + 60]!r}")
        if at == len(text):
            return clauses
        if not text.startswith(" and ", at):
            raise GraphError(400, "ErrorInvalidUrlQueryFilter", f"Expected 'and' at {text[at : at + 30]!r}")
        at += 5


def matches(message: StoredMessage, clauses: list[tuple[str, tuple[str, ...]]]) -> bool:
    props = message.props
    for kind, values in clauses:
        if kind == "received":
            bound = parse_time(values[1])
            op = values[0]
            at = message.received_s
            ok = {"ge": at >= bound, "gt": at > bound, "lt": at < bound, "le": at <= bound}[op]
        elif kind == "isRead":
            ok = props.get("isRead") is (values[0] == "true")
        elif kind == "flag":
            ok = (props.get("flag") or {}).get("flagStatus") == "flagged"
        elif kind == "attachments":
            ok = bool(message.attachments)
        elif kind == "category":
            ok = values[0] in (props.get("categories") or [])
        elif kind == "from":
            ok = ((props.get("from") or {}).get("emailAddress") or {}).get("address", "").lower() == values[0].lower()
        elif kind == "to":
            ok = any(r["emailAddress"]["address"].lower() == values[0].lower() for r in props.get("toRecipients") or [])
        elif kind == "subject":
            ok = values[0].lower() in str(props.get("subject") or "").lower()
        elif kind == "msgid":
            ok = props.get("internetMessageId") == values[0]
        else:
            ok = props.get("conversationId") == values[0]
        if not ok:
            return False
    return True


def searched(message: StoredMessage, words: str) -> bool:
    text = " ".join(
        [
            str(message.props.get("subject") or ""),
            str((message.props.get("body") or {}).get("content") or ""),
            str(((message.props.get("from") or {}).get("emailAddress") or {}).get("address") or ""),
        ]
    ).lower()
    return all(word in text for word in words.strip('"').lower().split())


@dataclass
class Change:
    seq: int
    folder: str
    message_id: str
    kind: str  # created | updated | deleted
