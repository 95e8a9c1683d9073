"""Gmail v1 wire shapes for the fake: stored messages, their JSON resources, search queries.

Only what H0 uses, but in Gmail's real shapes (field names, base64url bodies, partIds,
attachmentIds instead of attachment data in format=full, header filtering in
format=metadata), so the real client library parses them as it would Gmail's.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import shlex
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses
from typing import Any

SYSTEM_LABELS = (
    "INBOX",
    "SENT",
    "DRAFT",
    "SPAM",
    "TRASH",
    "UNREAD",
    "STARRED",
    "IMPORTANT",
    "CHAT",
    "CATEGORY_PERSONAL",
    "CATEGORY_SOCIAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_UPDATES",
    "CATEGORY_FORUMS",
)
_WORDS = re.compile(r"\s+")


class GmailError(Exception):
    """An error answer of the Gmail API (or of the token endpoint)."""

    def __init__(self, status: int, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.reason = status, message, reason


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def parse_raw(raw: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(raw)  # type: ignore[return-value]


@dataclass
class StoredMessage:
    """One message in the fake mailbox. `message` is the parsed MIME (email package)."""

    id: str
    thread_id: str
    raw: bytes
    message: EmailMessage
    labels: list[str]
    internal_date_ms: int
    received_at: float | None = None  # time.time() when a send arrived (None for seeded mail)
    metadata: dict[str, Any] = field(default_factory=dict)  # what came beside `raw` (threadId, upload type)

    @property
    def text(self) -> str:
        """The plain body (or the HTML one), decoded."""
        part = self.message.get_body(preferencelist=("plain", "html"))
        try:
            return part.get_content() if part is not None else ""
        except (LookupError, KeyError, AttributeError):
            return ""

    @property
    def attachments(self) -> list[EmailMessage]:
        return list(self.message.iter_attachments())

    def header(self, name: str) -> str:
        value = self.message.get(name)
        return str(value) if value is not None else ""

    def snippet(self) -> str:
        return html.escape(_WORDS.sub(" ", self.text).strip()[:100])


def _unfold(value: str) -> str:
    return value.replace("\r\n", "").replace("\n", "")


def _part(part: EmailMessage, part_id: str) -> dict[str, Any]:
    resource: dict[str, Any] = {
        "partId": part_id,
        "mimeType": part.get_content_type(),
        "filename": part.get_filename() or "",
        "headers": [{"name": k, "value": _unfold(str(v))} for k, v in part.raw_items()],
    }
    if part.is_multipart():
        resource["body"] = {"size": 0}
        resource["parts"] = [
            _part(child, f"{part_id}.{n}" if part_id else str(n)) for n, child in enumerate(part.get_payload())
        ]
        return resource
    data = part.get_payload(decode=True) or b""
    if part.get_filename() or part.get_content_disposition() == "attachment":
        digest = hashlib.sha1(data + part_id.encode()).hexdigest()
        resource["body"] = {"attachmentId": f"ANGjdJ{digest}", "size": len(data)}
    else:
        resource["body"] = {"size": len(data), "data": b64url(data)}
    return resource


def message_resource(stored: StoredMessage, fmt: str, metadata_headers: list[str]) -> dict[str, Any]:
    """users.messages.get in format minimal / metadata / full / raw."""
    resource: dict[str, Any] = {
        "id": stored.id,
        "threadId": stored.thread_id,
        "labelIds": list(stored.labels),
        "snippet": stored.snippet(),
        "sizeEstimate": len(stored.raw),
        "historyId": str(1000 + stored.internal_date_ms % 1000),
        "internalDate": str(stored.internal_date_ms),
    }
    if fmt == "raw":
        resource["raw"] = b64url(stored.raw)
    elif fmt == "metadata":
        wanted = {h.lower() for h in metadata_headers}
        headers = [
            {"name": k, "value": _unfold(str(v))}
            for k, v in stored.message.raw_items()
            if not wanted or k.lower() in wanted
        ]
        resource["payload"] = {
            "partId": "",
            "mimeType": stored.message.get_content_type(),
            "filename": "",
            "headers": headers,
        }
    elif fmt == "full":
        resource["payload"] = _part(stored.message, "")
    return resource


THREAD_FORMATS = ("minimal", "metadata", "full")


def thread_resource(
    thread_id: str, messages: list[StoredMessage], fmt: str, metadata_headers: list[str]
) -> dict[str, Any]:
    """users.threads.get: the thread's messages, oldest first, each as messages.get gives it in `fmt`."""
    ordered = sorted(messages, key=lambda m: m.internal_date_ms)
    resources = [message_resource(m, fmt, metadata_headers) for m in ordered]
    history = max((int(r["historyId"]) for r in resources), default=1000)
    return {"id": thread_id, "historyId": str(history), "messages": resources}


# -- search ------------------------------------------------------------------------------


def _norm_label(name: str) -> str:
    # Gmail's query syntax writes spaces and slashes in label names as dashes.
    return re.sub(r"[\s/]+", "-", name.strip().lower())


def _addresses(stored: StoredMessage, *names: str) -> str:
    values = [stored.header(n) for n in names]
    return " ".join(f"{name} {addr}" for name, addr in getaddresses(values)).lower()


def _bare(message_id: str) -> str:
    return message_id.strip().strip("<>").lower()


def _term_matches(term: str, stored: StoredMessage, label_names: dict[str, str]) -> bool:
    op, sep, value = term.partition(":")
    labels = {lid.upper() for lid in stored.labels}
    if not sep or not value:
        return term.lower() in (stored.raw.decode("utf-8", "replace") + "\n" + stored.text).lower()
    op, value = op.lower(), value.strip('"')
    if op == "is":
        return {
            "unread": "UNREAD" in labels,
            "read": "UNREAD" not in labels,
            "starred": "STARRED" in labels,
            "important": "IMPORTANT" in labels,
        }.get(value.lower(), False)
    if op == "in":
        return value.lower() == "anywhere" or value.upper() in labels
    if op == "label":
        wanted = _norm_label(value)
        return any(_norm_label(label_names.get(lid, lid)) == wanted or lid.lower() == wanted for lid in stored.labels)
    if op == "from":
        return value.lower() in _addresses(stored, "From")
    if op == "to":
        return value.lower() in _addresses(stored, "To", "Cc", "Bcc")
    if op == "subject":
        return value.lower() in stored.header("Subject").lower()
    if op == "rfc822msgid":
        return _bare(stored.header("Message-ID")) == _bare(value)
    if op == "has":
        return value.lower() == "attachment" and bool(stored.attachments)
    return term.lower() in stored.raw.decode("utf-8", "replace").lower()


def search(
    messages: list[StoredMessage], query: str, label_names: dict[str, str], include_spam_trash: bool
) -> list[StoredMessage]:
    """Messages matching a Gmail query (the subset H0 uses), newest first."""
    try:
        terms = shlex.split(query or "", posix=True)
    except ValueError:
        terms = (query or "").split()
    lowered = query.lower()
    wants_hidden = include_spam_trash or any(s in lowered for s in ("in:trash", "in:spam", "in:anywhere"))
    found = []
    for stored in messages:
        if not wants_hidden and {"TRASH", "SPAM"} & set(stored.labels):
            continue
        ok = True
        for term in terms:
            negate = term.startswith("-") and len(term) > 1
            hit = _term_matches(term[1:] if negate else term, stored, label_names)
            if hit == negate:
                ok = False
                break
        if ok:
            found.append(stored)
    return sorted(found, key=lambda m: m.internal_date_ms, reverse=True)
