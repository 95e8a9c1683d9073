"""Gmail's wire format, translated: HTTP failures → typed H0 errors, message resources →
plain `Fetched` values, history.list pages → (cursor, records). Everything Gmail-shaped stays
in this module and gmail.py.

Header values arrive as the sender wrote them (RFC 2047 words undecoded). `Fetched.headers`
holds them cleaned (h0.mail.headers.clean_inbound_header): decoded completely, no control
character left, display names decoded only after the address list is split. So a subject or
a display name that decodes to CR LF reaches no tool result, note or reply as a line break.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from email import policy
from email.message import EmailMessage
from email.parser import HeaderParser
from typing import Any

from google.auth.exceptions import RefreshError, TransportError
from googleapiclient.errors import HttpError

from h0.errors import AuthRequired, H0Error, InternalError, ParseError, PermissionDenied, SendFailed
from h0.mail.headers import clean_header_text, clean_inbound_header
from h0.mail.incoming.mimebounds import MAX_MULTIPARTS, check_header_fields
from h0.mail.providers.auth import REAUTH_MESSAGE, refresh_failure
from h0.mail.providers.backend import AttachmentInfo, ChangesUnreadable, Fetched
from h0.mail.providers.gmail_transport import OutcomeUnknown, RequestNotSent
from h0.mail.providers.retry import http_refusal, throttled
from h0.retry import retry_after

_RATE_REASONS = {"rateLimitExceeded", "userRateLimitExceeded", "dailyLimitExceeded", "quotaExceeded", "limitExceeded"}
_RECIPIENT_HINTS = (
    "invalid to header",
    "invalid cc header",
    "invalid bcc header",
    "recipient address",
    "invalid recipient",
)
_HEADER_NAME = re.compile(r"[!-9;-~]+")  # RFC 5322 ftext: printable ASCII but ':'


def _error_body(exc: HttpError) -> tuple[str, str | None]:
    try:
        payload = json.loads(exc.content.decode("utf-8", "replace"))
        error = payload.get("error", {})
        if isinstance(error, dict):
            reasons = [e.get("reason") for e in error.get("errors", []) if isinstance(e, dict)]
            return str(error.get("message") or exc.reason or ""), next((r for r in reasons if r), error.get("status"))
        return str(payload.get("error_description") or error), None
    except (ValueError, AttributeError):
        return str(exc.reason or ""), None


def map_http_error(exc: HttpError, *, sending: bool) -> H0Error:
    """Gmail's answer as a typed error; `retryable` only where trying again can help."""
    status = exc.resp.status
    message, reason = _error_body(exc)
    details: dict[str, Any] = {"status": status, "gmail_reason": reason}
    if status == 429 or (status == 403 and reason in _RATE_REASONS):
        return throttled(f"Gmail is rate limiting H0: {message}", retry_after(exc.resp.get("retry-after")), details)
    if status == 401:
        return AuthRequired(REAUTH_MESSAGE, reason=f"Gmail rejected the access token: {message}", **details)
    if status == 403 and "scope" in message.lower():
        return AuthRequired(REAUTH_MESSAGE, reason="the token lacks the gmail.modify scope", **details)
    if status == 403:
        return PermissionDenied(f"Gmail refused: {message}", **details)
    bounce = any(hint in message.lower() for hint in _RECIPIENT_HINTS)
    return http_refusal("Gmail", status, message, sending=sending, bounce=bounce, details=details)


def map_transport_error(exc: BaseException, *, sending: bool) -> H0Error | None:
    """Connection-level failures (h0.mail.providers.gmail_transport's, google-auth's); None if `exc` is
    not one (let it propagate)."""
    if isinstance(exc, RefreshError):
        return refresh_failure(exc)
    if isinstance(exc, OutcomeUnknown) and sending:
        return SendFailed(
            "Gmail did not answer after the message was handed over, so it may or may not have been sent. "
            "It was not re-sent. Check the Sent folder, or retry with the same idempotency_key: "
            "H0 looks the Message-ID up before sending again.",
            retryable=False,
            outcome="unknown",
            cause=str(exc),
        )
    # google-auth's TransportError: the token refresh failed, before the API request was made.
    if isinstance(exc, (RequestNotSent, TransportError)) and sending:
        return SendFailed(f"Could not reach Gmail; nothing was sent: {exc}", retryable=True, outcome="not_sent")
    if isinstance(exc, (OSError, TransportError)):
        if sending:  # a socket error of unknown origin: the send may have happened
            return SendFailed(f"The connection to Gmail failed mid-send: {exc}", retryable=False, outcome="unknown")
        what = "timed out" if isinstance(exc, TimeoutError) else "failed"
        return InternalError(f"The connection to Gmail {what}: {exc}", retryable=True)
    return None


MAX_HISTORY_ID_DIGITS = 20  # a uint64


def history_id(value: Any, what: str = "historyId") -> int:
    """A Gmail historyId (a uint64 sent as a decimal string) as an int; InternalError for anything
    else, so a cursor H0 cannot compare is never stored."""
    text = str(value if value is not None else "").strip()
    if not text.isascii() or not text.isdigit() or len(text) > MAX_HISTORY_ID_DIGITS:
        shown = text[:40] + ("…" if len(text) > 40 else "")
        raise InternalError(
            f"Gmail answered a {what} that is not a number: {shown!r}; the sync cursor was left as it was.",
            retryable=False,
        )
    return int(text)


