"""Fixtures for the IMAP tests: a real IMAP server (session-wide) — pymap, and Dovecot when it is
installed — a real aiosmtpd relay, settings.

`imap_server` (and so `imap`) is parametrized over SERVERS: every test that takes it runs against
each server. Without Dovecot (`dovecot` neither on PATH nor in /usr/sbin) the Dovecot runs are
skipped with the reason, so the suite passes on a machine without it."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from h0.config import Settings, load_settings
from tests.fakes.dovecot_server import DovecotServer, dovecot_binary
from tests.fakes.imap_server import PymapServer, free_port
from tests.mail.conftest import DIRECT_SEND, FAST_RETRIES
from tests.mail.test_smtp_backend import Mailbox

SERVERS = ("pymap", "dovecot")
NO_DOVECOT = "Dovecot is not installed (Debian: apt-get install dovecot-imapd)"


def start_server(kind: str, root: Path) -> PymapServer:
    """A running server of `kind` in `root` (skips the test when it is Dovecot and Dovecot is missing)."""
    if kind == "dovecot":
        if dovecot_binary() is None:
            pytest.skip(NO_DOVECOT)
        return DovecotServer(root).start()
    return PymapServer(root).start()


def stop_server(server: PymapServer) -> None:
    if isinstance(server, DovecotServer):
        server.cleanup()
    else:
        server.stop()


def sent_of(server: PymapServer) -> str:
    """The name of the server's Sent folder (`Sent` on pymap, the SPECIAL-USE `Envoyés` on Dovecot)."""
    return getattr(server, "sent", "Sent")


@pytest.fixture(scope="session", params=SERVERS)
def imap_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PymapServer]:
    server = start_server(request.param, tmp_path_factory.mktemp(request.param))
    yield server
    stop_server(server)


@pytest.fixture
def imap(imap_server: PymapServer) -> PymapServer:
    """The shared server with an empty INBOX, Sent and Archive."""
    for folder in ("INBOX", sent_of(imap_server), "Archive"):
        imap_server.empty(folder)
    return imap_server


@pytest.fixture(scope="module")
def relay() -> Iterator[tuple[Controller, Mailbox]]:
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield controller, mailbox
    controller.stop()


@pytest.fixture
def smtp_box(relay: tuple[Controller, Mailbox]) -> Mailbox:
    relay[1].received.clear()
    relay[1].drop_data = False
    return relay[1]


def imap_settings(
    vault_dir: Path, server: PymapServer, relay: Controller | None = None, **overrides: object
) -> Settings:
    values: dict[str, object] = {
        "vault_path": vault_dir,
        "mail_backend": "imap",
        "imap_host": server.host,
        "imap_port": server.port,
        "imap_secure": "none",
        "imap_user": server.user,
        "imap_pass": server.password,
        "imap_timeout_seconds": 10,
        **FAST_RETRIES,
        **DIRECT_SEND,
    }
    if relay is not None:
        values.update(
            {"smtp_host": relay.hostname, "smtp_port": relay.port, "smtp_secure": "none", "smtp_from": server.user}
        )
    values.update(overrides)
    return load_settings(**values)


def raw_message(
    subject: str = "Hello",
    body: str = "Hi there",
    *,
    sender: str = "Ann <ann@example.org>",
    to: str = "h0@example.com",
    message_id: str | None = None,
    **headers: str,
) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, subject
    msg["Message-ID"] = message_id or make_msgid(domain="example.org")
    msg["Date"] = "Sun, 22 Nov 2026 10:00:00 +0000"
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body)
    return msg.as_bytes(policy=msg.policy.clone(linesep="\r\n"))


def dovecot_available() -> bool:
    return dovecot_binary() is not None
