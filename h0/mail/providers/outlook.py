"""The Outlook backend: Outlook.com, Hotmail and Microsoft 365 mailboxes over Microsoft Graph REST v1.0.

GRAPH_API_ENDPOINT (default https://graph.microsoft.com/v1.0) is the base of every call; the sign-in is
h0.mail.providers.outlook_auth (msal), the HTTP h0.mail.providers.outlook_http, the JSON h0.mail.providers.outlook_wire.

**Mail in.** The Inbox is followed by Graph's delta query (`messages/delta?changeType=created`): each
answer ends with an `@odata.deltaLink` (or, mid-way, an `@odata.nextLink`) that lists what came after it.
A link is an opaque URL, so H0's state database keeps it (`delta_links`) and the sync's cursor is its
number — the same integer cursor Gmail's historyId is, moving forward only. `position()` starts a delta at
now (`$filter=receivedDateTime ge` a few minutes ago), so a first sync of a 50,000-message mailbox never
pages through the mailbox; the catch-up by GMAIL_QUERY (h0.mail.incoming.sync) brings the recent mail in.
A delta Graph no longer keeps (410, `syncStateNotFound`) or a link H0 pruned is CursorExpired: the sync
catches up by query, and the ingested category decides what was ingested, so nothing becomes a note twice.
Sent Items is a stream of its own (`sent_changes`), as IMAP's Sent folder is: the owner's sent mail.

**Mail out.** A send is `POST /me/sendMail` with the MIME message H0 built (base64, `text/plain`): what
goes out is exactly the message bound at approval — its deterministic Message-ID (so "already sent" is
found in Sent Items by `internetMessageId`), In-Reply-To and References of the original (the reply threads
in the recipient's client and in Outlook's conversation), attachments in the same request. One request:
nothing is left in Drafts if H0 stops mid-way, and Exchange saves the one copy in Sent Items. (createReply
would have Exchange compose the reply — its own Message-ID, the original quoted below text the human never
approved — and take three calls with a draft left over if the last one fails.) Graph takes requests up to
4 MB: a larger message is refused, unsent, with what to do.

**Labels** are categories (no master-list entry is made: that needs another permission); `move_email` to
`Archive` (or Inbox, Junk, a folder's name — created if missing) moves the message to that folder.
"""

from __future__ import annotations

import base64
import threading
import time
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any

from h0.errors import H0Error, InternalError, InvalidRequest, NotFound, SendFailed
from h0.mail.compose.addresses import refuse_line_breaks
from h0.mail.compose.mime import bare_message_id, raw_bytes
from h0.mail.models import TokenState
from h0.mail.providers.backend import Added, Changes, CursorExpired, Fetched, Label, Mailbox, MailSender, Position, Sent
from h0.mail.providers.outlook_auth import GRAPH_SCOPES, MicrosoftSignIn
from h0.mail.providers.outlook_folders import Folders
from h0.mail.providers.outlook_http import BATCH_LIMIT, GraphHttp
from h0.mail.providers.outlook_query import parse_query
from h0.mail.providers.outlook_wire import (
    ATTACHMENTS,
    DELTA_FIELDS,
    FULL_FIELDS,
    LIST_FIELDS,
    checked_id,
    delta_page,
    fetched_from_message,
    graph_time,
    odata_text,
)
from h0.platform.deadline import within
from h0.state import StateDB

if TYPE_CHECKING:
    from h0.config import Settings

REQUEST_TIMEOUT_S = 30.0
MAX_SEND_BASE64 = 4 * 1024 * 1024 - 16 * 1024  # Graph's request limit, less room for the request itself
DELTA_PAGE = "odata.maxpagesize=200"
START_MARGIN_S = 600.0  # a new delta starts this far back (clock skew): what it finds then is discarded
MAX_LIST_PAGE = 500
MAX_SCANNED = 20_000  # messages one listing reads while leaving out excluded categories
MAX_THREAD = 500


