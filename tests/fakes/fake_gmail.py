"""A local fake Gmail: a real HTTP server speaking the Gmail v1 wire format, and its token endpoint.

Point the real google-api-python-client at it with GMAIL_API_ENDPOINT=fake.api_endpoint
and GMAIL_TOKEN_URI=fake.token_uri, and a token.json from `fake.write_token(path)`:

    with FakeGmail() as gmail:
        gmail.write_token(tmp_path / "token.json", expired=True)   # forces a refresh call
        msg_id = gmail.add_message(sender="Ann <ann@example.com>", subject="Hi", body="Hello")
        gmail.fail_next(429, count=2, retry_after=0.01, path_contains="messages/send")
        ...                                   # drive H0
        gmail.sent[-1].message["Subject"]     # what arrived, parsed by the email package

Endpoints: POST /token (refresh_token grant; invalid_grant once revoked), users.getProfile
(with the mailbox's historyId), messages.list (q: is:unread/read/starred, in:X, label:X, -label:X,
from:, to:, subject:, rfc822msgid:, has:attachment, after:/before: epoch seconds, words and
"phrases"), messages.get (minimal, metadata, full, raw), messages.send (JSON raw, and
media/multipart uploads; a threadId puts the sent message in that thread), messages.modify,
messages.batchModify, threads.get (minimal, metadata, full: every message of the thread,
received and sent, oldest first), labels.list, labels.create, history.list (messageAdded,
messageDeleted, labelAdded, labelRemoved records; historyTypes, labelId, maxResults,
pageToken; 404 for a startHistoryId older than the history kept — `expire_history()`), and the
batch endpoint POST /batch/gmail/v1 (multipart/mixed of application/http parts, answered part
by part; `concurrency_limit` answers the parts past it 429 "Too many concurrent requests for
user", as Gmail does with large batches). Every request needs a Bearer token the fake issued
(a batch's parts use the batch's). History ids grow with gaps, like Gmail's. Every API call is
charged Gmail's quota units (`quota`: (method, units) in order; `units` their sum; a batch's
parts each as the call they carry, the batch itself nothing). Injected failures (`fail_next`) answer with Gmail's error JSON; `drop_next`
processes a request and then closes the connection without answering (the "did it send?" case);
`delay_next` answers late; `stall_next` holds a request unprocessed until `release_stalled()` (a
client killed mid-call: nothing was done); `hold_next` holds it until then and processes it (a slow
Gmail); `rewrite_next` answers what a function makes of the
real answer (a Gmail answering outside its API's promises: non-numeric ids, missing fields).
Each send's arrival time is `sent[i].received_at` (time.time()).
"""

from __future__ import annotations

import datetime as dt
import email.parser
import json
import random
import re
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, getaddresses, make_msgid
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.gmail_http import _REASONS, _STATUS_NAMES, RawReply, handler_for, split_related
from tests.fakes.gmail_resources import (
    SYSTEM_LABELS,
    THREAD_FORMATS,
    GmailError,
    StoredMessage,
    b64url_decode,
    message_resource,
    parse_raw,
    search,
    thread_resource,
)
from tests.fakes.loopback import LoopbackServer

CLIENT_ID = "fake-client-id.apps.googleusercontent.com"
CLIENT_SECRET = "fake-client-secret"
REFRESH_TOKEN = "fake-refresh-token"
_ROUTE = re.compile(r"^/(upload/)?gmail/v1/users/(?P<user>[^/]+)/(?P<rest>.*)$")
BATCH_PATH = "/batch/gmail/v1"
HISTORY_TYPES = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")
_TIME_TERM = re.compile(r"(?:^|\s)(-?)(after|before|newer|older):(\d{9,11})(?=\s|$)")
# Gmail's per-method quota units (developers.google.com/gmail/api/reference/quota).
UNITS = {
    "getProfile": 1,
    "labels.list": 1,
    "labels.create": 5,
    "messages.list": 5,
    "messages.get": 5,
    "messages.send": 100,
    "messages.modify": 5,
    "messages.batchModify": 50,
    "threads.get": 10,
    "history.list": 2,
}


