"""HTTP to Microsoft Graph: one `requests` session per thread, a bearer token from msal, typed failures.

What it guarantees, as h0.mail.providers.gmail_transport does for Gmail:

* **No silent replay.** urllib3 retries nothing and follows no redirect: reads are retried by H0's
  policy on typed errors (h0.mail.providers.retry), and a `sendMail` is never sent twice by the transport.
  A failure says which side of the wire it happened on (`typed_failure`): the request never left
  (safe to retry) or it may have been received (a send is then "outcome unknown", never replayed blindly).
  The one re-send is after a 401, which Graph answers without acting on the request: the token is
  refreshed once (`force_refresh`) and the request made again; a second 401 is `auth_required`.
* **Throttling.** 429 and 503 (and 509) are `rate_limited` with Graph's `Retry-After` (1 s when it
  names none), which the retry policy waits out — up to its longest wait, then the caller is told.
* **Immutable ids.** Every request says `Prefer: IdType="ImmutableId"`: a message keeps its id when it
  moves (to Archive, or from Drafts to Sent Items), so a note's `EMAIL_<id>` stays the message's.
* **Links stay at Graph.** A link Graph hands back (`@odata.nextLink`, `@odata.deltaLink`) is followed only
  when it is under GRAPH_API_ENDPOINT: the bearer token never goes to another host.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter

from h0.errors import AuthRequired, H0Error, InternalError, PermissionDenied, SendFailed
from h0.mail.providers.backend import ChangesUnreadable, CursorExpired
from h0.mail.providers.gmail_transport import (
    STALE_AFTER_S,
    OutcomeUnknown,
    PerThread,
    RequestNotSent,
    Timeouts,
    typed_failure,
    unretried,
)
from h0.mail.providers.outlook_auth import REAUTH_MESSAGE, MicrosoftSignIn
from h0.mail.providers.retry import http_refusal, throttled
from h0.retry import retry_after

BATCH_LIMIT = 20  # requests one JSON $batch may carry
IMMUTABLE_IDS = 'IdType="ImmutableId"'
_THROTTLED = {429, 503, 509}
_SYNC_STATE = {"syncstatenotfound", "syncstateinvalid", "resyncrequired"}
_BOUNCE = {"errorinvalidrecipients", "errorinvalidrecipientsubaddress", "errorrecipientnotfound"}


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: Any  # the JSON answer; None for 202/204


def graph_error(status: int, headers: dict[str, str], body: Any, *, sending: bool = False) -> H0Error:
    """Graph's error answer as a typed error; `retryable` only where trying again can help."""
    error = body.get("error") if isinstance(body, dict) else None
    code = str(error.get("code") or "") if isinstance(error, dict) else ""
    message = str(error.get("message") or "") if isinstance(error, dict) else ""
    message = (message or code or f"HTTP {status}").splitlines()[0][:500]
    details: dict[str, Any] = {"status": status, "graph_code": code or None}
    lowered = code.casefold()
    if status == 410 or lowered in _SYNC_STATE:
        return CursorExpired(f"Graph no longer keeps that change list: {message}", **details)
    if status in _THROTTLED:
        wait = retry_after({k.lower(): v for k, v in headers.items()}.get("retry-after"))
        if wait is None and status == 503:
            return InternalError(f"Graph is unavailable: {message}", retryable=True, **details)
        return throttled(f"Microsoft Graph is throttling H0: {message}", wait, details)
    if status == 401:
        return AuthRequired(REAUTH_MESSAGE, reason=f"Graph refused the access token: {message}", **details)
    if status == 403:
        return PermissionDenied(f"Graph refused: {message} (if H0 lacks a permission: {REAUTH_MESSAGE})", **details)
    return http_refusal("Graph", status, message, sending=sending, bounce=lowered in _BOUNCE, details=details)


def transport_error(exc: ConnectionError, *, sending: bool) -> H0Error:
    """A connection-level failure, typed by which side of the wire it happened on."""
    if sending and isinstance(exc, OutcomeUnknown):
        return SendFailed(
            "Graph did not answer after the message was handed over, so it may or may not have been sent. "
            "It was not re-sent: H0 looks for its Message-ID in Sent Items before any new attempt.",
            retryable=False,
            outcome="unknown",
            cause=str(exc),
        )
    if sending and isinstance(exc, RequestNotSent):
        return SendFailed(f"Could not reach Graph; nothing was sent: {exc}", retryable=True, outcome="not_sent")
    if sending:
        return SendFailed(f"The connection to Graph failed mid-send: {exc}", retryable=False, outcome="unknown")
    what = "timed out" if isinstance(exc, TimeoutError) else "failed"
    return InternalError(f"The connection to Graph {what}: {exc}", retryable=True)


class _ThreadSession:
    """One thread's session and its adapter; when the thread ends (anyio retires idle workers), this goes with it
    and its connections are closed (h0.mail.providers.gmail_transport.PerThread)."""

    __slots__ = ("__weakref__", "adapter", "last_used", "session")

    def __init__(self, session: requests.Session, adapter: HTTPAdapter) -> None:
        self.session, self.adapter, self.last_used = session, adapter, time.monotonic()


