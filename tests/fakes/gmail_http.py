"""The fake Gmail's HTTP side: requests in, Gmail-shaped JSON (or a dropped connection) out.

Keep-alive HTTP/1.1 like Google's front end, and TCP_NODELAY: without it every call stalls
~40 ms on delayed ACKs.
"""

from __future__ import annotations

import json
import re
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

from tests.fakes.gmail_resources import GmailError

if TYPE_CHECKING:
    from tests.fakes.fake_gmail import FakeGmail

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "BAD_GATEWAY",
    503: "UNAVAILABLE",
}
_REASONS = {
    400: "invalidArgument",
    401: "authError",
    403: "forbidden",
    404: "notFound",
    409: "duplicate",
    429: "rateLimitExceeded",
    500: "backendError",
    503: "backendError",
}


class RawReply(NamedTuple):
    """An answer that is not JSON (the batch endpoint's multipart/mixed)."""

    content_type: str
    body: bytes


def split_related(body: bytes, content_type: str) -> tuple[dict[str, Any], bytes]:
    """The JSON metadata and the message/rfc822 bytes of a multipart/related upload."""
    boundary = re.search(r'boundary="?([^";]+)"?', content_type)
    if not boundary:
        raise GmailError(400, "multipart upload without a boundary")
    meta: dict[str, Any] = {}
    raw = b""
    for chunk in body.split(b"--" + boundary.group(1).encode())[1:]:
        if chunk.startswith(b"--"):
            break
        chunk = chunk[2:] if chunk.startswith(b"\r\n") else chunk[1:] if chunk.startswith(b"\n") else chunk
        # googleapiclient writes the part headers with bare LF; accept CRLF too.
        ends = [(chunk.find(sep), sep) for sep in (b"\r\n\r\n", b"\n\n") if chunk.find(sep) >= 0]
        if not ends:
            continue
        head, _, payload = chunk.partition(min(ends)[1])
        payload = payload[:-2] if payload.endswith(b"\r\n") else payload[:-1] if payload.endswith(b"\n") else payload
        if b"application/json" in head.lower():
            meta = json.loads(payload or b"{}")
        else:
            raw = payload
    return meta, raw


def handler_for(fake: FakeGmail) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as Google's front end does
        disable_nagle_algorithm = True  # TCP_NODELAY: otherwise each call waits ~40 ms on delayed ACKs

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def _reply(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            raw = isinstance(payload, RawReply)
            data = payload.body if raw else json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", payload.content_type if raw else "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _error(
            self, status: int, message: str, reason: str | None = None, headers: dict[str, str] | None = None
        ) -> None:
            errors = [{"message": message, "domain": "global", "reason": reason or _REASONS.get(status, "failed")}]
            self._reply(
                status,
                {
                    "error": {
                        "code": status,
                        "message": message,
                        "errors": errors,
                        "status": _STATUS_NAMES.get(status, "UNKNOWN"),
                    }
                },
                headers,
            )

        def _serve(self, method: str) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with fake._lock:
                fake.requests.append((method, url.path))
            injected = fake._take_injected(url.path)
            if injected is not None and injected.kind == "delay":
                time.sleep(injected.seconds)
            if injected is not None and injected.kind == "hold":  # a slow Gmail: done when the test says so
                fake._released.wait(120)
            if injected is not None and injected.kind in ("stall", "lose"):  # nothing is done, no answer comes
                if injected.kind == "stall":  # the caller dies waiting
                    fake._released.wait(120)
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if injected is not None and injected.kind == "fail":
                headers = {"Retry-After": f"{injected.retry_after:g}"} if injected.retry_after is not None else None
                message = injected.message or f"Injected failure {injected.status}"
                self._error(injected.status, message, injected.reason, headers)
                return
            try:
                if url.path == "/token" and method == "POST":
                    form = {k: v[0] for k, v in parse_qs(body.decode("utf-8")).items()}
                    result = fake._refresh(form)
                elif not fake._authorised(self.headers.get("Authorization")):
                    raise GmailError(
                        401, "Request had invalid authentication credentials. Expected OAuth 2 access token."
                    )
                else:
                    result = fake.handle(
                        method, url.path, parse_qs(url.query), body, self.headers.get("Content-Type", "")
                    )
            except GmailError as err:
                if url.path == "/token":
                    self._reply(err.status, {"error": err.reason or err.message, "error_description": err.message})
                else:
                    self._error(err.status, err.message, err.reason)
                return
            if injected is not None and injected.kind == "drop":  # the work is done, the answer never comes
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if injected is not None and injected.kind == "rewrite":
                result = injected.rewrite(result)
            self._reply(200, result)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return Handler
