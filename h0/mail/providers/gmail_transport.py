"""HTTP for the Gmail backend: google-auth's `AuthorizedSession`, one per thread, never replaying.

google-api-python-client builds every request (discovery, media upload, batch) and hands it
to whatever `http` object `execute()` is given, calling only
`http.request(uri, method, body=…, headers=…)` and reading back `(httplib2.Response, bytes)`.
`SessionHttp` is that object over a `requests` session from google-auth — the transport
google-auth supports — so H0 uses no private API of httplib2 and rewrites no URI.

What it guarantees, and how:

* **No silent replay.** urllib3 retries nothing here (`Retry(0, read=False)`, redirects not
  followed), for any method: reads are retried by H0's policy, on typed errors
  (h0.mail.providers.retry), and a `messages.send` is never sent twice by the transport. A failure says
  which side of the wire it happened on: `RequestNotSent` (the connection never opened: safe
  to retry) or `OutcomeUnknown` (the request may have been received: must not be replayed
  blindly). The one re-send is google-auth's after a 401, which Gmail answers without
  acting on the request.
* **Per-request timeouts**, connect and read (`Timeouts`); a read timeout is per socket read.
* **Thread-safe connection reuse.** A `requests.Session` is not documented as thread-safe and
  the MCP SDK runs sync tools in worker threads, so `ThreadSessions` gives each thread its own
  session; each keeps its keep-alive connection between calls.
* **The refreshed token persisted.** The session refreshes through the credentials' own
  `refresh()` (before an expired token is used, and once after a 401); h0.mail.providers.auth's
  credentials serialise that across threads and write token.json with mode 0600.

`SessionHttp` has no `credentials` attribute on purpose: googleapiclient's batch would then
refresh through a bare `httplib2.Http()` of its own, without H0's timeouts. The batch request
is authorised like any other, and Gmail applies its Authorization header to every part.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import httplib2
import requests
import urllib3.exceptions
from google.auth.credentials import Credentials
from google.auth.transport.requests import AuthorizedSession
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from h0.mail.providers.outlook_auth import ca_bundle

# Keep-alive connections idle longer than this are closed before a POST: a peer that dropped
# its end without telling us (a NAT timeout) would make the send "outcome unknown" for nothing.
# urllib3 already replaces a connection the server closed properly.
STALE_AFTER_S = 15.0
NO_RETRIES = Retry(total=0, read=False, redirect=False)
_IDEMPOTENT = frozenset({"GET", "HEAD"})
T = TypeVar("T", bound="_HoldsSession")
# google-auth's AuthorizedSession has no annotations: it is a requests.Session, and typed as one here.
_authorized_session: Callable[..., requests.Session] = AuthorizedSession
# Raised by requests while preparing the request, before any connection is made.
_PREPARE_ERRORS = (
    requests.exceptions.InvalidURL,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidSchema,
    requests.exceptions.InvalidHeader,
    requests.exceptions.URLRequired,
)


class RequestNotSent(ConnectionError):
    """The request never reached the server (the connection was not opened)."""


class OutcomeUnknown(ConnectionError):
    """The request may have reached the server and no answer came: it may have been acted on."""


class ConnectTimedOut(RequestNotSent, TimeoutError):
    """The connection did not open within the connect timeout."""


class AnswerTimedOut(OutcomeUnknown, TimeoutError):
    """The server took longer than the read timeout to answer."""


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect: float
    read: float

    @classmethod
    def within(cls, seconds: float, *, connect_cap: float = 10.0) -> Timeouts:
        """`seconds` for each read, and for the connection at most `connect_cap` of them."""
        return cls(min(seconds, connect_cap), seconds)


def unretried(session: requests.Session) -> HTTPAdapter:
    """`session` as every H0 session to a mail API is: its adapter (returned) retries nothing, TLS is checked against
    `ca_bundle()`, and the proxies are the caller's to set once (requests re-reads them each call: a fifth of its time)."""
    adapter = HTTPAdapter(max_retries=NO_RETRIES)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    session.trust_env = False
    session.verify = ca_bundle()
    return adapter


