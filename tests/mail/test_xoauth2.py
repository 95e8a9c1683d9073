"""IMAP and SMTP with OAuth2 (IMAP_AUTH=oauth2, issue 43): XOAUTH2 logins with the token of `h0 auth outlook` (msal
against the fake HTTPS authority) or of `h0 auth gmail`, through imapclient and smtplib as H0 uses them."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.errors import AuthRequired
from h0.mail.providers.imap import ImapBackend
from h0.mail.providers.imap_wire import connect
from h0.mail.providers.outlook_auth import IMAP_SCOPES, MicrosoftSignIn
from h0.mail.providers.smtp import SmtpBackend
from h0.mail.providers.xoauth2 import access_token, provider_of, reauth_command
from tests.fakes.fake_authority import FakeAuthority
from tests.fakes.fake_graph import FakeGraph
from tests.fakes.xoauth2_servers import XOAuth2Imap, xoauth2_relay
from tests.mail.outlook_fixtures import outlook_values


def imap_settings(vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, token: Path, **extra: object):
    values = {
        **outlook_values(vault_dir, graph, authority, token),
        "mail_backend": "imap",
        "imap_auth": "oauth2",
        "imap_host": "127.0.0.1",
        "imap_secure": "none",
        "imap_user": graph.address,
        "smtp_host": "127.0.0.1",
        "smtp_secure": "none",
        "smtp_from": graph.address,
        **extra,
    }
    return load_settings(**values)


@pytest.fixture
def signed_in(vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, tmp_path: Path) -> Path:
    """`h0 auth outlook` with MAIL_BACKEND=imap and IMAP_AUTH=oauth2: the IMAP and SMTP permissions."""
    token = tmp_path / "outlook_token.json"
    settings = imap_settings(vault_dir, graph, authority, token)
    sign = MicrosoftSignIn.from_settings(settings)
    assert sign.scopes == list(IMAP_SCOPES)
    sign.sign_in(lambda _: None)
    return token


def accepted(graph: FakeGraph):
    return lambda token: token in graph.tokens  # the authority hands every token it issues to the fake Graph


def test_imap_logs_in_with_xoauth2_and_reads_inbox(vault_dir, graph, authority, signed_in):
    with XOAuth2Imap(graph.address, accepted(graph)) as server:
        settings = imap_settings(vault_dir, graph, authority, signed_in, imap_port=server.port)
        client = connect(settings, timeout=10)
        try:
            assert client.select_folder("INBOX")[b"UIDVALIDITY"] == 7
        finally:
            client.logout()
        assert ImapBackend(settings).position().cursor == 7 << 32
    assert server.logins and all(ok for _, ok in server.logins)


def test_a_refused_imap_token_is_refreshed_once_then_a_revoked_grant_names_the_command(
    vault_dir, graph, authority, signed_in
):
    with XOAuth2Imap(graph.address, accepted(graph)) as server:
        settings = imap_settings(vault_dir, graph, authority, signed_in, imap_port=server.port)
        graph.expire_tokens()  # the server no longer takes the cached token: one refresh, then in
        connect(settings, timeout=10).logout()
        assert [ok for _, ok in server.logins] == [False, True] and authority.refreshes == 1
        graph.expire_tokens()
        authority.revoke()
        with pytest.raises(AuthRequired) as caught:
            connect(settings, timeout=10)
    assert "h0 auth outlook" in caught.value.message


def test_smtp_sends_with_auth_xoauth2_and_a_refused_token_is_refreshed(vault_dir, graph, authority, signed_in):
    with xoauth2_relay(graph.address, accepted(graph)) as (relay, port):
        backend = SmtpBackend(imap_settings(vault_dir, graph, authority, signed_in, smtp_port=port))
        assert backend.problems() == []  # no SMTP_PASS needed
        message = EmailMessage()
        message["To"], message["Subject"], message["Message-ID"] = "bob@example.com", "hi", "<x1@h0.example>"
        message.set_content("hello")
        backend.send(message)
        graph.expire_tokens()
        del message["Message-ID"]
        message["Message-ID"] = "<x2@h0.example>"
        backend.send(message)
    assert len(relay.received) == 2 and [ok for _, ok in relay.logins] == [True, False, True]


def test_smtp_with_a_revoked_grant_sends_nothing_and_names_the_command(vault_dir, graph, authority, signed_in):
    with xoauth2_relay(graph.address, accepted(graph)) as (relay, port):
        backend = SmtpBackend(imap_settings(vault_dir, graph, authority, signed_in, smtp_port=port))
        graph.expire_tokens()
        authority.revoke()
        message = EmailMessage()
        message["To"], message["Subject"] = "bob@example.com", "hi"
        message.set_content("hello")
        with pytest.raises(AuthRequired) as caught:
            backend.send(message)
    assert "h0 auth outlook" in caught.value.message and relay.received == []


def test_gmail_imap_takes_its_token_from_h0_auth_gmail(vault_dir, gmail, tmp_path):
    settings = load_settings(
        vault_path=vault_dir,
        mail_backend="imap",
        imap_auth="oauth2",
        imap_host="imap.gmail.com",
        imap_user="h0.tester@gmail.com",
        gmail_token_path=gmail.write_token(tmp_path / "token.json", expired=True),
        gmail_token_uri=gmail.token_uri,
    )
    assert provider_of(settings) == "google" and reauth_command(settings) == "h0 auth gmail"
    assert access_token(settings) and gmail.token_refreshes == 1
    gmail.revoke_refresh_token()
    with pytest.raises(AuthRequired) as caught:
        access_token(settings, force_refresh=True)
    assert "h0 auth gmail" in caught.value.message
