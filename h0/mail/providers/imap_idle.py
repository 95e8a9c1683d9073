"""IMAP IDLE as H0's push channel: one thread holds an IDLE connection on INBOX and says "look again".

Like an event in controller-runtime, a wake-up carries nothing but "new mail may be there": the
callback (the daemon's `request_ingest`) runs the ordinary ingest, which reads from the sync
cursor. So a lost, doubled or spurious wake-up costs one idle poll and loses nothing, and the
periodic poll stays the safety net.

IDLE is renewed every RENEW_S (servers end it after about 29 minutes, RFC 2177). When the server
or the network drops the connection, the watcher reconnects with backoff (1 s doubling to
60 s, jittered) and wakes ingest once connected, for whatever arrived while it was away.

Integration (h0/pipeline/daemon.py, with ingest on and MAIL_BACKEND=imap):

    self.idle = IdleWatcher(self.settings, self.request_ingest).start()   # in _start()
    self.idle.stop()                                                       # in stop()
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loguru import logger

from h0.errors import H0Error
from h0.mail.providers.imap_wire import INBOX, connect, map_error
from h0.retry import Backoff

if TYPE_CHECKING:
    from imapclient import IMAPClient

    from h0.config import Settings

RENEW_S = 25 * 60.0  # under the 29 minutes servers allow an IDLE
CHECK_S = 60.0  # longest single wait for the server's word (a stop interrupts it at once)
BACKOFF = Backoff(1.0, 2.0, cap=60.0)  # pauses before reconnecting; reset once a session opens
_NEW_MAIL = (b"EXISTS", b"RECENT")


class IdleWatcher:
    """A daemon thread calling `on_new_mail()` within moments of mail arriving in INBOX."""

    def __init__(
        self,
        settings: Settings,
        on_new_mail: Callable[[], None],
        *,
        renew_s: float = RENEW_S,
        backoff: Backoff = BACKOFF,
        connect_to: Callable[[], IMAPClient] | None = None,
    ) -> None:
        self.settings = settings
        self.on_new_mail = on_new_mail
        self.renew_s = renew_s
        self.backoff = backoff
        self._connect = connect_to or (lambda: connect(settings))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._client: IMAPClient | None = None
        self._lock = threading.Lock()
        self.connects = 0  # sessions opened (1 + reconnects)
        self.renewals = 0  # IDLEs ended and reopened on the same connection
        self._idle_since = 0.0
        self.idling = threading.Event()  # set while an IDLE is open (tests and benchmarks wait on it)

    def start(self) -> IdleWatcher:
        self._thread = threading.Thread(target=self._run, name="imap-idle", daemon=True)
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        """Whether the watcher's thread is alive: True from start() until stop() has let it end."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            client = self._client
        if client is not None:  # wake the blocked idle_check
            with contextlib.suppress(Exception):
                client.socket().shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout)

    def _wake(self) -> None:
        try:
            self.on_new_mail()
        except Exception:  # noqa: BLE001 — the watcher outlives a failing callback
            logger.exception("imap idle: the new-mail callback failed")

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                self._session()
                failures = 0
            except Exception as exc:  # noqa: BLE001 — every failure means: reconnect later
                was_idling = self.idling.is_set() and time.monotonic() - self._idle_since > 1.0
                self.idling.clear()
                if self._stop.is_set():
                    break
                mapped = map_error(exc, "IDLE")
                why = mapped.message if isinstance(mapped, H0Error) else f"{type(exc).__name__}: {exc}"
                if was_idling:
                    # The server spoke or hung up mid-IDLE (imapclient also gives up on a response
                    # line that arrives in pieces): look for mail now, reconnect at once.
                    self._wake()
                    logger.info("imap idle: {}; reconnecting", why)
                    failures = 0
                    continue
                pause = self.backoff.delay(failures)
                failures += 1
                logger.warning("imap idle: {}; reconnecting in {:.0f} s", why, pause)
                self._stop.wait(pause)
            finally:
                self._close()
        self.idling.clear()

    def _session(self) -> None:
        client = self._connect()
        with self._lock:
            self._client = client
        self.connects += 1
        client.select_folder(INBOX, readonly=True)
        self._wake()  # whatever arrived while no IDLE was open
        while not self._stop.is_set():
            client.idle()
            if _buffered(client):
                # The server spoke right behind its "+ idling" (Dovecot reports there what arrived
                # since the last command, e.g. during a renewal): those lines already sit in the
                # client's read buffer, where idle_check's poll() of the socket never sees them.
                # End this IDLE to read them, and open a fresh one.
                _, responses = client.idle_done()
                if _says_bye(responses):
                    raise ConnectionResetError("the server ended the session (BYE)")
                if any(_is_new_mail(r) for r in responses):
                    self._wake()
                continue
            self._idle_since = time.monotonic()
            self.idling.set()
            renew_at = time.monotonic() + self.renew_s
            while not self._stop.is_set() and (left := renew_at - time.monotonic()) > 0:
                wait = min(CHECK_S, left)
                began = time.monotonic()
                responses = client.idle_check(timeout=wait)
                if _says_bye(responses):
                    raise ConnectionResetError("the server ended the session (BYE)")
                if any(_is_new_mail(r) for r in responses):
                    self._wake()
                elif not responses and time.monotonic() - began < wait * 0.9 and not self._stop.is_set():
                    # imapclient answers [] at once on end-of-file: DONE tells a dead
                    # connection (it raises) from a spurious wake-up (the IDLE is reopened)
                    break
            self.idling.clear()
            if self._stop.is_set():
                return
            _, responses = client.idle_done()  # renew: a fresh IDLE before the server's 29 minutes run out
            self.renewals += 1
            if any(_is_new_mail(r) for r in responses):
                self._wake()

    def _close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.shutdown()


def _buffered(client: IMAPClient) -> bool:
    """Whether bytes from the server wait in the client's read buffer (imaplib's file object) rather
    than on the socket. Looks without blocking; False when it cannot tell (the old behaviour)."""
    reader = getattr(getattr(client, "_imap", None), "file", None)
    if reader is None or not hasattr(reader, "peek"):
        return False
    sock = client.socket()
    timeout = sock.gettimeout()
    sock.settimeout(0.0)
    try:
        return bool(reader.peek(1))
    except (OSError, ValueError):  # nothing buffered and nothing on the socket yet (or TLS wants more)
        return False
    finally:
        sock.settimeout(timeout)


def _is_new_mail(response: Any) -> bool:
    return isinstance(response, tuple) and len(response) >= 2 and response[1] in _NEW_MAIL


def _says_bye(responses: list[Any]) -> bool:
    return any(isinstance(r, tuple) and r and r[0] == b"BYE" for r in responses)