class SessionHttp:
    """One thread's authorised connection to Gmail, shaped as googleapiclient's `http`."""

    def __init__(self, credentials: Credentials, timeouts: Timeouts) -> None:
        self.timeouts = timeouts
        # One refresh and re-send after a 401; a token refresh gets each request's timeouts too.
        self.session = _authorized_session(credentials, max_refresh_attempts=1)
        self._adapter = unretried(self.session)
        self._proxies: dict[str, dict[str, str]] = {}
        self._last_used = time.monotonic()

    def request(
        self,
        uri: str,
        method: str = "GET",
        body: str | bytes | None = None,
        headers: dict[str, str] | None = None,
        redirections: int = 0,
        connection_type: Any = None,
    ) -> tuple[httplib2.Response, bytes]:
        """googleapiclient's call: one HTTP exchange, `(response, content)`; the arguments
        `redirections` and `connection_type` are httplib2's and are not used."""
        method = method.upper()
        idle = time.monotonic() - self._last_used
        if method not in _IDEMPOTENT and idle > STALE_AFTER_S:
            self._adapter.close()  # the pool opens a fresh connection for this request
        headers = {name: value for name, value in (headers or {}).items() if name.lower() != "content-length"}
        data = body.encode("utf-8") if isinstance(body, str) else body  # requests counts the length of bytes
        try:
            response = self.session.request(
                method,
                uri,
                data=data,
                headers=headers,
                allow_redirects=False,
                proxies=self._proxies_for(uri),
                timeout=(self.timeouts.connect, self.timeouts.read),
            )
        except requests.RequestException as exc:
            raise typed_failure(exc) from exc
        finally:
            self._last_used = time.monotonic()
        return _httplib2_response(response), response.content

    def _proxies_for(self, uri: str) -> dict[str, str]:
        """The proxies the environment names for this scheme and host (NO_PROXY honoured)."""
        origin = "{}://{}".format(*urlsplit(uri)[:2])
        if origin not in self._proxies:
            self._proxies[origin] = requests.utils.get_environ_proxies(origin)
        return self._proxies[origin]

    def close(self) -> None:
        self.session.close()


def typed_failure(exc: requests.RequestException) -> ConnectionError:
    """RequestNotSent only when the request provably never left: invalid before sending,
    or the connection never opened. Anything later may have been received."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return ConnectTimedOut(f"connecting timed out: {text}")
    if isinstance(exc, _PREPARE_ERRORS) or _connection_refused(exc):
        return RequestNotSent(text)
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return AnswerTimedOut(f"no answer within {text}")
    return OutcomeUnknown(text)


def _connection_refused(exc: BaseException) -> bool:
    """True if the cause is a connection that never opened (refused, unresolvable host, a
    certificate rejected in the handshake), looked for through urllib3's wrappers."""
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (urllib3.exceptions.NewConnectionError, ssl.SSLCertVerificationError)):
            return True
        if isinstance(item, BaseException):
            stack.extend(
                [
                    getattr(item, "reason", None),
                    getattr(item, "original_error", None),
                    item.__cause__,
                    *[arg for arg in item.args if isinstance(arg, BaseException)],
                ]
            )
    return False


def _httplib2_response(response: requests.Response) -> httplib2.Response:
    """The response as googleapiclient reads it: lower-case headers, `status`, `reason`."""
    info: dict[str, str] = {name.lower(): value for name, value in response.headers.items()}
    if "content-encoding" in info:  # requests has decoded the body, as httplib2 would have
        info["-content-encoding"] = info.pop("content-encoding")
        info["content-length"] = str(len(response.content))
    info["status"] = str(response.status_code)
    result = httplib2.Response(info)
    result.reason = response.reason or ""
    return result


class _HoldsSession(Protocol):
    session: requests.Session


class PerThread(Generic[T]):
    """One `T` (a holder of a requests `session`) per thread, made on the thread's first `get()`, all closed together.

    Worker threads come and go (anyio retires idle ones): a thread's `T` lives as long as the thread, and its
    session's connections are closed when it is collected. Gmail's `ThreadSessions` and Graph's
    (h0.mail.providers.outlook_http.GraphHttp) are this.
    """

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._local = threading.local()
        self._all: weakref.WeakSet[T] = weakref.WeakSet()
        self._lock = threading.Lock()

    def get(self) -> T:
        """The calling thread's `T`."""
        held: T | None = getattr(self._local, "held", None)
        if held is None:
            held = self._local.held = self._make()
            weakref.finalize(held, held.session.close)
            with self._lock:
                self._all.add(held)
        return held

    @property
    def count(self) -> int:
        """How many threads hold one (with its connections) now."""
        with self._lock:
            return len(self._all)

    def close(self) -> None:
        with self._lock:
            everything, self._all = list(self._all), weakref.WeakSet()
        for held in everything:
            with contextlib.suppress(OSError):  # a socket another thread is using; nothing to save
                held.session.close()
        self._local = threading.local()


class ThreadSessions(PerThread[SessionHttp]):
    """A `SessionHttp` per thread for one set of credentials, all closed together."""

    def __init__(self, credentials: Credentials, timeouts: Timeouts) -> None:
        super().__init__(lambda: SessionHttp(credentials, timeouts))
        self.credentials = credentials
        self.timeouts = timeouts


class NoHttp:
    """The `http` a shared API client is built with. Every `execute()` is handed the calling
    thread's session; a call that is not fails here instead of going out unauthorised."""

    def request(self, uri: str, method: str = "GET", *args: Any, **kwargs: Any) -> tuple[httplib2.Response, bytes]:
        raise RuntimeError(f"{method} {uri}: execute() was called without the thread's session")
