"""The Gmail transport (h0.mail.providers.gmail_transport) through GmailBackend and the real Google client:
no replayed POST, timeouts, one reused connection per thread, refreshed tokens persisted.

Most scenarios need a server that misbehaves at one exact moment (reads a send and hangs up,
never answers, closes an idle keep-alive connection), so `ScriptedGmail` is a small local
HTTP/1.1 server speaking Gmail's JSON for users.getProfile and messages.send, recording every
connection and request it reads. The refresh scenarios use the full fake Gmail.
"""

from __future__ import annotations

import json
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Self

import pytest

from h0.errors import InternalError, SendFailed
from h0.mail.models import DirectSend
from h0.mail.providers.gmail import GmailBackend
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import gmail_settings_for
from tests.pipeline.harness import wait_until

PROFILE = {"emailAddress": "me@example.com", "messagesTotal": 0, "threadsTotal": 0, "historyId": "4242"}
SENT = {"id": "18f0a1b2c3d4e5f6", "threadId": "18f0a1b2c3d4e5f6", "labelIds": ["SENT"]}
Script = Callable[[str, str], str]  # (method, path) → "answer" | "answer_then_close" | "hang_up" | "silent"


class ScriptedGmail:
    """A keep-alive HTTP/1.1 server; `script` decides, per request it has read, what happens."""

    def __init__(self, script: Script = lambda method, path: "answer") -> None:
        self.script = script
        self.requests: list[tuple[int, str, str]] = []  # (connection number, method, path)
        self.connections = 0
        self.closed = 0  # connections the server has closed
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/"

    def posts(self, path_end: str) -> int:
        with self._lock:
            return sum(1 for _, method, path in self.requests if method == "POST" and path.endswith(path_end))

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._thread.join(5)
        self._listener.close()

    def _accept(self) -> None:
        while not self._release.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            with self._lock:
                self.connections += 1
                number = self.connections
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        reader = conn.makefile("rb")
        try:
            while True:
                request_line = reader.readline()
                if not request_line:
                    return
                method, target, _ = request_line.decode("latin-1").split(" ", 2)
                length = 0
                while (line := reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                reader.read(length)
                path = target.split("?", 1)[0]
                with self._lock:
                    self.requests.append((number, method, path))
                action = self.script(method, path)
                if action == "hang_up":
                    return
                if action == "silent":
                    self._release.wait(30)
                    return
                body = json.dumps(SENT if method == "POST" else PROFILE).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                )
                if action == "answer_then_close":  # no "Connection: close": the client learns by the FIN
                    return
        except OSError:
            return
        finally:
            reader.close()
            conn.close()
            with self._lock:
                self.closed += 1


@pytest.fixture
def scripted() -> Iterator[Callable[[Script], ScriptedGmail]]:
    servers: list[ScriptedGmail] = []

    def start(script: Script) -> ScriptedGmail:
        servers.append(ScriptedGmail(script).__enter__())
        return servers[-1]

    yield start
    for server in servers:
        server.__exit__()


def backend_for(
    vault_dir: Path, gmail: FakeGmail, token_path: Path, endpoint: str, timeout: float = 5.0
) -> GmailBackend:
    return GmailBackend(gmail_settings_for(vault_dir, gmail, token_path, gmail_api_endpoint=endpoint), timeout=timeout)


def message() -> EmailMessage:
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "me@example.com", "bob@example.com", "once"
    mail["Message-ID"] = "<transport-test@example.com>"
    mail.set_content("exactly once\n")
    return mail


def test_given_the_server_hangs_up_after_reading_a_send_then_it_was_posted_once_and_the_outcome_is_unknown(
    vault_dir, gmail, token_path, scripted
):
    server = scripted(lambda method, path: "hang_up" if method == "POST" else "answer")
    backend = backend_for(vault_dir, gmail, token_path, server.endpoint)
    assert backend.position().account == "me@example.com"  # a warm keep-alive connection, as in a session
    with pytest.raises(SendFailed) as caught:
        backend.send(message())
    assert caught.value.details["outcome"] == "unknown" and caught.value.details["retryable"] is False
    assert "may or may not have been sent" in caught.value.message
    # send() is synchronous: a transport replay would have happened before it raised.
    assert server.posts("/messages/send") == 1
    backend.close()


def test_given_the_fake_gmail_drops_the_send_after_storing_it_then_one_post_and_one_message(service, gmail):
    """The transport never replays the POST; the service then asks Gmail by Message-ID and finds it sent."""
    gmail.drop_next(path_contains="messages/send")
    sent = service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    assert sent.message_id == gmail.sent[0].id
    assert [p for m, p in gmail.requests if m == "POST" and p.endswith("messages/send")] == [
        "/gmail/v1/users/me/messages/send"
    ]
    assert len(gmail.sent) == 1


def test_given_gmail_closed_the_idle_keep_alive_connection_then_the_send_goes_once_on_a_new_one(
    vault_dir, gmail, token_path, scripted
):
    server = scripted(lambda method, path: "answer_then_close" if method == "GET" else "answer")
    backend = backend_for(vault_dir, gmail, token_path, server.endpoint)
    backend.position()
    assert wait_until(lambda: server.closed >= 1)  # the server's FIN reaches the connection in the pool
    assert backend.send(message()).message_id == SENT["id"]
    assert server.posts("/messages/send") == 1 and server.connections == 2
    backend.close()


