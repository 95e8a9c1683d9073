"""A real IMAP server for the tests: pymap's maildir backend on a loopback port, in a temp dir.

pymap (PyPI) is an asyncio IMAP4rev1 server with IDLE, MOVE and UIDPLUS; its maildir backend
keeps Dovecot's on-disk formats (`dovecot-uidlist` holds UIDVALIDITY, `dovecot-keywords` the
keywords a folder may carry). It runs as a child process, exactly as `pymap maildir DIR` would
for a user; the tests reach it only over the wire, with imapclient.

`FaultyLink` sits between H0 and the server when a test needs the network to fail: it forwards
bytes both ways and can cut every open connection at once (a server ending an IDLE, a NAT
dropping an idle socket).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from imapclient import IMAPClient
from pysasl.hashing import BuiltinHash

USER, PASSWORD = "h0@example.com", "imap-secret"
# Keywords a maildir folder may carry must be declared (pymap refuses the rest, as servers
# without `\*` in PERMANENTFLAGS do). H0's own, and the ones the tests add.
KEYWORDS = ("H0-ingested", "Clients", "Waiting", "H0-ingested-2")
FOLDERS = ("Sent", "Archive")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"pymap exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5) as probe:
            if probe.recv(64).startswith(b"* OK"):
                return
        time.sleep(0.05)
    raise RuntimeError("pymap did not start listening")


class PymapServer:
    """`pymap maildir` in `root`, one user (USER / PASSWORD) with INBOX, Sent and Archive.

    `keywords=()` declares none: the server then keeps no custom keyword at all (PERMANENTFLAGS
    list only the system flags, no `\\*`), as many hosted Exchange-style servers do."""

    def __init__(self, root: Path, *, keywords: tuple[str, ...] = KEYWORDS) -> None:
        self.root = root
        self.keywords = keywords
        self.host = "127.0.0.1"
        self.port = free_port()
        self.user, self.password = USER, PASSWORD
        self.process: subprocess.Popen | None = None
        self._client: IMAPClient | None = None
        self._lock = threading.Lock()

    @property
    def maildir(self) -> Path:
        return self.root / "mail" / "h0"

    def _prepare(self) -> None:
        mail = self.root / "mail"
        mail.mkdir(parents=True, exist_ok=True)
        (mail / "pymap-etc-passwd").write_text(f"{USER}:x::::h0:\n")
        (mail / "pymap-etc-shadow").write_text(f"{USER}:{BuiltinHash().hash(PASSWORD)}:::::::\n")
        (mail / "pymap-etc-group").write_text("")
        for folder in ("", *(f".{name}" for name in FOLDERS)):
            path = self.maildir / folder
            for sub in ("cur", "new", "tmp"):
                (path / sub).mkdir(parents=True, exist_ok=True)
            if folder:
                (path / "maildirfolder").touch()
            (path / "dovecot-keywords").write_text("".join(f"{i} {k}\n" for i, k in enumerate(self.keywords)))

    def start(self) -> PymapServer:
        if not (self.root / "mail").exists():
            self._prepare()
        log = open(self.root / "pymap.log", "ab")  # noqa: SIM115 — the child keeps it
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("pymap")),
                "--host",
                self.host,
                "--port",
                str(self.port),
                "--no-tls",
                "maildir",
                str(self.root / "mail"),
            ],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        _wait_for_port(self.port, self.process)
        return self

    def stop(self) -> None:
        self._drop_client()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    # -- the tests' own mail client ------------------------------------------------------

    def client(self) -> IMAPClient:
        """A fresh logged-in connection (the caller logs out)."""
        client = IMAPClient(self.host, self.port, ssl=False, timeout=10)
        client.login(self.user, self.password)
        return client

    def _shared(self) -> IMAPClient:
        if self._client is None:
            self._client = self.client()
        return self._client

    def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.logout()

    def deliver(self, raw: bytes, folder: str = "INBOX", flags: Iterable[str] = ()) -> int:
        """APPEND a message as a mail delivery would; returns its UID."""
        with self._lock:
            for attempt in (1, 2):
                try:
                    answer = self._shared().append(folder, raw, flags=tuple(flags))
                    break
                except (OSError, IMAPClient.AbortError):
                    self._drop_client()
                    if attempt == 2:
                        raise
            return int(answer.split(b"]")[0].split()[-1])  # [APPENDUID <validity> <uid>]

    def empty(self, folder: str = "INBOX") -> None:
        """Delete every message of `folder` (each test starts from a clean mailbox)."""
        with self._lock:
            client = self._shared()
            client.select_folder(folder)
            uids = client.search("ALL")
            if uids:
                client.delete_messages(uids)
                client.expunge()

    def uids(self, folder: str = "INBOX", criteria: object = "ALL") -> list[int]:
        with self._lock:
            client = self._shared()
            client.select_folder(folder, readonly=True)
            return list(client.search(criteria))

    def flags(self, uid: int, folder: str = "INBOX") -> set[str]:
        with self._lock:
            client = self._shared()
            client.select_folder(folder, readonly=True)
            found = client.get_flags([uid]).get(uid, ())
            return {f.decode() if isinstance(f, bytes) else str(f) for f in found}

    def messages(self, folder: str) -> list[bytes]:
        with self._lock:
            client = self._shared()
            client.select_folder(folder, readonly=True)
            uids = client.search("ALL")
            return [data[b"BODY[]"] for _, data in sorted(client.fetch(uids, ["BODY.PEEK[]"]).items())]

    def renumber(self, folder: str = "INBOX") -> int:
        """What a server migration or a rebuilt index does: every message of `folder` gets a new UID
        under a new UIDVALIDITY (Dovecot's `dovecot-uidlist` is lost). Keywords stay with the
        messages. Returns the new UIDVALIDITY."""
        self.stop()
        path = self.maildir if folder == "INBOX" else self.maildir / f".{folder}"
        (path / "dovecot-uidlist").unlink(missing_ok=True)  # the files (and their keywords) stay
        self.start()
        with self._lock:
            return int(self._shared().select_folder(folder, readonly=True)[b"UIDVALIDITY"])


class FaultyLink:
    """A TCP relay on loopback in front of `target`; `cut()` drops every connection through it."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name="faulty-link", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                inbound, _ = self.listener.accept()
            except OSError:
                return
            try:
                outbound = socket.create_connection(self.target, timeout=5)
            except OSError:
                inbound.close()
                continue
            outbound.settimeout(None)
            with self._lock:
                self.accepted += 1
                self._sockets += [inbound, outbound]
            for a, b in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Every open connection ends now, without a word (RST-like: both ends see EOF)."""
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self._closed = True
        self.listener.close()
        self.cut()
