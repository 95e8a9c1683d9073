"""Fixtures for the IMAP tests: a real pymap server (module-wide), a real aiosmtpd relay, settings."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from h0.config import Settings, load_settings
from tests.fakes.imap_server import PymapServer, free_port
from tests.mail.conftest import DIRECT_SEND, FAST_RETRIES
from tests.mail.test_smtp_backend import Mailbox


@pytest.fixture(scope="module")
def imap_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PymapServer]:
    server = PymapServer(tmp_path_factory.mktemp("pymap")).start()
    yield server
    server.stop()


@pytest.fixture
def imap(imap_server: PymapServer) -> PymapServer:
    """The shared server with an empty INBOX and Sent."""
    for folder in ("INBOX", "Sent", "Archive"):
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


def imap_settings(vault_dir: Path, server: PymapServer, relay: Controller | None = None, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "vault_path": vault_dir, "mail_backend": "imap", "imap_host": server.host, "imap_port": server.port,
        "imap_secure": "none", "imap_user": server.user, "imap_pass": server.password, "imap_timeout_seconds": 10,
        **FAST_RETRIES, **DIRECT_SEND,
    }
    if relay is not None:
        values.update({"smtp_host": relay.hostname, "smtp_port": relay.port, "smtp_secure": "none",
                       "smtp_from": server.user})
    values.update(overrides)
    return load_settings(**values)


def raw_message(subject: str = "Hello", body: str = "Hi there", *, sender: str = "Ann <ann@example.org>",
                to: str = "h0@example.com", message_id: str | None = None, **headers: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, subject
    msg["Message-ID"] = message_id or make_msgid(domain="example.org")
    msg["Date"] = "Sun, 22 Nov 2026 10:00:00 +0000"
    for name, value in headers.items():
        msg[name.replace("_", "-")] = value
    msg.set_content(body)
    return msg.as_bytes(policy=msg.policy.clone(linesep="\r\n"))


def dovecot_available() -> bool:
    return shutil.which("dovecot") is not None
