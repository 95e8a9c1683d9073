"""Microsoft Graph's message JSON, translated: message resources → plain `Fetched`, delta pages → (ids, links),
and the few names H0 gives Graph (folders, ids, filter values). Everything Graph-shaped stays here and in
outlook.py.

Labels are H0's words for what Graph says in several properties, so the sync's query filter
(h0.mail.incoming.sync_query) and the owner's identity read an Outlook message as they read a Gmail one: the
folder (`INBOX`, `SENT` for Sent Items, `DRAFT`, `SPAM` for Junk Email, `TRASH` for Deleted Items, `Archive`),
`UNREAD` (isRead false), `STARRED` (flagged), `DRAFT` (isDraft) and the message's categories. A category
spelt like one of those words is dropped: a stranger's `Keywords:` header can become a category, and must
never read as SENT or INBOX.

Headers are the message's own (`internetMessageHeaders`, as the sender wrote them) where Graph has them,
cleaned like Gmail's (h0.mail.providers.gmail_wire.headers_message); From, To, Cc, Reply-To, Subject,
Message-ID and Date are made from Graph's parsed properties when the message has no such header (mail
written in Outlook itself). A recipient list is bounded before it is joined (10,000 recipients cost a
moment, not minutes: h0.mail.incoming.mimebounds).
"""

from __future__ import annotations

import datetime as dt
import re
from email.utils import format_datetime
from typing import Any
from urllib.parse import quote

from h0.errors import InvalidRequest
from h0.mail.headers import clean_header_text, format_address
from h0.mail.incoming.mimebounds import MAX_ADDRESS_LIST_CHARS
from h0.mail.providers.backend import AttachmentInfo, ChangesUnreadable, Fetched
from h0.mail.providers.gmail_wire import headers_message

# Graph's well-known folder names, and the label each is to H0.
FOLDER_LABELS = {
    "inbox": "INBOX",
    "sentitems": "SENT",
    "drafts": "DRAFT",
    "junkemail": "SPAM",
    "deleteditems": "TRASH",
    "archive": "Archive",
}
# Label names a person may give `move_email` for a well-known folder.
FOLDER_NAMES = {
    "inbox": "inbox",
    "sent": "sentitems",
    "sent items": "sentitems",
    "sentitems": "sentitems",
    "drafts": "drafts",
    "draft": "drafts",
    "spam": "junkemail",
    "junk": "junkemail",
    "junk email": "junkemail",
    "trash": "deleteditems",
    "deleted items": "deleteditems",
    "archive": "archive",
}
SYSTEM_LABELS = frozenset({"INBOX", "SENT", "DRAFT", "SPAM", "TRASH", "UNREAD", "STARRED", "IMPORTANT", "CHAT"})
MAX_CATEGORIES = 50
_ID = re.compile(r"[A-Za-z0-9_=+/-]{1,512}")
_FRACTION = re.compile(r"(\.[0-9]{6})[0-9]+")  # Graph may send 7 digits; Python reads 6
_ADDRESSED = {"from": "From", "sender": None, "toRecipients": "To", "ccRecipients": "Cc", "replyTo": "Reply-To"}

LIST_FIELDS = "id,conversationId,internetMessageId,subject,from,toRecipients,ccRecipients,receivedDateTime,sentDateTime,isRead,isDraft,categories,flag,parentFolderId,bodyPreview"
FULL_FIELDS = LIST_FIELDS + ",replyTo,body,internetMessageHeaders,hasAttachments"
DELTA_FIELDS = "id,receivedDateTime,isRead,isDraft,categories,flag"
ATTACHMENTS = "attachments($select=name,contentType,size,isInline)"


def checked_id(message_id: str, what: str = "message_id") -> str:
    """A Graph id as it may go in a URL path (percent-encoded), or InvalidRequest: no hostile text in a path."""
    text = str(message_id).strip()
    if not _ID.fullmatch(text):
        raise InvalidRequest(f"{what} is not a Microsoft Graph id.", field=what)
    return quote(text, safe="=")


def odata_text(value: str) -> str:
    """A string as an OData literal: quoted, its quotes doubled."""
    return "'" + str(value).replace("'", "''") + "'"


def graph_time(epoch_s: float) -> str:
    """Epoch seconds as Graph's DateTimeOffset in a filter."""
    return dt.datetime.fromtimestamp(max(0.0, epoch_s), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _epoch_ms(value: Any) -> int | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = dt.datetime.fromisoformat(_FRACTION.sub(r"\1", value))
    except ValueError:
        return None
    return int((stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)).timestamp() * 1000)


def labels_of(resource: dict[str, Any], folders: dict[str, str]) -> list[str]:
    """H0's labels for a message: its folder's (`folders`: Graph folder id → label), state flags, categories."""
    labels: list[str] = []
    folder = folders.get(str(resource.get("parentFolderId") or ""))
    if folder:
        labels.append(folder)
    if resource.get("isRead") is False:
        labels.append("UNREAD")
    if resource.get("isDraft") is True and "DRAFT" not in labels:
        labels.append("DRAFT")
    flag = resource.get("flag")
    if isinstance(flag, dict) and flag.get("flagStatus") == "flagged":
        labels.append("STARRED")
    labels.extend(categories_of(resource))
    return labels


