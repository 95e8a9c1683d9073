"""The Gmail backend: google-api-python-client over per-thread google-auth sessions.

The API's resources are built once (h0.mail.providers.gmail_api); each call passes the calling thread's own
session to `execute()` (see gmail_transport.py).
"""

from __future__ import annotations

import base64
import io
import threading
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any

from googleapiclient.errors import HttpError
from googleapiclient.http import MediaIoBaseUpload

from h0.errors import AuthRequired, H0Error, InternalError, InvalidRequest, NotFound
from h0.mail.compose.addresses import checked_thread_id
from h0.mail.compose.mime import bare_message_id, raw_bytes
from h0.mail.models import TokenState
from h0.mail.providers.auth import TokenStore
from h0.mail.providers.backend import Added, Changes, CursorExpired, Fetched, Label, Mailbox, MailSender, Position, Sent
from h0.mail.providers.gmail_api import GmailApi, gmail_api
from h0.mail.providers.gmail_batch import BATCH_LIMIT, BatchRunner, batch_uri
from h0.mail.providers.gmail_transport import SessionHttp, ThreadSessions, Timeouts
from h0.mail.providers.gmail_wire import (
    fetched_from_resource,
    fetched_or_error,
    history_id,
    history_page,
    map_http_error,
    map_transport_error,
)
from h0.platform.deadline import within

if TYPE_CHECKING:
    from h0.config import Settings

# Above this the message goes as a media upload: Gmail caps JSON request bodies well below
# its 35 MB message limit, and base64url inside JSON adds another third.
UPLOAD_THRESHOLD = 4 * 1024 * 1024
REQUEST_TIMEOUT_S = 30.0
LIST_HEADERS = ["Subject", "From", "To", "Cc", "Date", "Message-ID"]
MAX_THREAD_ID_CHARS = 256  # Gmail's are 16 hex digits; anything this long is not one
HISTORY_PAGE = 500  # history.list's largest page
MAX_LIST_PAGE = 500  # messages.list's largest page
BATCH_MODIFY_LIMIT = 1000  # messages.batchModify takes at most this many ids