def headers_message(pairs: Iterable[dict[str, Any]]) -> EmailMessage:
    """A header-only EmailMessage of the cleaned values (names that are not RFC 5322 names dropped)."""
    lines = []
    pairs = list(pairs)
    check_header_fields(len(pairs))
    for pair in pairs:
        name, value = str(pair.get("name", "")), str(pair.get("value", ""))
        if _HEADER_NAME.fullmatch(name):
            lines.append(f"{name}: {clean_inbound_header(name, value)}\n")
    return HeaderParser(policy=policy.default).parsestr("".join(lines) + "\n")


def _decode_data(data: str | None, part_headers: EmailMessage) -> str:
    raw = base64.urlsafe_b64decode((data or "") + "=" * (-len(data or "") % 4))
    charset = part_headers.get_content_charset() or "utf-8"
    try:
        return raw.decode(charset, "replace")
    except LookupError:
        return raw.decode("utf-8", "replace")


def fetched_from_resource(resource: dict[str, Any]) -> Fetched:
    """A messages.get resource (format full or metadata) as a plain `Fetched`."""
    payload = resource.get("payload") or {}
    fetched = Fetched(
        id=str(resource["id"]),
        thread_id=resource.get("threadId"),
        headers=headers_message(payload.get("headers") or []),
        labels=list(resource.get("labelIds") or []),
        snippet=clean_header_text(resource.get("snippet") or ""),
        internal_date_ms=int(resource["internalDate"]) if str(resource.get("internalDate", "")).isdigit() else None,
    )
    stack = [payload] if payload.get("mimeType") else []
    seen = 0
    while stack:
        part = stack.pop(0)
        seen += 1
        if seen > MAX_MULTIPARTS * 5:  # parts, not containers: a few leaves per container
            raise ParseError(
                f"it has more than {MAX_MULTIPARTS * 5} MIME parts: not read", reason="mime_too_many_parts"
            )
        part_headers = headers_message(part.get("headers") or [])
        body = part.get("body") or {}
        mime = str(part.get("mimeType") or "").lower()
        disposition = str(part_headers.get("Content-Disposition", "")).lower()
        if part.get("filename") or body.get("attachmentId") or disposition.startswith("attachment"):
            name = clean_header_text(part.get("filename") or part_headers.get_filename() or "") or "(unnamed)"
            fetched.attachments.append(
                AttachmentInfo(name, mime or "application/octet-stream", int(body.get("size") or 0))
            )
        elif mime == "text/plain" and fetched.text is None and "data" in body:
            fetched.text = _decode_data(body.get("data"), part_headers)
        elif mime == "text/html" and fetched.html is None and "data" in body:
            fetched.html = _decode_data(body.get("data"), part_headers)
        stack[0:0] = list(part.get("parts") or [])
    return fetched


def fetched_or_error(resource: Any) -> Fetched | H0Error:
    """A batch part's message resource, or the typed error of one Gmail should never send."""
    try:
        return fetched_from_resource(resource)
    except H0Error as exc:  # a bound of h0.mail.incoming.mimebounds
        return exc
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return InternalError(f"Gmail answered a message H0 cannot read: {type(exc).__name__}: {exc}", retryable=False)


_MESSAGE_ID = re.compile(
    r"[0-9A-Za-z_-]{1,256}"
)  # Gmail's ids are hex; nothing else belongs in a URL path or a note name


def history_page(page: Any) -> tuple[int, list[tuple[int, list[tuple[str, tuple[str, ...] | None]]]], str | None]:
    """One history.list answer as (historyId, [(record id, [(message id, labels)])], nextPageToken),
    or ChangesUnreadable naming what is wrong with it."""
    try:
        if not isinstance(page, dict):
            raise TypeError(f"the answer is a {type(page).__name__}, not an object")
        now = history_id(page.get("historyId"), "history historyId")
        history = page.get("history") or []
        if not isinstance(history, list):
            raise TypeError("`history` is not a list")
        records = []
        for record in history:
            if not isinstance(record, dict):
                raise TypeError("a history record is not an object")
            position = history_id(record.get("id"), "history record id")
            entries = record.get("messagesAdded") or []
            if not isinstance(entries, list):
                raise TypeError(f"record {position}: `messagesAdded` is not a list")
            messages = []
            for entry in entries:
                message = entry.get("message") if isinstance(entry, dict) else None
                message_id = message.get("id") if isinstance(message, dict) else None
                if not isinstance(message_id, str) or not _MESSAGE_ID.fullmatch(message_id):
                    shown = repr(message_id)[:40]
                    raise ValueError(f"record {position}: a messagesAdded entry has no usable message id ({shown})")
                labels = message.get("labelIds") if isinstance(message, dict) else None
                messages.append((message_id, tuple(map(str, labels)) if isinstance(labels, list) else None))
            records.append((position, messages))
        token = page.get("nextPageToken") or None
        if token is not None and not isinstance(token, str):
            raise ValueError("`nextPageToken` is not a string")
    except (TypeError, ValueError, InternalError) as exc:
        text = exc.message if isinstance(exc, InternalError) else str(exc)
        raise ChangesUnreadable(f"Gmail's history answer cannot be read: {text}") from None
    return now, records, token