class GraphHttp:
    """Calls to one Graph endpoint for one signed-in account. Thread-safe: a session per thread, closed when its
    thread ends (a mail server's worker threads come and go) or with `close()`."""

    def __init__(self, endpoint: str, tokens: MicrosoftSignIn, *, timeout: float = 30.0) -> None:
        self.base = endpoint.rstrip("/")
        parts = urlsplit(self.base)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.tokens = tokens
        self.timeouts = Timeouts.within(timeout)
        # Kept only by its thread: when the thread ends, its connections are closed, not left open till exit.
        self._sessions = PerThread(self._new_session)

    def _new_session(self) -> _ThreadSession:
        session = requests.Session()
        adapter = unretried(session)
        session.proxies = requests.utils.get_environ_proxies(self.origin)
        return _ThreadSession(session, adapter)

    @property
    def sessions(self) -> int:
        """How many threads hold a session (with its connections) now."""
        return self._sessions.count

    def url(self, path_or_url: str) -> str:
        """`path_or_url` under the endpoint: a path ("/me/…"), or a link Graph gave that stays under it."""
        if path_or_url.startswith("/"):
            return self.base + path_or_url
        if path_or_url == self.base or path_or_url.startswith(self.base + "/"):
            return path_or_url
        raise ChangesUnreadable(f"Graph gave a link outside {self.base}: not followed", link=path_or_url[:200])

    def call(
        self,
        method: str,
        path_or_url: str,
        *,
        params: dict[str, str] | None = None,
        json: Any = None,
        data: bytes | None = None,
        content_type: str | None = None,
        prefer: tuple[str, ...] = (),
        sending: bool = False,
    ) -> Answer:
        """One request, its answer typed: JSON back, or the typed error of h0.errors."""
        url = self.url(path_or_url)
        for attempt in (0, 1):
            token = self.tokens.access_token(force_refresh=attempt > 0)
            headers = {"Authorization": f"Bearer {token}", "Prefer": ", ".join((IMMUTABLE_IDS, *prefer))}
            if content_type:
                headers["Content-Type"] = content_type
            response = self._send(method, url, params, json, data, headers, sending)
            if response.status_code == 401 and attempt == 0:
                continue  # Graph did not act on it: once more with a refreshed token
            return self._answer(response, sending)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns on its second pass

    def _send(
        self,
        method: str,
        url: str,
        params: dict[str, str] | None,
        json: Any,
        data: bytes | None,
        headers: dict[str, str],
        sending: bool,
    ) -> requests.Response:
        held = self._sessions.get()
        if method != "GET" and time.monotonic() - held.last_used > STALE_AFTER_S:
            held.adapter.close()  # an idle keep-alive connection a NAT may have dropped: a fresh one for this POST
        try:
            return held.session.request(
                method,
                url,
                params=params,
                json=json,
                data=data,
                headers=headers,
                allow_redirects=False,
                timeout=(self.timeouts.connect, self.timeouts.read),
            )
        except requests.RequestException as exc:
            raise transport_error(typed_failure(exc), sending=sending) from exc
        finally:
            held.last_used = time.monotonic()

    @staticmethod
    def _answer(response: requests.Response, sending: bool) -> Answer:
        headers = dict(response.headers)
        body: Any = None
        if response.content:
            try:
                body = response.json()
            except ValueError:
                body = None
        if response.status_code >= 300:
            raise graph_error(response.status_code, headers, body, sending=sending)
        if response.status_code not in (202, 204) and not isinstance(body, dict):
            raise InternalError(f"Graph answered {response.status_code} without a JSON object", retryable=False)
        return Answer(response.status_code, headers, body)

    def batch(self, requests_: list[dict[str, Any]]) -> dict[str, Answer | H0Error]:
        """One JSON $batch (at most BATCH_LIMIT requests, each {id, method, url[, body]}): id → its answer or
        its own typed error. A part Graph left unanswered is an InternalError (retryable)."""
        for part in requests_:
            if "body" in part:
                part.setdefault("headers", {"Content-Type": "application/json"})
            part.setdefault("headers", {})["Prefer"] = IMMUTABLE_IDS
        answer = self.call("POST", "/$batch", json={"requests": requests_})
        parts = answer.body.get("responses") if isinstance(answer.body, dict) else None
        results: dict[str, Answer | H0Error] = {}
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict) or str(part.get("id")) not in {str(r["id"]) for r in requests_}:
                continue
            status = int(part.get("status") or 0)
            headers = {str(k): str(v) for k, v in (part.get("headers") or {}).items()}
            body = part.get("body")
            results[str(part["id"])] = (
                graph_error(status, headers, body) if status >= 300 or status == 0 else Answer(status, headers, body)
            )
        for part in requests_:
            results.setdefault(
                str(part["id"]), InternalError("Graph's $batch left this request unanswered", retryable=True)
            )
        return results

    def close(self) -> None:
        self._sessions.close()