class OutlookBackend(MailSender, Mailbox):
    name = "outlook"
    batch_limit = BATCH_LIMIT

    def __init__(self, settings: Settings, *, timeout: float = REQUEST_TIMEOUT_S) -> None:
        self.settings = settings
        self.tokens = MicrosoftSignIn.from_settings(settings, GRAPH_SCOPES)
        self.http = GraphHttp(settings.graph_api_endpoint, self.tokens, timeout=timeout)
        self.folders = Folders(self.http)
        self.clock = time.time
        self._state: StateDB | None = None
        self._account: str | None = None
        self._lock = threading.Lock()

    @property
    def state(self) -> StateDB:
        """H0's state database, where the delta links are kept (opened on first use)."""
        with self._lock:
            if self._state is None:
                self._state = StateDB.for_vault(self.settings.vault_path, self.settings.h0_state_dir)
            return self._state

    # -- sending -------------------------------------------------------------------------

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        encoded = base64.b64encode(raw_bytes(message))
        if len(encoded) > MAX_SEND_BASE64:
            raise SendFailed(
                f"The message is {len(encoded) * 3 // 4 // 1024:,} KB; Microsoft Graph takes messages up to about "
                f"{MAX_SEND_BASE64 * 3 // 4 // 1024:,} KB. It was not sent: make the attachments smaller, or "
                "send it from Outlook.",
                retryable=False,
                outcome="not_sent",
            )
        self.http.call("POST", "/me/sendMail", data=encoded, content_type="text/plain", sending=True)
        # sendMail answers 202 and no id: the message is known by its Message-ID (as SMTP's is) until
        # `find_sent` reads its Graph id from Sent Items.
        return Sent(str(message["Message-ID"]), thread_id)

    def find_sent(self, rfc822_message_id: str) -> Sent | None:
        """The message with this Message-ID in Sent Items (only there: a stranger can reuse a Message-ID)."""
        bare = bare_message_id(rfc822_message_id)
        refuse_line_breaks("rfc822_message_id", bare)
        params = {
            "$filter": f"internetMessageId eq {odata_text('<' + bare + '>')}",
            "$select": "id,conversationId",
            "$top": "1",
        }
        folder = self.folders.path("sentitems")
        found = self.http.call("GET", f"{folder}/messages", params=params).body.get("value") or []
        first = found[0] if isinstance(found, list) and found and isinstance(found[0], dict) else None
        if first is None or not isinstance(first.get("id"), str):
            return None
        return Sent(first["id"], first.get("conversationId"))

    def find_bounce(self, rfc822_message_id: str) -> int | None:
        return None  # Exchange's non-delivery reports do not carry the Message-ID where Graph can filter on it

    # -- reading -------------------------------------------------------------------------

    def _fetched(self, resource: Any) -> Fetched:
        try:
            return fetched_from_message(resource, self.folders.labels())
        except H0Error:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InternalError(
                f"Graph answered a message H0 cannot read: {type(exc).__name__}: {exc}", retryable=False
            ) from None

    def _message_url(self, message_id: str) -> str:
        return f"/me/messages/{checked_id(message_id)}?$select={FULL_FIELDS}&$expand={ATTACHMENTS}"

    def get_message(self, message_id: str) -> Fetched:
        return self._fetched(self.http.call("GET", self._message_url(message_id)).body)

    def fetch_many(self, message_ids: list[str]) -> dict[str, Fetched | H0Error]:
        """The full messages in one $batch (at most BATCH_LIMIT ids)."""
        answers: dict[str, Fetched | H0Error] = {}
        by_key: dict[str, str] = {}
        requests_: list[dict[str, Any]] = []
        for index, message_id in enumerate(dict.fromkeys(message_ids)):
            try:
                url = self._message_url(message_id)
            except InvalidRequest as error:
                answers[message_id] = error
                continue
            by_key[str(index)] = message_id
            requests_.append({"id": str(index), "method": "GET", "url": url})
        for key, answer in (self.http.batch(requests_) if requests_ else {}).items():
            try:
                answers[by_key[key]] = answer if isinstance(answer, H0Error) else self._fetched(answer.body)
            except H0Error as error:
                answers[by_key[key]] = error
        return answers

    def _listing(self, query: str, max_results: int, fields: str) -> list[dict[str, Any]]:
        """The newest messages matching `query`, as Graph lists them, categories left out by H0 applied."""
        parsed = parse_query(query, now_s=self.clock())
        if parsed.folder is None:
            base = "/me/messages"
        else:
            try:
                base = f"{self.folders.path(parsed.folder)}/messages"
            except NotFound:
                return []  # no such folder: nothing in it
        needs = fields if not parsed.exclude or "categories" in fields else fields + ",categories"
        params: dict[str, str] | None = parsed.params(needs, min(MAX_LIST_PAGE, max(1, max_results)))
        link = base
        found: list[dict[str, Any]] = []
        scanned = 0
        while len(found) < max_results and scanned < MAX_SCANNED:
            page = self.http.call("GET", link, params=params).body
            items = [i for i in page.get("value") or [] if isinstance(i, dict) and isinstance(i.get("id"), str)]
            scanned += len(items)
            found.extend(i for i in items if parsed.admits(i.get("categories") or []))
            link = page.get("@odata.nextLink")
            if not isinstance(link, str):
                break
            params = None  # the link carries them
        return found[:max_results]

    def list_messages(self, query: str, max_results: int) -> list[Fetched]:
        return [self._fetched(item) for item in self._listing(query, max_results, LIST_FIELDS)]

    def message_ids(self, query: str, max_results: int) -> list[str]:
        return [str(item["id"]) for item in self._listing(query, max_results, "id")]

    def thread_messages(self, thread_id: str) -> list[Fetched]:
        """The conversation's messages in every folder, oldest first."""
        refuse_line_breaks("thread_id", thread_id)
        if not thread_id.strip() or len(thread_id) > 1000:
            raise InvalidRequest("thread_id is not an Outlook conversation id.", field="thread_id")
        params: dict[str, str] | None = {
            "$filter": f"conversationId eq {odata_text(thread_id)}",
            "$select": LIST_FIELDS,
            "$top": "100",
        }
        link = "/me/messages"
        found: list[Fetched] = []
        while len(found) < MAX_THREAD:
            page = self.http.call("GET", link, params=params).body
            found.extend(self._fetched(i) for i in page.get("value") or [] if isinstance(i, dict))
            link, params = page.get("@odata.nextLink"), None
            if not isinstance(link, str):
                break
        return sorted(found, key=lambda m: m.internal_date_ms or 0)

    # -- labels: categories, and folders for moves (h0.mail.providers.outlook_folders) ----------------------

    def ensure_label(self, name: str) -> Label:
        return self.folders.label(name)

    def modify_labels(self, message_id: str, add: list[str], remove: list[str]) -> list[str]:
        return self.folders.modify(message_id, add, remove)

    def modify_many(self, message_ids: list[str], add: list[str], remove: list[str]) -> dict[str, list[str] | H0Error]:
        return self.folders.modify_many(message_ids, add, remove)

    def modify_all(self, message_ids: list[str], add: list[str], remove: list[str]) -> None:
        ids = list(dict.fromkeys(message_ids))
        for start in range(0, len(ids), BATCH_LIMIT):
            failed = [
                a
                for a in self.modify_many(ids[start : start + BATCH_LIMIT], add, remove).values()
                if isinstance(a, H0Error) and a.code != "not_found"
            ]
            if failed:
                raise failed[0]

    # -- changes: delta links kept in the state database ------------------------------------

    def _me(self) -> str:
        me = self.http.call("GET", "/me", params={"$select": "mail,userPrincipalName"}).body
        address = str(me.get("mail") or me.get("userPrincipalName") or "").strip()
        if not address:
            raise InternalError("Graph's /me has neither mail nor userPrincipalName.", retryable=False)
        self._account = address
        return address

    def _stream(self, folder: str) -> str:
        return f"{self.name}:{self._account or self._me()}/{folder}"

    def _start(self, folder: str) -> int:
        """A delta of `folder` from now: the link kept, its cursor returned (what it lists first is discarded)."""
        source = self._stream(folder)
        params: dict[str, str] | None = {
            "changeType": "created",
            "$select": DELTA_FIELDS,
            "$filter": f"receivedDateTime ge {graph_time(self.clock() - START_MARGIN_S)}",
        }
        link = f"{self.folders.path(folder)}/messages/delta"
        while True:
            _, next_link, delta_link = delta_page(self.http.call("GET", link, params=params, prefer=(DELTA_PAGE,)).body)
            params = None
            if delta_link is not None:
                self.http.url(delta_link)  # a link outside the endpoint is never kept
                return self.state.add_delta_link(source, delta_link)
            link = str(next_link)

    def _follow(self, folder: str, cursor: int, label: str, limit: int) -> Changes:
        source = self._stream(folder)
        link = self.state.delta_link(source, cursor)
        if link is None:
            raise CursorExpired(f"H0 no longer keeps the {folder} delta link {cursor}.", cursor=str(cursor))
        added: list[Added] = []
        seen: set[str] = set()
        while True:
            entries, next_link, delta_link = delta_page(self.http.call("GET", link, prefer=(DELTA_PAGE,)).body)
            link = str(next_link or delta_link)
            self.http.url(link)
            position = self.state.add_delta_link(source, link)
            for message_id, labels in entries:
                if message_id not in seen:
                    seen.add(message_id)
                    added.append(Added(message_id, position, (label, *labels)))
            if delta_link is not None:
                return Changes(added, position, complete=True)
            if len(added) >= limit:
                return Changes(added, position, complete=False)

    def position(self) -> Position:
        """The account (`/me`) and a delta of the Inbox from now."""
        account = self._me()
        return Position(account, self._start("inbox"))

    def changes_since(self, cursor: int, *, label: str | None, limit: int) -> Changes:
        """The Inbox's new messages after `cursor`, oldest first. Only the Inbox is followed (`label`: nothing more)."""
        return self._follow("inbox", cursor, "INBOX", limit)

    def sent_changes(self, cursor: int | None, *, limit: int) -> Changes:
        """Sent Items' new messages after `cursor`; no cursor (or one whose link is gone): nothing, from now on."""
        if cursor is not None:
            try:
                return self._follow("sentitems", cursor, "SENT", limit)
            except CursorExpired:
                pass
        return Changes([], self._start("sentitems"), complete=True)

    # -- health --------------------------------------------------------------------------

    def account(self, timeout: float) -> str | None:
        """The mailbox's address (`/me`), asked for at most `timeout` seconds."""
        if self._account:
            return self._account
        return within(timeout, self._me, "outlook-health")

    def token_state(self) -> TokenState:
        return self.tokens.state()

    def problems(self) -> list[str]:
        return self.tokens.problems()

    def close(self) -> None:
        self.http.close()
