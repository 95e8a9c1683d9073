"""A real local HTTP server serving an iCal feed, whose answer a test changes: the calendar,
a 404, a slow answer, a huge one (declared or streamed), or garbage."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class IcalFeed:
    """`http://127.0.0.1:<port>/secret-token/basic.ics`, answering with `mode`:
    "ok" (`body`), "404", "slow" (`delay` seconds, then `body`), "huge-declared" (a 100 MB
    Content-Length), "huge-streamed" (100 MB without a length), "redirect-file" (to file:///etc/passwd),
    "garbage", "trickle" (the headers, then `body` one byte every `delay` seconds) or "trickle-headers"
    (the status line and headers themselves, one byte every `delay` seconds). `finished` is set when a
    trickle ends: the client hung up (what H0 should do) or the feed was closed."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.mode = "ok"
        self.delay = 3.0
        self.requests = 0
        self.sent_bytes = 0
        self.closed = threading.Event()  # the feed is closing: a trickle stops
        self.finished = threading.Event()  # a trickle ended
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/secret-token-7731/basic.ics"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed.set()
        self._server.shutdown()
        self._server.server_close()


HUNDRED_MB = 100 * 1024 * 1024


def _handler(feed: IcalFeed) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            feed.requests += 1
            mode = feed.mode
            if mode == "404":
                self._answer(404, b"not found")
            elif mode == "slow":
                time.sleep(feed.delay)
                self._answer(200, feed.body)
            elif mode == "redirect-file":
                self.send_response(302)
                self.send_header("Location", "file:///etc/passwd")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif mode == "trickle":
                self.send_response(200)
                self.send_header("Content-Type", "text/calendar")
                self.send_header("Content-Length", str(len(feed.body)))
                self.end_headers()
                self._trickle(feed.body)
            elif mode == "trickle-headers":
                self._trickle(b"HTTP/1.1 200 OK\r\nContent-Type: text/calendar\r\nContent-Length: 100000\r\n\r\n")
            elif mode == "garbage":
                self._answer(200, b"<html>this is a login page, not a calendar</html>")
            elif mode == "huge-declared":
                self.send_response(200)
                self.send_header("Content-Length", str(HUNDRED_MB))
                self.end_headers()
                self._stream(HUNDRED_MB)
            elif mode == "huge-streamed":
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                self._stream(HUNDRED_MB)
            else:
                self._answer(200, feed.body)

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/calendar")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                pass  # the client gave up waiting (the slow answer): what H0 should do

        def _trickle(self, data: bytes) -> None:
            try:
                for at in range(len(data)):
                    self.wfile.write(data[at : at + 1])
                    self.wfile.flush()
                    feed.sent_bytes += 1
                    if feed.closed.wait(feed.delay):
                        break
            except OSError:
                pass  # the client hung up: what H0 should do
            finally:
                feed.finished.set()

        def _stream(self, total: int) -> None:
            chunk = b"X" * (1024 * 1024)
            try:
                while feed.sent_bytes < total:
                    self.wfile.write(chunk)
                    feed.sent_bytes += len(chunk)
            except OSError:
                pass  # the client stopped reading: what H0 should do

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
