"""The lifecycle the loopback fakes share (Gmail, Graph, the OAuth authority): an HTTP server on 127.0.0.1
served from a daemon thread, stopped and closed on `stop()` or at the end of a `with` block."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """Subclasses build their server in `start()` and hand it to `_serve`."""

    _server: ThreadingHTTPServer | None = None

    def _serve(self, server: ThreadingHTTPServer, name: str) -> None:
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, args=(0.05,), name=name, daemon=True).start()

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