class GmailBackend(MailSender, Mailbox):
    name = "gmail"
    batch_limit = BATCH_LIMIT

    def __init__(self, settings: Settings, *, timeout: float = REQUEST_TIMEOUT_S) -> None:
        self.tokens = TokenStore(settings.gmail_token_path, token_uri=settings.gmail_token_uri)
        self.api_endpoint = settings.gmail_api_endpoint
        self.timeout = timeout
        self._lock = threading.Lock()
        self._service: GmailApi | None = None
        self._http: ThreadSessions | None = None
        self._labels: dict[str, Label] = {}
        self._account: str | None = None
        self._batches = BatchRunner(batch_uri(self.api_endpoint))

    # -- plumbing ------------------------------------------------------------------------

    def _api(self) -> tuple[GmailApi, ThreadSessions]:
        creds = self.tokens.credentials()  # AuthRequired when token.json is missing or revoked
        with self._lock:
            if self._service is None:
                self._service = gmail_api(self.api_endpoint)
            if self._http is None or self._http.credentials is not creds:
                self._http = ThreadSessions(creds, Timeouts.within(self.timeout))
            return self._service, self._http

    def _execute(self, build_request: Any, *, sending: bool = False) -> dict[str, Any]:
        api, pool = self._api()
        try:
            result: dict[str, Any] = build_request(api).execute(http=pool.get(), num_retries=0)
            return result
        except HttpError as exc:
            raise map_http_error(exc, sending=sending) from None
        except H0Error:
            raise
        except Exception as exc:
            mapped = self._transport_error(exc, sending=sending)
            if mapped is None:
                raise
            raise mapped from exc

    def _transport_error(self, exc: BaseException, *, sending: bool = False) -> H0Error | None:
        mapped = map_transport_error(exc, sending=sending)
        if isinstance(mapped, AuthRequired):
            self._account = None
        return mapped

    def _batch(self, build_requests: dict[str, Any]) -> dict[str, Any]:
        """One batch request: key → (api → HttpRequest); returns key → JSON answer or typed error."""
        api, pool = self._api()
        return self._batches.run(
            {key: build(api) for key, build in build_requests.items()}, pool.get(), self._transport_error
        )

    @property
    def http_count(self) -> int:
        """How many threads have their own session (for tests of the thread model)."""
        return self._http.count if self._http else 0

    # -- sending -------------------------------------------------------------------------

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        raw = raw_bytes(message)
        body: dict[str, Any] = {"threadId": thread_id} if thread_id else {}
        if len(raw) > UPLOAD_THRESHOLD:
            # The upload part is ASCII (RFC 2047 headers, quoted-printable and base64 bodies),
            # which googleapiclient's multipart writer requires of message/rfc822 media.
            media = MediaIoBaseUpload(io.BytesIO(raw), mimetype="message/rfc822", resumable=False)
            result = self._execute(
                lambda api: api.messages.send(userId="me", body=body or None, media_body=media), sending=True
            )
        else:
            body["raw"] = base64.urlsafe_b64encode(raw).decode("ascii")
            result = self._execute(lambda api: api.messages.send(userId="me", body=body), sending=True)
        return Sent(str(result["id"]), result.get("threadId"))

    def find_sent(self, rfc822_message_id: str) -> Sent | None:
        query = f"rfc822msgid:{bare_message_id(rfc822_message_id)} in:sent"
        result = self._execute(lambda api: api.messages.list(userId="me", q=query, maxResults=1))
        found = result.get("messages") or []
        return Sent(str(found[0]["id"]), found[0].get("threadId")) if found else None

    def find_bounce(self, rfc822_message_id: str) -> int | None:
        # Gmail's delivery-failure reports come from mailer-daemon and quote the original
        # headers, so a phrase search for the Message-ID finds them.
        query = f'from:mailer-daemon "{bare_message_id(rfc822_message_id)}"'
        result = self._execute(lambda api: api.messages.list(userId="me", q=query, maxResults=1))
        found = result.get("messages") or []
        if not found:
            return None
        message = self._get(str(found[0]["id"]), "metadata")
        return int(message.get("internalDate") or 0) or None

    # -- reading -------------------------------------------------------------------------

    def _get(self, message_id: str, fmt: str) -> dict[str, Any]:
        if not message_id.strip():
            raise InvalidRequest("message_id is empty.", field="message_id")
        extra = {"metadataHeaders": LIST_HEADERS} if fmt == "metadata" else {}
        return self._execute(lambda api: api.messages.get(userId="me", id=message_id, format=fmt, **extra))

    def list_messages(self, query: str, max_results: int) -> list[Fetched]:
        result = self._execute(lambda api: api.messages.list(userId="me", q=query, maxResults=max_results))
        return [fetched_from_resource(self._get(str(item["id"]), "metadata")) for item in result.get("messages") or []]

    def get_message(self, message_id: str) -> Fetched:
        return fetched_from_resource(self._get(message_id, "full"))

    def thread_messages(self, thread_id: str) -> list[Fetched]:
        thread_id = checked_thread_id(thread_id, MAX_THREAD_ID_CHARS)
        result = self._execute(
            lambda api: api.threads.get(userId="me", id=thread_id, format="metadata", metadataHeaders=LIST_HEADERS)
        )
        messages = [fetched_from_resource(item) for item in result.get("messages") or []]
        # Gmail already answers in date order; sorting makes "oldest first" a promise of ours, not theirs.
        return sorted(messages, key=lambda m: m.internal_date_ms or 0)

    # -- incremental sync ----------------------------------------------------------------

    def position(self) -> Position:
        """users.getProfile: the address, and the mailbox's current historyId (1 quota unit)."""
        profile = self._execute(lambda api: api.users.getProfile(userId="me"))
        address = str(profile.get("emailAddress") or "").strip()
        if not address:
            raise InternalError("Gmail's profile has no emailAddress.", retryable=False)
        self._account = address
        return Position(address, history_id(profile.get("historyId"), "profile historyId"))

    def changes_since(self, cursor: int, *, label: str | None, limit: int) -> Changes:
        """users.history.list, messageAdded records after `cursor` (2 quota units a page).

        A 404 means Gmail no longer keeps history that old (typically after a week, sometimes
        hours): CursorExpired. An answer not shaped as the API promises (a record or historyId
        that is not a number, a messagesAdded entry without its message id, a page that is not
        an object): ChangesUnreadable — nothing of it is used, so no cursor comes from it.
        """
        added: list[Added] = []
        seen: set[str] = set()
        page_token: str | None = None
        last = cursor
        while True:
            params: dict[str, Any] = {
                "userId": "me",
                "startHistoryId": str(cursor),
                "historyTypes": ["messageAdded"],
                "maxResults": HISTORY_PAGE,
            }
            if label:
                params["labelId"] = label
            if page_token:
                params["pageToken"] = page_token
            try:
                page = self._execute(lambda api, params=params: api.history.list(**params))
            except NotFound as err:
                raise CursorExpired(
                    f"Gmail no longer keeps history from {cursor}: {err.message}", cursor=str(cursor)
                ) from None
            now, records, page_token = history_page(page)
            for position, messages in records:
                last = max(last, position)
                for message_id, labels in messages:
                    if message_id not in seen:
                        seen.add(message_id)
                        added.append(Added(message_id, position, labels))
            if page_token is None:
                return Changes(added, max(now, last), complete=True)
            if len(added) >= limit:
                return Changes(added, last, complete=False)

    def sent_changes(self, cursor: int | None, *, limit: int) -> None:
        return None  # SENT is a label in the history that changes_since reads

    def message_ids(self, query: str, max_results: int) -> list[str]:
        """messages.list, ids only (5 quota units a page of up to 500)."""
        ids: list[str] = []
        page_token: str | None = None
        while len(ids) < max_results:
            params: dict[str, Any] = {
                "userId": "me",
                "q": query,
                "maxResults": min(MAX_LIST_PAGE, max_results - len(ids)),
            }
            if page_token:
                params["pageToken"] = page_token
            page = self._execute(lambda api, params=params: api.messages.list(**params))
            ids.extend(
                str(item["id"]) for item in page.get("messages") or [] if isinstance(item, dict) and item.get("id")
            )
            page_token = page.get("nextPageToken") or None
            if page_token is None:
                break
        return ids[:max_results]

    def fetch_many(self, message_ids: list[str]) -> dict[str, Fetched | H0Error]:
        """messages.get format=full for each id, in one batch request (5 quota units each)."""
        answers = self._batch(
            {
                message_id: (
                    lambda api, message_id=message_id: api.messages.get(userId="me", id=message_id, format="full")
                )
                for message_id in dict.fromkeys(message_ids)
            }
        )
        return {key: value if isinstance(value, H0Error) else fetched_or_error(value) for key, value in answers.items()}

    def modify_many(self, message_ids: list[str], add: list[str], remove: list[str]) -> dict[str, list[str] | H0Error]:
        """messages.modify for each id, in one batch request (5 quota units each)."""
        body = {"addLabelIds": add, "removeLabelIds": remove}
        answers = self._batch(
            {
                message_id: (
                    lambda api, message_id=message_id: api.messages.modify(userId="me", id=message_id, body=body)
                )
                for message_id in dict.fromkeys(message_ids)
            }
        )
        return {
            key: value if isinstance(value, H0Error) else list(value.get("labelIds") or [])
            for key, value in answers.items()
        }

    def modify_all(self, message_ids: list[str], add: list[str], remove: list[str]) -> None:
        """messages.batchModify: one call (50 quota units) per 1,000 ids."""
        ids = list(dict.fromkeys(message_ids))
        for start in range(0, len(ids), BATCH_MODIFY_LIMIT):
            body = {"ids": ids[start : start + BATCH_MODIFY_LIMIT], "addLabelIds": add, "removeLabelIds": remove}
            self._execute(lambda api, body=body: api.messages.batchModify(userId="me", body=body))

    # -- labels --------------------------------------------------------------------------

    def _load_labels(self) -> None:
        result = self._execute(lambda api: api.labels.list(userId="me"))
        labels = {
            str(item["id"]): Label(str(item["id"]), str(item.get("name", item["id"])))
            for item in result.get("labels") or []
        }
        with self._lock:
            self._labels = labels

    def _match_label(self, name: str) -> Label | None:
        wanted = name.casefold()
        with self._lock:
            for label in self._labels.values():
                if label.id == name or label.name.casefold() == wanted:
                    return label
        return None

    def ensure_label(self, name: str) -> Label:
        label = self._match_label(name)
        if label is None:
            self._load_labels()
            label = self._match_label(name)
        if label is not None:
            return label
        spec = {"name": name, "labelListVisibility": "labelShow", "messageListVisibility": "show"}
        try:
            created = self._execute(lambda api: api.labels.create(userId="me", body=spec))
        except H0Error as err:
            if err.code != "conflict":  # 409: created meanwhile by someone else — use theirs
                raise
            self._load_labels()
            label = self._match_label(name)
            if label is None:
                raise
            return label
        label = Label(str(created["id"]), str(created.get("name", name)), created=True)
        with self._lock:
            self._labels[label.id] = Label(label.id, label.name)
        return label

    def modify_labels(self, message_id: str, add: list[str], remove: list[str]) -> list[str]:
        body = {"addLabelIds": add, "removeLabelIds": remove}
        result = self._execute(lambda api: api.messages.modify(userId="me", id=message_id, body=body))
        return list(result.get("labelIds") or [])

    # -- health --------------------------------------------------------------------------

    def account(self, timeout: float) -> str | None:
        """The Gmail address (users.getProfile), asked on a separate short-timeout connection."""
        if self._account:
            return self._account
        try:
            api, pool = self._api()
        except H0Error:
            return None

        def profile() -> Any:
            http = SessionHttp(pool.credentials, Timeouts(timeout, timeout))
            try:
                return api.users.getProfile(userId="me").execute(http=http, num_retries=0)
            finally:
                http.close()

        address = (within(timeout, profile, "gmail-health") or {}).get("emailAddress")
        if address:
            self._account = str(address)
        return self._account

    def token_state(self) -> TokenState:
        return self.tokens.state()

    def problems(self) -> list[str]:
        return self.tokens.problems()

    def close(self) -> None:
        with self._lock:
            pool, self._http = self._http, None
        if pool is not None:
            pool.close()
