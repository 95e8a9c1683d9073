"""HTTP for the Gmail backend: one authorised httplib2 connection per thread, no replays.

Two hazards of the google-api-python-client's default transport are handled here:

* httplib2 is not thread-safe (the client library's "Thread Safety" page), and the MCP SDK
  runs sync tools in worker threads, so concurrent tool calls on one session would share a
  socket. `ThreadHttp` gives each thread its own `AuthorizedHttp` over its own `Http`.
* httplib2 silently sends a request a second time when the first response never arrives
  (`_conn_request` treats a missing status line as a stale keep-alive connection). For
  `messages.send` that is a second email. `NoReplayHttp` makes exactly one attempt for
  anything but GET/HEAD and says which side of the wire a failure happened on:
  `RequestNotSent` (connect or write failed: safe to retry) or `OutcomeUnknown` (the
  request went out, no answer came: must not be replayed blindly).
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import weakref

import google_auth_httplib2
import httplib2
from google.auth.credentials import Credentials

# Keep-alive connections idle longer than this are closed before a POST: a server that
# already dropped its end would make the send fail as "outcome unknown" for nothing.
STALE_AFTER_S = 15.0


class RequestNotSent(ConnectionError):
    """The request never reached the server (connect or write failed)."""


class OutcomeUnknown(ConnectionError):
    """The request was written but no response came: the server may have acted on it."""


class NoReplayHttp(httplib2.Http):
    """httplib2.Http that never sends a non-GET request twice."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._last_used = time.monotonic()

    def _conn_request(self, conn, request_uri, method, body, headers):  # noqa: ANN001 — httplib2's signature
        idle = time.monotonic() - self._last_used
        self._last_used = time.monotonic()
        if method in ("GET", "HEAD"):
            if conn.sock is None:
                _connect(conn)
            return super()._conn_request(conn, request_uri, method, body, headers)
        if idle > STALE_AFTER_S and conn.sock is not None:
            conn.close()
        try:
            if conn.sock is None:
                _connect(conn)
            conn.request(method, request_uri, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            if isinstance(exc, socket.timeout):
                # A write that timed out may have delivered part or all of the body.
                raise OutcomeUnknown(f"timed out while sending: {exc}") from exc
            raise RequestNotSent(str(exc) or type(exc).__name__) from exc
        try:
            response = conn.getresponse()
            content = response.read()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise OutcomeUnknown(str(exc) or type(exc).__name__) from exc
        response = httplib2.Response(response)
        content = httplib2._decompressContent(response, content, self.limit_kwargs)  # noqa: SLF001
        return response, content


def _connect(conn) -> None:  # noqa: ANN001 — an httplib2 connection
    """Connect with TCP_NODELAY, as urllib3 does: http.client writes headers and a str body
    in two sends, and Nagle holds the second until the server's delayed ACK (up to 40 ms)."""
    conn.connect()
    try:
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError):
        pass  # not a TCP socket (a proxy tunnel, a test double): latency only


class ThreadHttp:
    """A per-thread `AuthorizedHttp` for one set of credentials."""

    def __init__(self, credentials: Credentials, *, timeout: float) -> None:
        self.credentials = credentials
        self.timeout = timeout
        self._local = threading.local()
        self._all: weakref.WeakSet[google_auth_httplib2.AuthorizedHttp] = weakref.WeakSet()
        self._lock = threading.Lock()

    def get(self) -> google_auth_httplib2.AuthorizedHttp:
        authed = getattr(self._local, "http", None)
        if authed is None:
            authed = google_auth_httplib2.AuthorizedHttp(self.credentials, http=NoReplayHttp(timeout=self.timeout))
            self._local.http = authed
            with self._lock:
                self._all.add(authed)
        return authed

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._all)

    def close(self) -> None:
        with self._lock:
            everything = list(self._all)
            self._all = weakref.WeakSet()
        for authed in everything:
            try:
                authed.close()
            except Exception:  # closing a socket another thread is using; nothing to save
                pass
        self._local = threading.local()
