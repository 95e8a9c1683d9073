"""The SMTP backend against a real aiosmtpd server on loopback, over STARTTLS and implicit TLS."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from h0.config import load_settings
from h0.errors import AuthRequired, NotSupported, SendFailed
from h0.mail import MailService
from h0.mail.models import DirectSend
from h0.mcp.mail_server import SERVER_NAME
from tests.mail.conftest import DIRECT_SEND, audit_records

USER, PASSWORD = "h0@example.com", "app-password"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for localhost / 127.0.0.1, made fresh for the test run."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@dataclass
class Mailbox:
    """The aiosmtpd handler: keeps what arrived; some recipients are refused."""

    received: list = field(default_factory=list)
    drop_data: bool = False

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("nobody@"):
            return "550 5.1.1 The email account that you tried to reach does not exist"
        if address.startswith("busy@"):
            return "451 4.3.0 Mailbox temporarily unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.received.append(envelope)
        if self.drop_data:  # the message arrived, the answer never does
            server.transport.close()
        return "250 2.0.0 OK queued"


def authenticate(server, session, envelope, mechanism, auth_data):
    ok = (
        isinstance(auth_data, LoginPassword)
        and auth_data.login.decode() == USER
        and auth_data.password.decode() == PASSWORD
    )
    return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd answers 535 itself


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    cert, key = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # how a private CA is trusted: the system store's variable
    return cert, key


def start(mailbox: Mailbox, cert: Path, key: Path, *, implicit_tls: bool) -> Controller:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    port = free_port()
    if implicit_tls:
        # aiosmtpd only counts STARTTLS as TLS when deciding whether to offer AUTH; this
        # session is TLS from the first byte, so let it offer AUTH.
        controller = Controller(
            mailbox,
            hostname="127.0.0.1",
            port=port,
            ssl_context=context,
            server_hostname="localhost",
            authenticator=authenticate,
            auth_required=True,
            auth_require_tls=False,
        )
    else:
        controller = Controller(
            mailbox,
            hostname="127.0.0.1",
            port=port,
            tls_context=context,
            require_starttls=True,
            server_hostname="localhost",
            authenticator=authenticate,
            auth_required=True,
        )
    controller.start()
    return controller


pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")


@pytest.fixture(params=["starttls", "ssl"])
def smtp(request, certificate, vault_dir: Path) -> Iterator[tuple[Mailbox, MailService]]:
    mailbox = Mailbox()
    controller = start(mailbox, *certificate, implicit_tls=request.param == "ssl")
    settings = load_settings(
        vault_path=vault_dir,
        mail_backend="smtp",
        smtp_host="localhost",
        smtp_port=controller.port,
        **DIRECT_SEND,
        smtp_secure=request.param,
        smtp_user=USER,
        smtp_pass=PASSWORD,
        smtp_timeout_seconds=5,
        max_retries=2,
        retry_delay_ms=1,
    )
    try:
        yield mailbox, MailService(settings)
    finally:
        controller.stop()


def test_given_an_smtp_relay_with_tls_and_login_then_the_message_arrives_intact(smtp, vault_dir):
    mailbox, service = smtp
    result = service.send_email(
        DirectSend(
            to="Bob <bob@example.com>",
            bcc="hidden@example.com",
            subject="Grüße",
            body="Héllo\n",
            html_body="<p>Héllo</p>",
        )
    )
    [envelope] = mailbox.received
    assert envelope.mail_from == USER
    assert sorted(envelope.rcpt_tos) == ["bob@example.com", "hidden@example.com"]
    assert b"hidden@example.com" not in envelope.original_content  # smtplib strips Bcc from the wire
    assert b"=?utf-8?" in envelope.original_content and result.backend == "smtp"
    assert result.message_id == result.rfc822_message_id  # SMTP has no provider id
    assert [r["event"] for r in audit_records(vault_dir)] == ["pre_send_audit", "email_sent"]


def test_given_a_permanently_refused_recipient_then_send_failed_is_a_bounce(smtp):
    mailbox, service = smtp
    with pytest.raises(SendFailed) as caught:
        service.send_email(DirectSend(to="nobody@example.com", subject="S", body="b"))
    assert caught.value.details["smtp_code"] == 550
    assert caught.value.details["bounce"] is True and caught.value.details["retryable"] is False
    assert mailbox.received == []


def test_given_a_temporary_refusal_then_it_is_answered_retryable_after_one_attempt(smtp, vault_dir):
    """Given the relay answers 451 (try later), when a message is sent, then one attempt is made and the answer
    says at once that it may be tried again: the caller's work queue decides when."""
    _mailbox, service = smtp
    with pytest.raises(SendFailed) as caught:
        service.send_email(DirectSend(to="busy@example.com", subject="S", body="b"))
    assert caught.value.details["smtp_code"] == 451 and caught.value.details["retryable"] is True
    assert [r["event"] for r in audit_records(vault_dir)] == ["pre_send_audit", "send_failed"]


def test_given_wrong_credentials_then_auth_required_names_the_settings(certificate, vault_dir):
    controller = start(Mailbox(), *certificate, implicit_tls=False)
    try:
        settings = load_settings(
            vault_path=vault_dir,
            mail_backend="smtp",
            smtp_host="localhost",
            smtp_port=controller.port,
            **DIRECT_SEND,
            smtp_user=USER,
            smtp_pass="wrong",
            smtp_timeout_seconds=5,
            max_retries=2,
            retry_delay_ms=1,
        )
        with pytest.raises(AuthRequired) as caught:
            MailService(settings).send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
        assert "SMTP_PASS" in caught.value.message
    finally:
        controller.stop()


def test_given_an_untrusted_certificate_then_nothing_is_sent(certificate, vault_dir, monkeypatch):
    mailbox = Mailbox()
    controller = start(mailbox, *certificate, implicit_tls=False)
    monkeypatch.delenv("SSL_CERT_FILE")
    try:
        settings = load_settings(
            vault_path=vault_dir,
            mail_backend="smtp",
            smtp_host="localhost",
            smtp_port=controller.port,
            **DIRECT_SEND,
            smtp_user=USER,
            smtp_pass=PASSWORD,
            smtp_timeout_seconds=5,
            max_retries=2,
            retry_delay_ms=1,
        )
        with pytest.raises(SendFailed) as caught:
            MailService(settings).send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
        assert "TLS" in caught.value.message and mailbox.received == []
    finally:
        controller.stop()


def test_given_the_connection_dies_after_data_then_the_outcome_is_unknown_and_a_retry_is_refused(smtp):
    mailbox, service = smtp
    mailbox.drop_data = True
    with pytest.raises(SendFailed) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="smtp-1"))
    assert caught.value.details["outcome"] == "unknown" and len(mailbox.received) == 1
    mailbox.drop_data = False
    with pytest.raises(SendFailed) as again:  # SMTP cannot be asked; the human checks Sent
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="smtp-1"))
    assert again.value.details["outcome"] == "unknown" and "Sent folder" in again.value.message
    assert len(mailbox.received) == 1


def test_given_the_smtp_backend_then_read_tools_are_not_supported(smtp):
    _, service = smtp
    with pytest.raises(NotSupported):
        service.list_emails("is:unread", 5)
    with pytest.raises(NotSupported):
        service.get_email("x")
    with pytest.raises(NotSupported):
        service.add_label("x", "Done")
    health = service.health(SERVER_NAME)
    assert health.token == "n/a" and health.account == USER and health.status == "ok"
