"""A local fake Microsoft Graph v1.0: a real HTTP server speaking Graph's JSON wire format, for one mailbox.

Point H0 at it with GRAPH_API_ENDPOINT=fake.api_endpoint; access tokens are the ones the fake authority
(tests/fakes/fake_authority.py) issued to it (`FakeAuthority(graph=fake)`), or any the test `accept`s:

    with FakeGraph() as graph:
        msg_id = graph.add_message(sender="Ann <ann@example.com>", subject="Hi", body="Hello")
        graph.fail_next(429, count=3, retry_after=0.01, path_contains="/sendMail")
        ...                                  # drive H0
        graph.sent[-1].message["Subject"]    # what sendMail got, parsed by the email package

Endpoints: `/me`; `/me/mailFolders` (by well-known name or id, by `displayName eq`, created by POST; 409 when
it exists); messages listed in a folder or in every folder (`$filter` of graph_mailbox's grammar, `$search`
alone, `$orderby=receivedDateTime desc` only with a filter that starts with it, `$top`, `$select`, nextLink);
`/me/messages/{id}` GET (`$select`, `$expand=attachments`), PATCH (categories, isRead, flag), POST `/move`;
`messages/delta` of a folder (`changeType`, `$select`, `$filter=receivedDateTime ge` on the first round,
`Prefer: odata.maxpagesize`, nextLink/deltaLink; a deltatoken older than `expire_delta()` answers 410
syncStateNotFound); `POST /me/sendMail` with a base64 MIME body (202, no body; the message lands in Sent Items
once, in the conversation of the message its In-Reply-To names); JSON `$batch` of up to 20 requests. Every
request needs a bearer token the fake accepts (401 InvalidAuthenticationToken otherwise; `expire_tokens()`
makes every token issued so far expire). `fail_next` answers Graph's error JSON (with Retry-After),
`drop_next` does the work and closes the connection without an answer, `delay_next` answers late.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import email.parser
import json
import threading
import time
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, getaddresses, make_msgid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from tests.fakes.graph_mailbox import (
    DISPLAY,
    WELL_KNOWN,
    Change,
    GraphError,
    StoredMessage,
    graph_id,
    iso,
    matches,
    parse_filter,
    recipient,
    searched,
)
from tests.fakes.loopback import LoopbackServer

MAX_BATCH = 20
MAX_REQUEST_BYTES = 4 * 1024 * 1024
PATCHABLE = {"categories", "isRead", "flag"}


@dataclass
class SentMail:
    raw: bytes
    message: EmailMessage
    id: str  # its Graph id in Sent Items
    received_at: float

    def header(self, name: str) -> str | None:
        value = self.message[name]
        return None if value is None else str(value)


@dataclass
class _Injected:
    kind: str  # fail | drop | delay
    remaining: int
    path_contains: str | None
    status: int = 0
    code: str = ""
    message: str = ""
    retry_after: float | None = None
    seconds: float = 0.0


class FakeGraph(LoopbackServer):
    """One fake mailbox for one account. Thread-safe; start() binds a free loopback port."""

    def __init__(self, address: str = "h0.tester@contoso.example", name: str = "H0 Tester") -> None:
        self.address, self.name = address, name
        self.folders: dict[str, dict[str, Any]] = {}
        self.well_known: dict[str, str] = {}
        for known in WELL_KNOWN:
            folder_id = graph_id("AAMkAGF")
            self.folders[folder_id] = {"id": folder_id, "displayName": DISPLAY[known]}
            self.well_known[known] = folder_id
        self.messages: dict[str, StoredMessage] = {}
        self.sent: list[SentMail] = []
        self.changes: list[Change] = []
        self.seq = 0
        self.delta_floor = 0
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, a batch's parts too
        self.prefers: list[str] = []  # the Prefer header of every request
        self.batches: list[int] = []
        self.tokens: set[str] = set()
        self._injected: list[_Injected] = []
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeGraph:
        self._serve(ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self)), "fake-graph")
        return self

    @property
    def api_endpoint(self) -> str:
        """The value for GRAPH_API_ENDPOINT."""
        assert self._server is not None, "start() the fake first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1.0"

    # -- seeding and inspecting ----------------------------------------------------------

    def accept(self, token: str) -> None:
        with self._lock:
            self.tokens.add(token)

    def expire_tokens(self) -> None:
        """Every access token issued so far is refused from now on (401), as an expired one is."""
        with self._lock:
            self.tokens.clear()

    def expire_delta(self) -> None:
        """Graph forgets the sync state so far: every deltatoken issued before now answers 410."""
        with self._lock:
            self.delta_floor = self.seq

    def remove_folder(self, known: str) -> None:
        """A mailbox without this well-known folder (e.g. no Archive yet)."""
        with self._lock:
            del self.folders[self.well_known.pop(known)]

    def _record(self, folder: str, message_id: str, kind: str) -> None:
        self.seq += 1
        self.changes.append(Change(self.seq, folder, message_id, kind))

    def add_message(
        self,
        *,
        sender: str = "Ann Example <ann@example.com>",
        to: str | list[str] | None = None,
        cc: list[str] | None = None,
        subject: str = "Hello",
        body: str | None = "Hello from the fake.",
        html: str | None = None,
        folder: str = "inbox",
        received_s: float | None = None,
        message_id: str | None = None,
        conversation_id: str | None = None,
        in_reply_to: str | None = None,
        categories: tuple[str, ...] = (),
        is_read: bool = False,
        attachments: tuple[tuple[str, int, str], ...] = (),
        extra_headers: tuple[tuple[str, str], ...] = (),
        with_headers: bool = True,
    ) -> str:
        """Put a message in a folder (`inbox` by default); attachments are (name, size, content type)."""
        received = time.time() if received_s is None else received_s
        to_list = [to] if isinstance(to, str) else list(to or [self.address])
        msgid = message_id or make_msgid(domain="example.com")
        ((from_name, from_address),) = getaddresses([sender])
        with self._lock:
            parent = in_reply_to and next(
                (m for m in self.messages.values() if m.props["internetMessageId"] == in_reply_to), None
            )
            conversation = conversation_id or (parent.props["conversationId"] if parent else graph_id("AAQkAD"))
        content = html if html is not None else body or ""
        props: dict[str, Any] = {
            "subject": subject,
            "from": recipient(from_address, from_name),
            "sender": recipient(from_address, from_name),
            "toRecipients": [recipient(a) for a in to_list],
            "ccRecipients": [recipient(a) for a in cc or []],
            "replyTo": [],
            "internetMessageId": msgid,
            "conversationId": conversation,
            "sentDateTime": iso(received - 5),
            "isRead": is_read,
            "isDraft": False,
            "categories": list(categories),
            "flag": {"flagStatus": "notFlagged"},
            "bodyPreview": content[:255],
            "body": {"contentType": "html" if html is not None else "text", "content": content},
        }
        if with_headers:
            headers = [("From", sender), ("To", ", ".join(to_list)), ("Subject", subject), ("Message-ID", msgid)]
            headers += [("Date", format_datetime(_utc(received - 5)))]
            headers += [("Cc", ", ".join(cc))] if cc else []
            headers += [("In-Reply-To", in_reply_to)] if in_reply_to else []
            props["internetMessageHeaders"] = [{"name": n, "value": v} for n, v in [*extra_headers, *headers]]
        stored = StoredMessage(
            graph_id(),
            self.well_known[folder],
            props,
            received,
            [{"name": n, "size": s, "contentType": c, "isInline": False} for n, s, c in attachments],
        )
        with self._lock:
            self.messages[stored.id] = stored
            self._record(stored.folder, stored.id, "created")
        return stored.id

    def move(self, message_id: str, folder: str) -> None:
        """Move a message as the owner would in Outlook (a well-known name or a folder id)."""
        with self._lock:
            self._move(self.messages[message_id], self.well_known.get(folder, folder))

    def _move(self, stored: StoredMessage, folder_id: str) -> None:
        if folder_id == stored.folder:
            return
        self._record(stored.folder, stored.id, "deleted")
        stored.folder = folder_id
        self._record(folder_id, stored.id, "created")

    def in_folder(self, known: str) -> list[StoredMessage]:
        with self._lock:
            return [m for m in self.messages.values() if m.folder == self.well_known[known]]

    # -- injected failures -----------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        *,
        count: int = 1,
        path_contains: str | None = None,
        retry_after: float | None = None,
        code: str = "",
        message: str = "",
    ) -> None:
        default = {429: "TooManyRequests", 503: "ServiceNotAvailable", 401: "InvalidAuthenticationToken"}
        with self._lock:
            self._injected.append(
                _Injected(
                    "fail",
                    count,
                    path_contains,
                    status,
                    code or default.get(status, "ErrorInternalServerError"),
                    message or f"Injected failure {status}",
                    retry_after,
                )
            )

    def drop_next(self, *, path_contains: str | None = None, count: int = 1) -> None:
        with self._lock:
            self._injected.append(_Injected("drop", count, path_contains))

    def delay_next(self, seconds: float, *, path_contains: str | None = None, count: int = 1) -> None:
        with self._lock:
            self._injected.append(_Injected("delay", count, path_contains, seconds=seconds))

    def _take_injected(self, path: str) -> _Injected | None:
        with self._lock:
            for injected in self._injected:
                if injected.remaining > 0 and (injected.path_contains is None or injected.path_contains in path):
                    injected.remaining -= 1
                    return injected
        return None

    # -- the API ---------------------------------------------------------------------------

    def handle(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        """One request (a batch's part too): (status, headers, JSON or None). Raises GraphError."""
        url = urlsplit(target)
        path = url.path[len("/v1.0") :] if url.path.startswith("/v1.0/") else url.path
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        with self._lock:
            self.requests.append((method, path))
            self.prefers.append(headers.get("prefer", ""))
        if path == "/$batch" and method == "POST":
            return 200, {}, self._batch(json.loads(body or b"{}"), headers)
        parts = [unquote(p) for p in path.split("/") if p]
        with self._lock:
            if parts == ["me"]:
                return (
                    200,
                    {},
                    {
                        "id": "fake-user",
                        "mail": self.address,
                        "userPrincipalName": self.address,
                        "displayName": self.name,
                    },
                )
            if parts == ["me", "sendMail"] and method == "POST":
                return self._send_mail(body, headers)
            if parts[:2] == ["me", "mailFolders"]:
                return self._folders(method, parts[2:], query, body, headers)
            if parts[:2] == ["me", "messages"]:
                if len(parts) == 2:
                    return 200, {}, self._list(None, path, query)
                return self._message(method, parts[2], parts[3:], query, body)
        raise GraphError(404, "UnknownError", f"No route for {method} {path}")

    def _folder_id(self, name: str) -> str:
        folder = self.well_known.get(name.lower(), name)
        if folder not in self.folders:
            raise GraphError(404, "ErrorItemNotFound", "The specified folder could not be found in the store.")
        return folder

    def _folders(
        self, method: str, rest: list[str], query: dict[str, str], body: bytes, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], Any]:
        if not rest and method == "GET":
            wanted = query.get("$filter", "")
            name = (
                wanted[len("displayName eq '") : -1].replace("''", "'")
                if wanted.startswith("displayName eq '")
                else None
            )
            found = [f for f in self.folders.values() if name is None or f["displayName"].lower() == name.lower()]
            return 200, {}, {"value": found}
        if not rest and method == "POST":
            name = str(json.loads(body or b"{}").get("displayName") or "")
            if any(f["displayName"].lower() == name.lower() for f in self.folders.values()):
                raise GraphError(409, "ErrorFolderExists", "A folder with the specified name already exists.")
            folder_id = graph_id("AAMkAGF")
            self.folders[folder_id] = {"id": folder_id, "displayName": name}
            return 201, {}, self.folders[folder_id]
        folder = self._folder_id(rest[0])
        if len(rest) == 1:
            return 200, {}, self.folders[folder]
        if rest[1:] == ["messages"]:
            return 200, {}, self._list(folder, f"/me/mailFolders/{rest[0]}/messages", query)
        if rest[1:] == ["messages", "delta"]:
            return 200, {}, self._delta(folder, f"/me/mailFolders/{rest[0]}/messages/delta", query, headers)
        raise GraphError(404, "UnknownError", "No such folder resource")

    def _link(self, path: str, query: dict[str, str]) -> str:
        return f"{self.api_endpoint}{path}?{urlencode(query)}"

    def _list(self, folder: str | None, path: str, query: dict[str, str]) -> dict[str, Any]:
        wanted, search = query.get("$filter"), query.get("$search")
        if wanted and search:
            raise GraphError(400, "ErrorInvalidUrlQuery", "$search and $filter cannot be combined on messages.")
        if query.get("$orderby") and wanted and not wanted.startswith("receivedDateTime"):
            raise GraphError(
                400, "InefficientFilter", "The restriction or sort order is too complex for this operation."
            )
        clauses = parse_filter(wanted) if wanted else []
        found = [
            m
            for m in self.messages.values()
            if (folder is None or m.folder == folder) and matches(m, clauses) and (not search or searched(m, search))
        ]
        found.sort(key=lambda m: m.received_s, reverse=True)
        top, skip = min(int(query.get("$top", "10")), 1000), int(query.get("$skip", "0"))
        select = query["$select"].split(",") if query.get("$select") else None
        page = {"value": [m.render(select) for m in found[skip : skip + top]]}
        if skip + top < len(found):
            page["@odata.nextLink"] = self._link(path, {**query, "$skip": str(skip + top)})
        return page

    def _message(
        self, method: str, message_id: str, rest: list[str], query: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], Any]:
        stored = self.messages.get(message_id)
        if stored is None:
            raise GraphError(404, "ErrorItemNotFound", "The specified object was not found in the store.")
        if rest == ["move"] and method == "POST":
            self._move(stored, self._folder_id(str(json.loads(body or b"{}").get("destinationId") or "")))
            return 201, {}, stored.render(None)
        if rest or method not in ("GET", "PATCH"):
            raise GraphError(405, "ErrorInvalidRequest", f"{method} is not supported here")
        if method == "PATCH":
            changes = json.loads(body or b"{}")
            if not isinstance(changes, dict) or set(changes) - PATCHABLE:
                raise GraphError(400, "ErrorInvalidProperty", f"Cannot update {sorted(set(changes) - PATCHABLE)}")
            stored.props.update(changes)
            self._record(stored.folder, stored.id, "updated")
            return 200, {}, stored.render(None)
        select = query["$select"].split(",") if query.get("$select") else None
        return 200, {}, stored.render(select, query.get("$expand"))

    def _delta(self, folder: str, path: str, query: dict[str, str], headers: dict[str, str]) -> dict[str, Any]:
        size = 10
        for part in headers.get("prefer", "").split(","):
            if part.strip().startswith("odata.maxpagesize="):
                size = int(part.strip().split("=", 1)[1])
        carried = {k: v for k, v in query.items() if k in ("changeType", "$select")}
        select = query["$select"].split(",") if query.get("$select") else None
        kinds = {query["changeType"]} if query.get("changeType") else {"created", "updated", "deleted"}
        token, skip = query.get("$deltatoken"), query.get("$skiptoken")
        if skip:  # s{start}_{end}_{offset}
            start, end, offset = (int(v) for v in skip[1:].split("_"))
        elif token is not None:
            start, end, offset = int(token), self.seq, 0
        else:
            start, end, offset = -1, self.seq, 0
        if start >= 0 and start < self.delta_floor:
            raise GraphError(410, "syncStateNotFound", "The sync state generation is not found.")
        if start < 0:  # the first round: what is in the folder now, as created
            clauses = parse_filter(query["$filter"]) if query.get("$filter") else []
            ids = [
                m.id
                for m in sorted(self.messages.values(), key=lambda m: m.received_s)
                if m.folder == folder and matches(m, clauses)
            ]
            entries = [self.messages[i].render(select) for i in ids]
        else:
            latest: dict[str, Change] = {}
            for change in self.changes:
                if start < change.seq <= end and change.folder == folder and change.kind in kinds:
                    latest.pop(change.message_id, None)
                    latest[change.message_id] = change
            entries = [
                {"id": c.message_id, "@removed": {"reason": "deleted"}}
                if c.kind == "deleted" or c.message_id not in self.messages
                else self.messages[c.message_id].render(select)
                for c in latest.values()
            ]
        page: dict[str, Any] = {"value": entries[offset : offset + size]}
        if offset + size < len(entries):
            page["@odata.nextLink"] = self._link(path, {**carried, "$skiptoken": f"s{start}_{end}_{offset + size}"})
        else:
            page["@odata.deltaLink"] = self._link(path, {**carried, "$deltatoken": str(end)})
        return page

    def _send_mail(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        if not headers.get("content-type", "").startswith("text/plain"):
            raise GraphError(400, "ErrorInvalidRequest", "The fake takes MIME sends only (Content-Type: text/plain).")
        if len(body) > MAX_REQUEST_BYTES:
            raise GraphError(413, "RequestEntityTooLarge", "The request is larger than 4 MB.")
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise GraphError(
                400, "ErrorMimeContentInvalidBase64String", "Invalid base64 string for MIME content."
            ) from None
        message = email.parser.BytesParser(policy=policy.default).parsebytes(raw)
        targets = getaddresses([str(message[n]) for n in ("To", "Cc", "Bcc") if message[n]])
        if not [a for _, a in targets if a]:
            raise GraphError(400, "ErrorInvalidRecipients", "At least one recipient is not valid.")
        msgid = str(message["Message-ID"] or make_msgid(domain="outlook.example"))
        parent = next(
            (m for m in self.messages.values() if m.props["internetMessageId"] == str(message["In-Reply-To"] or "")),
            None,
        )
        part = message.get_body(("plain", "html"))
        text = part.get_content() if part is not None else ""
        stored = StoredMessage(
            graph_id(),
            self.well_known["sentitems"],
            {
                "subject": str(message["Subject"] or ""),
                "from": recipient(self.address, self.name),
                "sender": recipient(self.address, self.name),
                "toRecipients": [recipient(a, n) for n, a in getaddresses([str(message["To"] or "")]) if a],
                "ccRecipients": [recipient(a, n) for n, a in getaddresses([str(message["Cc"] or "")]) if a],
                "replyTo": [],
                "internetMessageId": msgid,
                "conversationId": parent.props["conversationId"] if parent else graph_id("AAQkAD"),
                "sentDateTime": iso(time.time()),
                "isRead": True,
                "isDraft": False,
                "categories": [],
                "flag": {"flagStatus": "notFlagged"},
                "bodyPreview": text[:255],
                "body": {"contentType": "text", "content": text},
            },
            time.time(),
        )
        self.messages[stored.id] = stored
        self._record(stored.folder, stored.id, "created")
        self.sent.append(SentMail(raw, message, stored.id, time.time()))
        return 202, {}, None

    def _batch(self, payload: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        parts = payload.get("requests")
        if not isinstance(parts, list) or len(parts) > MAX_BATCH:
            raise GraphError(400, "BadRequest", f"A batch takes 1 to {MAX_BATCH} requests.")
        with self._lock:
            self.batches.append(len(parts))
        answers = []
        for part in parts:
            url = str(part["url"])
            part_headers = {k.lower(): str(v) for k, v in (part.get("headers") or {}).items()}
            injected = self._take_injected(url)
            try:
                if injected is not None and injected.kind == "fail":
                    raise GraphError(
                        injected.status,
                        injected.code,
                        injected.message,
                        {"Retry-After": f"{injected.retry_after:g}"} if injected.retry_after is not None else None,
                    )
                data = json.dumps(part["body"]).encode() if "body" in part else b""
                status, extra, body = self.handle(part["method"], "/v1.0" + url, data, {**headers, **part_headers})
                answers.append({"id": part["id"], "status": status, "headers": extra, "body": body})
            except GraphError as err:
                answers.append({"id": part["id"], "status": err.status, "headers": err.headers, "body": err.body()})
        return {"responses": answers}


def _utc(epoch_s: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC)


def _handler_for(fake: FakeGraph) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = b"" if payload is None else json.dumps(payload).encode("utf-8")
            self.send_response(status)
            if payload is not None:
                self.send_header("Content-Type", "application/json; odata.metadata=minimal")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            injected = fake._take_injected(urlsplit(self.path).path)
            if injected is not None and injected.kind == "delay":
                time.sleep(injected.seconds)
            if injected is not None and injected.kind == "fail":
                retry = {"Retry-After": f"{injected.retry_after:g}"} if injected.retry_after is not None else None
                self._reply(injected.status, GraphError(0, injected.code, injected.message).body(), retry)
                return
            auth = headers.get("authorization", "")
            with fake._lock:
                authorised = auth.startswith("Bearer ") and auth[7:] in fake.tokens
            try:
                if not authorised:
                    raise GraphError(401, "InvalidAuthenticationToken", "Access token has expired or is not yet valid.")
                status, extra, payload = fake.handle(method, self.path, body, headers)
            except GraphError as err:
                self._reply(err.status, err.body(), err.headers)
                return
            if injected is not None and injected.kind == "drop":  # the work is done, the answer never comes
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self._reply(status, payload, extra)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

    return Handler