@dataclass
class _Injected:
    kind: str  # "fail": answer `status`; "drop": process, then close without answering; "delay": answer late;
    # "stall": hold the request until release_stalled(), then close without processing it; "lose": close at once
    # without processing it; "hold": wait for release_stalled(), then process and answer; "rewrite": answer `rewrite(json)`
    remaining: int
    path_contains: str | None
    status: int = 0
    retry_after: float | None = None
    message: str | None = None
    reason: str | None = None
    seconds: float = 0.0
    rewrite: Any = None


class FakeGmail(LoopbackServer):
    """One fake mailbox for one account. Thread-safe; start() binds a free loopback port."""

    def __init__(self, address: str = "h0.tester@gmail.com") -> None:
        self.address = address
        self.messages: dict[str, StoredMessage] = {}
        self.sent: list[StoredMessage] = []
        self.labels: dict[str, dict[str, Any]] = {
            name: {"id": name, "name": name, "type": "system"} for name in SYSTEM_LABELS
        }
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, in order (a batch's parts too)
        self.quota: list[tuple[str, int]] = []  # (Gmail method, quota units) of every API call, in order
        self.batches: list[int] = []  # the number of parts of each batch request
        self.concurrency_limit: int | None = None  # parts of one batch past this answer 429
        self.concurrency_retry_after: float | None = None  # the Retry-After of those 429s (Gmail sends none)
        self.history: list[dict[str, Any]] = []  # change records, oldest first (what history.list serves)
        self.history_id = 100_000  # the mailbox's current historyId
        self.history_floor = 0  # a startHistoryId below this is too old: 404
        self._message_history: dict[str, int] = {}  # message id → the historyId of its last change
        self._gaps = random.Random(11)
        self.token_refreshes = 0
        self.refresh_revoked = False
        self._valid_tokens: set[str] = set()
        self._injected: list[_Injected] = []
        self._released = threading.Event()
        self._counter = 0
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeGmail:
        self._serve(ThreadingHTTPServer(("127.0.0.1", 0), handler_for(self)), "fake-gmail")
        return self

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the fake first"
        return self._server.server_address[1]

    @property
    def api_endpoint(self) -> str:
        """The value for GMAIL_API_ENDPOINT."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def token_uri(self) -> str:
        """The value for GMAIL_TOKEN_URI."""
        return f"http://127.0.0.1:{self.port}/token"

    # -- seeding and inspecting ----------------------------------------------------------

    def _next_id(self) -> str:
        with self._lock:
            self._counter += 1
            return f"{0x18F0A00000000000 + self._counter * 7919:x}"

    def add_message(
        self,
        *,
        sender: str = "Ann Example <ann@example.com>",
        to: str | None = None,
        subject: str = "Hello",
        body: str | None = "Hello from the fake.",
        html: str | None = None,
        attachments: Iterable[tuple[str, bytes, str]] = (),
        labels: Iterable[str] = ("INBOX", "UNREAD"),
        thread_id: str | None = None,
        message_id: str | None = None,
        cc: str | None = None,
        references: str | None = None,
        in_reply_to: str | None = None,
        date_ms: int | None = None,
        extra_headers: Iterable[tuple[str, str]] = (),
    ) -> str:
        """Put a received message in the mailbox; attachments are (filename, bytes, mime type). Returns its id.

        `thread_id` joins an existing thread (or starts one under that id; default: a thread of its
        own); `date_ms` is its internalDate and Date header (default: now). `extra_headers` are
        (name, value) lines written verbatim on top, as a receiving provider adds its own
        (Authentication-Results), and as a sender's encoded words arrive (`=?utf-8?q?…?=`, which the
        email package would otherwise decode and re-fold); a name given there is not built from
        the other arguments."""
        extra = [(str(name), str(value)) for name, value in extra_headers]
        given = {name.lower() for name, _ in extra}
        msg = EmailMessage(policy=policy.SMTP)
        for name, value in (("From", sender), ("To", to or self.address), ("Cc", cc or None), ("Subject", subject)):
            if value is not None and name.lower() not in given:
                msg[name] = value
        stamp_ms = date_ms if date_ms is not None else int(time.time() * 1000) + self._counter
        msg["Date"] = format_datetime(_utc(stamp_ms / 1000))
        msg["Message-ID"] = message_id or make_msgid(domain="example.com")
        if in_reply_to:
            msg["In-Reply-To"] = in_reply_to
        if references:
            msg["References"] = references
        if body is not None:
            msg.set_content(body)
        if html is not None:
            if body is None:
                msg.set_content(html, subtype="html")
            else:
                msg.add_alternative(html, subtype="html")
        for filename, data, mime in attachments:
            maintype, _, subtype = mime.partition("/")
            msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
        raw = "".join(f"{name}: {value}\r\n" for name, value in extra).encode("utf-8") + msg.as_bytes()
        new_id = self._next_id()
        stored = StoredMessage(new_id, thread_id or new_id, raw, parse_raw(raw), list(labels), stamp_ms)
        with self._lock:
            for label in stored.labels:
                self._ensure_label_exists(label)
            self.messages[new_id] = stored
            self._record("messageAdded", stored)
        return new_id

    def _record(self, kind: str, stored: StoredMessage, label_ids: list[str] | None = None) -> int:
        """Append a history record (call with the lock held); ids grow by 1–9, never contiguously."""
        self.history_id += self._gaps.randint(1, 9)
        self.history.append(
            {
                "id": self.history_id,
                "type": kind,
                "message_id": stored.id,
                "thread_id": stored.thread_id,
                "labels": list(stored.labels),
                "label_ids": list(label_ids or []),
            }
        )
        self._message_history[stored.id] = self.history_id
        return self.history_id

    def delete_message(self, message_id: str) -> None:
        """Delete a message for good (not to the trash): messages.get answers 404 from now on."""
        with self._lock:
            stored = self.messages.pop(message_id)
            self._record("messageDeleted", stored)

    def expire_history(self) -> None:
        """Forget the history so far: history.list from any earlier startHistoryId answers 404."""
        with self._lock:
            self.history_floor = self.history_id
            self.history.clear()

    @property
    def units(self) -> int:
        """Quota units charged so far."""
        with self._lock:
            return sum(units for _, units in self.quota)

    def reset_quota(self) -> None:
        with self._lock:
            self.quota.clear()
            self.batches.clear()

    def _ensure_label_exists(self, label: str) -> None:
        if label not in self.labels:
            self.labels[label] = {"id": label, "name": label, "type": "user"}

    def message(self, message_id: str) -> StoredMessage:
        return self.messages[message_id]

    def label_named(self, name: str) -> dict[str, Any] | None:
        return next((lab for lab in self.labels.values() if lab["name"].lower() == name.lower()), None)

    def write_token(self, path: Path, *, expired: bool = False, scopes: list[str] | None = None) -> Path:
        """Write a token.json for this fake. expired=True forces a refresh on first use."""
        token = f"ya29.fake-{secrets.token_hex(8)}"
        if not expired:
            with self._lock:
                self._valid_tokens.add(token)
        expiry = _utc(time.time() + (-3600 if expired else 3600)).replace(tzinfo=None)
        info = {
            "token": token,
            "refresh_token": REFRESH_TOKEN,
            "token_uri": "https://oauth2.googleapis.com/token",
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "scopes": scopes or ["https://www.googleapis.com/auth/gmail.modify"],
            "universe_domain": "googleapis.com",
            "account": "",
            "expiry": expiry.isoformat(timespec="microseconds") + "Z",
        }
        path = Path(path)
        path.write_text(json.dumps(info, indent=2), encoding="utf-8")
        path.chmod(0o600)
        return path

    # -- failure injection ---------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        count: int = 1,
        retry_after: float | None = None,
        path_contains: str | None = None,
        message: str | None = None,
        reason: str | None = None,
    ) -> None:
        """Answer the next `count` matching requests with `status` (Gmail's error JSON)."""
        with self._lock:
            self._injected.append(_Injected("fail", count, path_contains, status, retry_after, message, reason))

    def drop_next(self, path_contains: str | None = None, count: int = 1) -> None:
        """Process the next matching request(s), then close the connection without answering."""
        with self._lock:
            self._injected.append(_Injected("drop", count, path_contains))

    def lose_next(self, path_contains: str | None = None, count: int = 1) -> None:
        """Close the connection on the next matching request(s) without processing them: the request read and
        lost before Gmail acted on it, which its client cannot tell from a "drop" (done, the answer lost)."""
        with self._lock:
            self._injected.append(_Injected("lose", count, path_contains))

    def delay_next(self, seconds: float, path_contains: str | None = None, count: int = 1) -> None:
        """Hold the next matching request(s) for `seconds` before processing them (a slow Gmail)."""
        with self._lock:
            self._injected.append(_Injected("delay", count, path_contains, seconds=seconds))

    def stall_next(self, path_contains: str | None = None, count: int = 1) -> None:
        """Hold the next matching request(s) unanswered and unprocessed until `release_stalled()`
        (then the connection closes and nothing was done): a process killed mid-call. Each call
        arms a new stall: a release from an earlier one does not let this one through."""
        with self._lock:
            self._released.clear()
            self._injected.append(_Injected("stall", count, path_contains))

    def hold_next(self, path_contains: str | None = None, count: int = 1) -> None:
        """Hold the next matching request(s) until `release_stalled()`, then process and answer them as
        usual: a Gmail slower than its caller's patience, which still acts on the request."""
        with self._lock:
            self._released.clear()
            self._injected.append(_Injected("hold", count, path_contains))

    def release_stalled(self) -> None:
        self._released.set()

    def rewrite_next(self, rewrite: Any, path_contains: str | None = None, count: int = 1) -> None:
        """Process the next matching request(s), then answer `rewrite(answer)` instead of the answer
        (a Gmail that answers something its API does not promise)."""
        with self._lock:
            self._injected.append(_Injected("rewrite", count, path_contains, rewrite=rewrite))

    def revoke_refresh_token(self) -> None:
        """From now on the token endpoint answers invalid_grant (user revoked access, or 7-day expiry)."""
        with self._lock:
            self.refresh_revoked = True
            self._valid_tokens.clear()

    def expire_access_tokens(self) -> None:
        """Every issued access token stops working: the next API call gets a 401."""
        with self._lock:
            self._valid_tokens.clear()

    def _take_injected(
        self, path: str, kinds: tuple[str, ...] = ("fail", "drop", "delay", "stall", "lose", "hold", "rewrite")
    ) -> _Injected | None:
        with self._lock:
            for item in self._injected:
                if (
                    item.kind in kinds
                    and item.remaining > 0
                    and (item.path_contains is None or item.path_contains in path)
                ):
                    item.remaining -= 1
                    if item.remaining == 0:
                        self._injected.remove(item)
                    return item
        return None

    # -- the API -------------------------------------------------------------------------

    def _refresh(self, form: dict[str, str]) -> dict[str, Any]:
        with self._lock:
            if form.get("grant_type") != "refresh_token" or form.get("client_id") != CLIENT_ID:
                raise GmailError(400, "invalid_request")
            if self.refresh_revoked or form.get("refresh_token") != REFRESH_TOKEN:
                raise GmailError(400, "Token has been expired or revoked.", "invalid_grant")
            self.token_refreshes += 1
            token = f"ya29.fake-{secrets.token_hex(8)}"
            self._valid_tokens.add(token)
        return {
            "access_token": token,
            "expires_in": 3599,
            "token_type": "Bearer",
            "scope": "https://www.googleapis.com/auth/gmail.modify",
        }

    def _authorised(self, header: str | None) -> bool:
        with self._lock:
            return bool(header) and header.startswith("Bearer ") and header[7:] in self._valid_tokens

    def _store_send(self, raw: bytes, meta: dict[str, Any], upload: str) -> dict[str, Any]:
        parsed = parse_raw(raw)
        recipients = getaddresses([str(parsed.get(h, "")) for h in ("To", "Cc", "Bcc")])
        addresses = [addr for _, addr in recipients if addr]
        if not addresses:
            raise GmailError(400, "Recipient address required")
        if any("@" not in addr or addr.startswith("@") or addr.endswith("@") for addr in addresses):
            raise GmailError(400, "Invalid To header")
        if "From" not in parsed:
            parsed["From"] = self.address
        new_id = self._next_id()
        with self._lock:
            thread = meta.get("threadId")
            if thread and not any(m.thread_id == thread for m in self.messages.values()):
                raise GmailError(404, "Requested entity was not found.")
            stored = StoredMessage(
                new_id,
                thread or new_id,
                raw,
                parsed,
                ["SENT"],
                int(time.time() * 1000),
                received_at=time.time(),
                metadata={**meta, "upload": upload},
            )
            self.messages[new_id] = stored
            self.sent.append(stored)
            self._record("messageAdded", stored)
        return {"id": new_id, "threadId": stored.thread_id, "labelIds": ["SENT"]}

    def _create_label(self, body: dict[str, Any]) -> dict[str, Any]:
        name = str(body.get("name") or "")
        stripped = name.strip()
        if (
            not stripped
            or len(name) > 225
            or stripped.upper() in SYSTEM_LABELS
            or stripped.startswith("/")
            or stripped.endswith("/")
            or "//" in stripped
        ):
            raise GmailError(400, "Invalid label name")
        with self._lock:
            if self.label_named(stripped):
                raise GmailError(409, "Label name exists or conflicts")
            label = {
                "id": f"Label_{len(self.labels) + 1}",
                "name": stripped,
                "type": "user",
                "labelListVisibility": body.get("labelListVisibility", "labelShow"),
                "messageListVisibility": body.get("messageListVisibility", "show"),
            }
            self.labels[label["id"]] = label
        return label

    def _modify(self, message_id: str, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            stored = self.messages.get(message_id)
            if stored is None:
                raise GmailError(404, "Requested entity was not found.")
            add, remove = list(body.get("addLabelIds") or []), list(body.get("removeLabelIds") or [])
            for label in add + remove:
                if label not in self.labels:
                    raise GmailError(400, f"Invalid label: {label}")
            for label in ("SENT", "DRAFT", "CHAT"):
                if label in add:
                    raise GmailError(400, f"Invalid label: {label}")
            added = [lab for lab in dict.fromkeys(add) if lab not in stored.labels]
            removed = [lab for lab in dict.fromkeys(remove) if lab in stored.labels]
            stored.labels = [lab for lab in stored.labels if lab not in remove] + added
            if added:
                self._record("labelAdded", stored, added)
            if removed:
                self._record("labelRemoved", stored, removed)
            return {"id": stored.id, "threadId": stored.thread_id, "labelIds": list(stored.labels)}

    def _batch_modify(self, body: dict[str, Any]) -> dict[str, Any]:
        ids = list(body.get("ids") or [])
        if not ids or len(ids) > 1000:
            raise GmailError(400, "ids must hold 1 to 1000 message ids")
        with self._lock:
            if any(i not in self.messages for i in ids):
                raise GmailError(404, "Requested entity was not found.")
            for message_id in ids:
                self._modify(message_id, body)
        return {}  # Gmail answers an empty body

    def handle(self, method: str, path: str, query: dict[str, list[str]], body: bytes, content_type: str) -> Any:
        """Route one API call; raises GmailError for Gmail's error answers."""
        if path == BATCH_PATH and method == "POST":
            return self._batch(body, content_type)
        match = _ROUTE.match(path)
        if match is None:
            raise GmailError(404, f"No such endpoint: {path}")
        if match["user"] not in ("me", self.address):
            raise GmailError(403, "Delegation denied")
        rest = match["rest"].rstrip("/")
        self._charge(method, rest)
        one = lambda name, default=None: (query.get(name) or [default])[0]
        if method == "GET" and rest == "profile":
            return {
                "emailAddress": self.address,
                "messagesTotal": len(self.messages),
                "threadsTotal": len(self.messages),
                "historyId": str(self.history_id),
            }
        if method == "GET" and rest == "history":
            return self._history(query)
        if method == "POST" and rest == "messages/batchModify":
            return self._batch_modify(json.loads(body or b"{}"))
        if method == "GET" and rest == "labels":
            with self._lock:
                return {"labels": [dict(lab) for lab in self.labels.values()]}
        if method == "POST" and rest == "labels":
            return self._create_label(json.loads(body or b"{}"))
        if method == "GET" and rest == "messages":
            limit = max(1, min(500, int(one("maxResults", "100"))))
            q, in_time = _time_terms(one("q", "") or "")
            with self._lock:
                names = {lid: lab["name"] for lid, lab in self.labels.items()}
                found = search(list(self.messages.values()), q, names, one("includeSpamTrash") == "true")
            found = [m for m in found if in_time(m.internal_date_ms)]
            wanted_labels = set(query.get("labelIds") or [])
            found = [m for m in found if wanted_labels <= set(m.labels)]
            page = [{"id": m.id, "threadId": m.thread_id} for m in found[:limit]]
            return {"messages": page, "resultSizeEstimate": len(found)} if page else {"resultSizeEstimate": 0}
        if method == "POST" and rest == "messages/send":
            return self._send(query, body, content_type, upload=bool(match.group(1)))
        parts = rest.split("/")
        if len(parts) == 2 and parts[0] == "messages" and method == "GET":
            with self._lock:
                stored = self.messages.get(parts[1])
            if stored is None:
                raise GmailError(404, "Requested entity was not found.")
            resource = message_resource(stored, one("format", "full"), query.get("metadataHeaders") or [])
            resource["historyId"] = str(self._message_history.get(stored.id, self.history_id))
            return resource
        if len(parts) == 3 and parts[0] == "messages" and parts[2] == "modify" and method == "POST":
            return self._modify(parts[1], json.loads(body or b"{}"))
        if len(parts) == 2 and parts[0] == "threads" and method == "GET":
            return self._get_thread(parts[1], one("format", "full"), query.get("metadataHeaders") or [])
        raise GmailError(404, f"No such endpoint: {method} {path}")

    def _charge(self, method: str, rest: str) -> None:
        parts = rest.split("/")
        name = {
            ("GET", "profile"): "getProfile",
            ("GET", "labels"): "labels.list",
            ("POST", "labels"): "labels.create",
            ("GET", "messages"): "messages.list",
            ("POST", "messages/send"): "messages.send",
            ("POST", "messages/batchModify"): "messages.batchModify",
            ("GET", "history"): "history.list",
        }.get((method, rest))
        if name is None and parts[0] == "messages" and len(parts) == 2 and method == "GET":
            name = "messages.get"
        elif name is None and parts[0] == "messages" and len(parts) == 3 and parts[2] == "modify":
            name = "messages.modify"
        elif name is None and parts[0] == "threads" and len(parts) == 2:
            name = "threads.get"
        if name is not None:
            with self._lock:
                self.quota.append((name, UNITS[name]))

    def _history(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """users.history.list: the records after startHistoryId, oldest first, a page at a time."""
        one = lambda name, default=None: (query.get(name) or [default])[0]
        start = str(one("startHistoryId", "") or "")
        if not start.isdigit():
            raise GmailError(400, "Invalid startHistoryId")
        types = set(query.get("historyTypes") or HISTORY_TYPES)
        if types - set(HISTORY_TYPES):
            raise GmailError(400, f"Invalid value at 'history_types': {sorted(types - set(HISTORY_TYPES))}")
        label = one("labelId")
        limit = max(1, min(500, int(one("maxResults", "100"))))
        after = int(start)
        token = one("pageToken")
        if token:
            if not token.startswith("hp-") or not token[3:].isdigit():
                raise GmailError(400, "Invalid pageToken")
            after = max(after, int(token[3:]))
        with self._lock:
            if int(start) < self.history_floor:
                raise GmailError(404, "Requested entity was not found.")
            records = [
                r
                for r in self.history
                if r["id"] > after and r["type"] in types and (label is None or label in r["labels"])
            ]
            current = self.history_id
        page = records[:limit]
        answer: dict[str, Any] = {"historyId": str(current)}
        if page:
            answer["history"] = [_history_record(r) for r in page]
        if len(records) > limit:
            answer["nextPageToken"] = f"hp-{page[-1]['id']}"
        return answer

    def _batch(self, body: bytes, content_type: str) -> RawReply:
        """POST /batch/gmail/v1: each application/http part answered as if sent alone, in order."""
        if not content_type.lower().startswith("multipart/mixed") or "boundary=" not in content_type:
            raise GmailError(400, "A batch request must be multipart/mixed with a boundary")
        parsed = email.parser.BytesParser().parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
        parts = parsed.get_payload() if parsed.is_multipart() else []
        if not parts or len(parts) > 100:
            raise GmailError(400, "A batch holds 1 to 100 calls")
        with self._lock:
            self.batches.append(len(parts))
        boundary = f"batch_{secrets.token_hex(8)}"
        out = []
        for index, part in enumerate(parts):
            status, payload = self._batch_part(index, part.get_payload())
            reason = {200: "OK"}.get(status, "Error")
            inner = f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=UTF-8\r\n"
            if status == 429 and self.concurrency_retry_after is not None and payload.get("_concurrency"):
                inner += f"Retry-After: {self.concurrency_retry_after:g}\r\n"
            payload.pop("_concurrency", None)
            data = json.dumps(payload)
            inner += f"Content-Length: {len(data.encode())}\r\n\r\n{data}"
            content_id = str(part.get("Content-ID", "")).strip()
            answer_id = f"<response-{content_id[1:-1]}>" if content_id.startswith("<") else f"<response-{content_id}>"
            out.append(f"--{boundary}\r\nContent-Type: application/http\r\nContent-ID: {answer_id}\r\n\r\n{inner}\r\n")
        out.append(f"--{boundary}--\r\n")
        return RawReply(f"multipart/mixed; boundary={boundary}", "".join(out).encode("utf-8"))

    def _batch_part(self, index: int, text: str) -> tuple[int, dict[str, Any]]:
        head, _, payload = text.replace("\r\n", "\n").partition("\n\n")
        request_line, *header_lines = head.split("\n")
        try:
            method, target, _ = request_line.split(" ", 2)
        except ValueError:
            return 400, _error_json(400, "Invalid batch part: no request line")
        headers = dict(line.split(":", 1) for line in header_lines if ":" in line)
        url = urlsplit(target)
        with self._lock:
            self.requests.append((method, url.path))
        if self.concurrency_limit is not None and index >= self.concurrency_limit:
            return 429, {
                **_error_json(429, "Too many concurrent requests for user.", "rateLimitExceeded"),
                "_concurrency": True,
            }
        injected = self._take_injected(url.path, kinds=("fail", "delay"))
        if injected is not None and injected.kind == "delay":
            time.sleep(injected.seconds)
        if injected is not None and injected.kind == "fail":
            return injected.status, _error_json(
                injected.status, injected.message or f"Injected failure {injected.status}", injected.reason
            )
        try:
            result = self.handle(
                method,
                url.path,
                parse_qs(url.query),
                payload.encode("utf-8"),
                headers.get("Content-Type", headers.get("content-type", "application/json")).strip(),
            )
        except GmailError as err:
            return err.status, _error_json(err.status, err.message, err.reason)
        if isinstance(result, RawReply):
            return 400, _error_json(400, "A batch cannot hold a batch")
        return 200, result

    def _get_thread(self, thread_id: str, fmt: str, metadata_headers: list[str]) -> dict[str, Any]:
        if fmt not in THREAD_FORMATS:
            raise GmailError(400, f"Invalid value at 'format' ({fmt})")
        with self._lock:
            members = [m for m in self.messages.values() if m.thread_id == thread_id]
        if not members:
            raise GmailError(404, "Requested entity was not found.")
        return thread_resource(thread_id, members, fmt, metadata_headers)

    def _send(self, query: dict[str, list[str]], body: bytes, content_type: str, *, upload: bool) -> dict[str, Any]:
        kind = (query.get("uploadType") or [""])[0]
        if not upload:
            meta = json.loads(body or b"{}")
            if not meta.get("raw"):
                raise GmailError(
                    400, "'raw' RFC822 payload message string or uploading message via /upload/* URL required"
                )
            return self._store_send(b64url_decode(meta.pop("raw")), meta, "json")
        if kind == "media":
            return self._store_send(body, {}, "media")
        if kind == "multipart":
            meta, raw = split_related(body, content_type)
            return self._store_send(raw, meta, "multipart")
        raise GmailError(400, f"Unsupported uploadType {kind!r}")


def _utc(epoch: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch, dt.UTC)


def _error_json(status: int, message: str, reason: str | None = None) -> dict[str, Any]:
    errors = [{"message": message, "domain": "global", "reason": reason or _REASONS.get(status, "failed")}]
    return {
        "error": {"code": status, "message": message, "errors": errors, "status": _STATUS_NAMES.get(status, "UNKNOWN")}
    }


def _history_record(record: dict[str, Any]) -> dict[str, Any]:
    """One History resource as Gmail writes it: `messages` plus the field of its change type."""
    message = {"id": record["message_id"], "threadId": record["thread_id"]}
    full = {**message, "labelIds": list(record["labels"])}
    answer: dict[str, Any] = {"id": str(record["id"]), "messages": [message]}
    if record["type"] == "messageAdded":
        answer["messagesAdded"] = [{"message": full}]
    elif record["type"] == "messageDeleted":
        answer["messagesDeleted"] = [{"message": message}]
    else:
        field = {"labelAdded": "labelsAdded", "labelRemoved": "labelsRemoved"}[record["type"]]
        answer[field] = [{"message": full, "labelIds": list(record["label_ids"])}]
    return answer


def _time_terms(query: str) -> tuple[str, Any]:
    """Take Gmail's after:/before: (epoch seconds) out of a query: (the rest, a test of internalDate ms)."""
    bounds: list[tuple[str, int, bool]] = [
        (m.group(2), int(m.group(3)), bool(m.group(1))) for m in _TIME_TERM.finditer(query)
    ]
    rest = _TIME_TERM.sub(" ", query).strip()

    def in_time(internal_ms: int) -> bool:
        seconds = internal_ms / 1000
        for op, value, negated in bounds:
            hit = seconds > value if op in ("after", "newer") else seconds < value
            if hit == negated:
                return False
        return True

    return rest, in_time