def categories_of(resource: dict[str, Any]) -> list[str]:
    """The message's categories, cleaned, without any spelt like one of H0's own labels."""
    found = resource.get("categories")
    if not isinstance(found, list):
        return []
    kept = []
    for item in found[:MAX_CATEGORIES]:
        name = clean_header_text(item)[:255] if isinstance(item, str) else ""
        if name and name.upper() not in SYSTEM_LABELS and not name.upper().startswith("CATEGORY_"):
            kept.append(name)
    return kept


def _address(entry: Any) -> str | None:
    box = entry.get("emailAddress") if isinstance(entry, dict) else None
    if not isinstance(box, dict):
        return None
    address = clean_header_text(box.get("address") or "")[:320]
    if not address:
        return None
    return format_address(clean_header_text(box.get("name") or "")[:200], address)


def address_list(value: Any) -> str:
    """Graph's recipients as one header value, cut after the address that passes the bound."""
    entries = value if isinstance(value, list) else [value]
    shown: list[str] = []
    size = 0
    for entry in entries:
        text = _address(entry)
        if text is None:
            continue
        size += len(text) + 2
        if size > MAX_ADDRESS_LIST_CHARS:
            break
        shown.append(text)
    return ", ".join(shown)


def _header_pairs(resource: dict[str, Any]) -> list[dict[str, Any]]:
    own = resource.get("internetMessageHeaders")
    pairs = [p for p in own if isinstance(p, dict)] if isinstance(own, list) else []
    present = {str(p.get("name", "")).casefold() for p in pairs}
    made: list[tuple[str, str]] = []
    for key, name in _ADDRESSED.items():
        if name and name.casefold() not in present and resource.get(key):
            made.append((name, address_list(resource[key])))
    if "subject" not in present and resource.get("subject") is not None:
        made.append(("Subject", str(resource.get("subject") or "")))
    if "message-id" not in present and resource.get("internetMessageId"):
        made.append(("Message-ID", str(resource["internetMessageId"])))
    if "date" not in present:
        sent_ms = _epoch_ms(resource.get("sentDateTime")) or _epoch_ms(resource.get("receivedDateTime"))
        if sent_ms is not None:
            made.append(("Date", format_datetime(dt.datetime.fromtimestamp(sent_ms / 1000, dt.UTC))))
    return pairs + [{"name": name, "value": value} for name, value in made if value]


def fetched_from_message(resource: Any, folders: dict[str, str]) -> Fetched:
    """A Graph message resource (with or without body) as a plain `Fetched`."""
    if not isinstance(resource, dict) or not isinstance(resource.get("id"), str):
        raise TypeError("a message without its id")
    checked_id(resource["id"])
    fetched = Fetched(
        id=resource["id"],
        thread_id=str(resource["conversationId"]) if isinstance(resource.get("conversationId"), str) else None,
        headers=headers_message(_header_pairs(resource)),
        labels=labels_of(resource, folders),
        snippet=clean_header_text(resource.get("bodyPreview") or "")[:300],
        internal_date_ms=_epoch_ms(resource.get("receivedDateTime")),
    )
    body = resource.get("body")
    if isinstance(body, dict) and isinstance(body.get("content"), str):
        if str(body.get("contentType") or "").lower() == "html":
            fetched.html = body["content"]
        else:
            fetched.text = body["content"]
    for attachment in resource.get("attachments") or []:
        if isinstance(attachment, dict) and not attachment.get("isInline"):
            size = attachment.get("size")
            fetched.attachments.append(
                AttachmentInfo(
                    clean_header_text(attachment.get("name") or "")[:255] or "(unnamed)",
                    clean_header_text(attachment.get("contentType") or "")[:100] or "application/octet-stream",
                    size if isinstance(size, int) and size >= 0 else 0,
                )
            )
    return fetched


def delta_page(page: Any) -> tuple[list[tuple[str, tuple[str, ...]]], str | None, str | None]:
    """One delta answer as ([(message id, its state labels)], nextLink, deltaLink), or ChangesUnreadable.
    Removed entries (`@removed`) are left out: only arrivals matter to ingest."""
    try:
        if not isinstance(page, dict):
            raise TypeError(f"the answer is a {type(page).__name__}, not an object")
        values = page.get("value")
        if not isinstance(values, list):
            raise TypeError("`value` is not a list")
        entries = []
        for item in values:
            if not isinstance(item, dict):
                raise TypeError("an entry is not an object")
            if "@removed" in item:
                continue
            message_id = item.get("id")
            if not isinstance(message_id, str) or not _ID.fullmatch(message_id):
                raise ValueError(f"an entry has no usable id ({repr(message_id)[:40]})")
            entries.append((message_id, tuple(labels_of(item, {}))))
        next_link, delta_link = page.get("@odata.nextLink"), page.get("@odata.deltaLink")
        if not isinstance(next_link, str | None) or not isinstance(delta_link, str | None):
            raise TypeError("a link is not a string")
        if (next_link is None) == (delta_link is None):
            raise ValueError("the page has neither a next link nor a delta link (or both)")
    except (TypeError, ValueError) as exc:
        raise ChangesUnreadable(f"Graph's delta answer cannot be read: {exc}") from None
    return entries, next_link, delta_link