def test_given_nothing_listens_then_the_send_failed_before_anything_went_out_and_may_be_retried(
    vault_dir, gmail, token_path
):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    try:
        backend = backend_for(vault_dir, gmail, token_path, f"http://127.0.0.1:{closed.getsockname()[1]}/")
        with pytest.raises(SendFailed) as caught:
            backend.send(message())
    finally:
        closed.close()
    assert caught.value.details["outcome"] == "not_sent" and caught.value.details["retryable"] is True


@pytest.mark.timeout(30)  # a hang, not a slow answer, is what fails this test
def test_given_gmail_never_answers_then_the_send_and_the_read_fail_typed_within_the_read_timeout(
    vault_dir, gmail, token_path, scripted
):
    server = scripted(lambda method, path: "silent")
    backend = backend_for(vault_dir, gmail, token_path, server.endpoint, timeout=0.5)
    with pytest.raises(SendFailed) as caught:
        backend.send(message())
    assert caught.value.details["outcome"] == "unknown" and caught.value.details["retryable"] is False
    assert "timed out" in caught.value.details["cause"]
    with pytest.raises(InternalError) as read:
        backend.position()
    assert "timed out" in read.value.message and read.value.details["retryable"] is True
    assert server.posts("/messages/send") == 1
    backend.close()


def test_given_the_connection_cannot_open_in_time_then_the_send_is_not_sent_and_retryable(vault_dir, gmail, token_path):
    full = socket.socket()
    full.bind(("127.0.0.1", 0))
    full.listen(0)  # a one-place accept queue that nobody empties
    address = full.getsockname()
    fillers = []
    try:
        for _ in range(8):  # fill the queue until the kernel starts dropping SYNs
            filler = socket.socket()
            filler.settimeout(0.3)
            fillers.append(filler)
            try:
                filler.connect(address)
            except TimeoutError:
                break
        else:
            pytest.skip("this kernel does not hold connects when the accept queue is full")
        backend = backend_for(vault_dir, gmail, token_path, f"http://127.0.0.1:{address[1]}/", timeout=0.5)
        with pytest.raises(SendFailed) as caught:
            backend.send(message())
        assert caught.value.details["outcome"] == "not_sent" and caught.value.details["retryable"] is True
        assert "timed out" in caught.value.message
    finally:
        for filler in fillers:
            filler.close()
        full.close()


def test_given_threads_calling_at_once_then_each_has_its_own_session_and_reuses_its_connection(
    vault_dir, gmail, token_path, scripted
):
    server = scripted(lambda method, path: "answer")
    backend = backend_for(vault_dir, gmail, token_path, server.endpoint)
    threads, calls = 6, 5
    start, finished, release = threading.Barrier(threads), threading.Barrier(threads + 1), threading.Event()
    answers: list[str] = []

    def work() -> None:
        start.wait()
        for _ in range(calls):
            answers.append(backend.position().account)
        finished.wait()
        release.wait(30)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    finished.wait(30)
    assert backend.http_count == threads  # counted while every worker is alive
    release.set()
    for worker in workers:
        worker.join(30)
    assert answers == ["me@example.com"] * threads * calls
    assert server.connections == threads, "every thread kept one keep-alive connection for all its calls"
    assert backend.http_count == 0, "a thread that ended left no session (and no socket) behind"
    backend.close()


def test_given_an_expired_token_then_a_batch_refreshes_it_once_and_persists_it_0600(
    vault_dir, gmail: FakeGmail, tmp_path
):
    token = gmail.write_token(tmp_path / "token.json", expired=True)
    before = json.loads(token.read_text())["token"]
    ids = [gmail.add_message(subject=f"m{i}") for i in range(3)]
    backend = GmailBackend(gmail_settings_for(vault_dir, gmail, token))
    fetched = backend.fetch_many(ids)
    assert sorted(f.headers["Subject"] for f in fetched.values()) == ["m0", "m1", "m2"]
    assert gmail.token_refreshes == 1 and gmail.batches == [3]
    assert json.loads(token.read_text())["token"] != before
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    gmail.expire_access_tokens()  # Gmail rejects the token: the batch is answered 401, refreshed, sent again
    assert len(backend.fetch_many(ids[:1])) == 1
    assert gmail.token_refreshes == 2 and gmail.batches == [3, 1]
    backend.close()


def test_given_a_connection_idle_past_the_stale_limit_then_a_send_opens_a_fresh_one_and_a_read_does_not(
    vault_dir, gmail, token_path, scripted, monkeypatch
):
    from h0.mail.providers import gmail_transport

    server = scripted(lambda method, path: "answer")
    backend = backend_for(vault_dir, gmail, token_path, server.endpoint)
    backend.position()
    monkeypatch.setattr(gmail_transport, "STALE_AFTER_S", 0.0)  # every connection now counts as stale
    backend.position()
    assert server.connections == 1, "a read reuses the connection however long it sat"
    backend.send(message())
    assert server.connections == 2 and server.posts("/messages/send") == 1
    backend.close()


def test_given_a_proxy_in_the_environment_then_gmail_is_reached_through_it(
    vault_dir, gmail, token_path, scripted, monkeypatch
):
    proxy = scripted(lambda method, path: "answer")
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, proxy.endpoint)
    for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    backend = backend_for(vault_dir, gmail, token_path, "http://gmail.invalid/")
    assert backend.position().account == "me@example.com"
    assert proxy.requests == [(1, "GET", "http://gmail.invalid/gmail/v1/users/me/profile")]  # a proxy's absolute form
    backend.close()
