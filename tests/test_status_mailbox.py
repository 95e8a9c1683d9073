"""`h0 status` and the dashboard name the mailbox (issue 43): for every backend, the owner's account and whether
the sign-in is good, from what is known without a network call — the account the mail sync recorded when it
signed in (h0.mail.owner), the token file or cache, the settings.

Gmail and Outlook sign in and sync against the fakes of tests/fakes (the real google client, msal and H0's
Graph client, the real MailService and ingest handler); `h0 status` runs through the CLI in process; the
dashboard is rendered from the same collection the daemon's writer uses.
"""

# ruff: noqa: F811 — the IMAP fixtures are imported from tests.mail.imap_fixtures, then named as parameters
from __future__ import annotations

import json
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import Settings, load_settings
from h0.handlers.context import HandlerContext
from h0.handlers.ingest import ingest_new_mail
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.report.collect import collect_status
from h0.report.dashboard import DASHBOARD_NOTE, render_dashboard
from h0.report.dashwriter import DashboardWriter
from h0.report.text import render_status
from h0.state import DB_FILE, StateDB, state_dir_for
from h0.vault import AuditLog, Vault
from tests.fakes.fake_authority import FakeAuthority
from tests.fakes.fake_gmail import FakeGmail
from tests.fakes.fake_graph import FakeGraph
from tests.mail.imap_fixtures import imap, imap_server, imap_settings, relay  # noqa: F401 - fixtures
from tests.mail.outlook_fixtures import outlook_values
from tests.pipeline.harness import wait_until

RUNNING = {"running": True, "pid": 4242, "started": "2026-01-01T00:00:00.000Z"}


def status(capsys: pytest.CaptureFixture[str], vault_dir: Path) -> tuple[str, dict]:
    """`h0 status` and `h0 status --json`, as a person and a script run them."""
    assert main(["status", "--vault", str(vault_dir)]) == 0
    text = capsys.readouterr().out
    assert main(["status", "--vault", str(vault_dir), "--json"]) == 0
    return text, json.loads(capsys.readouterr().out)


def mailbox_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith(("Mailbox:", "> [!warning] Mailbox:"))]
    assert len(lines) == 1, text
    return lines[0]


def dashboard(settings: Settings, **kwargs) -> str:
    return render_dashboard(collect_status(settings, **kwargs))


def ingest(settings: Settings) -> None:
    """One pass of the daemon's ingest: the mail sync signs in and syncs."""
    service = MailService(settings)
    try:
        ctx = HandlerContext.local(
            settings,
            Vault(settings.vault_path),
            mail=LocalMail(service),
            audit=AuditLog(settings.vault_path / "Logs", "h0"),
        )
        ingest_new_mail(ctx)
    finally:
        service.close()


# -- Gmail ---------------------------------------------------------------------------------------------------


@pytest.fixture
def gmail_env(monkeypatch: pytest.MonkeyPatch, vault_dir: Path, gmail: FakeGmail, token_path: Path) -> Settings:
    for name, value in {
        "MAIL_BACKEND": "gmail",
        "GMAIL_TOKEN_PATH": str(token_path),
        "GMAIL_API_ENDPOINT": gmail.api_endpoint,
        "GMAIL_TOKEN_URI": gmail.token_uri,
        "MAX_RETRIES": "0",
    }.items():
        monkeypatch.setenv(name, value)
    return load_settings(vault_path=vault_dir)


def test_gmail_before_any_sync_is_signed_in_not_yet_synced_and_names_the_command(gmail_env, vault_dir, capsys):
    """Given a token.json and no sync yet, then status says signed in, not yet synced, run `h0 watch` — without
    asking Gmail anything and without creating H0's state database."""
    text, data = status(capsys, vault_dir)
    assert mailbox_line(text) == "Mailbox: gmail — signed in, not yet synced: run `h0 watch`"
    box = data["mailbox"]
    assert box["backend"] == "gmail" and box["account"] is None and box["sign_in"] == "valid"
    assert box["state"] == "not_synced" and box["next_step"] == "h0 watch" and box["confirmed_at"] is None
    assert "Mailbox: gmail — signed in, not yet synced: run `h0 watch`" in dashboard(gmail_env).splitlines()
    assert not (state_dir_for(vault_dir, gmail_env.h0_state_dir) / DB_FILE).exists()


def test_gmail_while_the_daemon_runs_but_has_not_synced_names_no_command(gmail_env):
    box = collect_status(gmail_env, live=RUNNING)["mailbox"]
    assert box["state"] == "not_synced" and box["next_step"] is None
    assert "Mailbox: gmail — signed in, not yet synced: the running daemon signs in at its next poll" in dashboard(
        gmail_env, live=RUNNING
    )


def test_gmail_without_a_token_is_not_signed_in_and_names_h0_auth_gmail(gmail_env, token_path, vault_dir, capsys):
    token_path.unlink()
    text, data = status(capsys, vault_dir)
    assert mailbox_line(text) == "Mailbox: gmail — not signed in: run `h0 auth gmail`"
    assert data["mailbox"]["sign_in"] == "missing" and data["mailbox"]["next_step"] == "h0 auth gmail"
    assert "> [!warning] Mailbox: gmail — not signed in: run `h0 auth gmail`" in dashboard(gmail_env)


def test_gmail_after_a_sync_names_the_address_of_the_profile(gmail_env, gmail, vault_dir, capsys):
    """Given one ingest pass (users.getProfile, then the catch-up), then status and the dashboard name the
    address Gmail's profile gave, confirmed by the sync; status itself calls Gmail no more."""
    gmail.add_message(subject="Hello")
    ingest(gmail_env)
    calls = len(gmail.requests)
    text, data = status(capsys, vault_dir)
    assert len(gmail.requests) == calls  # offline: nothing asked of Gmail
    line = mailbox_line(text)
    assert line.startswith(f"Mailbox: {gmail.address} (gmail) — signed in, confirmed by the mail sync ")
    box = data["mailbox"]
    assert (box["account"], box["account_from"], box["state"]) == (gmail.address, "profile", "ok")
    assert box["confirmed_at"] and box["next_step"] is None
    assert any(
        ln.startswith(f"Mailbox: {gmail.address} (gmail) — signed in") for ln in dashboard(gmail_env).splitlines()
    )


def test_gmail_a_refused_sign_in_is_said_with_the_command_and_ends_when_signed_in_again(
    gmail_env, gmail, vault_dir, token_path, capsys
):
    """Hostile world: Google revokes the refresh token. The sync's refusal is recorded; status says so with the
    reason and `h0 auth gmail`, the dashboard with the command and no provider text; after a new sign-in, the
    next sync's confirmation ends it."""
    ingest(gmail_env)
    gmail.revoke_refresh_token()
    gmail.write_token(token_path, expired=True)
    ingest(gmail_env)
    text, data = status(capsys, vault_dir)
    box = data["mailbox"]
    assert box["state"] == "refused" and box["next_step"] == "h0 auth gmail" and box["refused_at"]
    assert "revoked" in box["refusal"]
    assert mailbox_line(text).endswith(f"({box['refusal']}): run `h0 auth gmail`")
    shown = mailbox_line(dashboard(gmail_env))
    assert shown.startswith(f"> [!warning] Mailbox: {gmail.address} (gmail) — the provider refused the sign-in ")
    assert shown.endswith(": run `h0 auth gmail`") and "revoked" not in shown
    gmail.refresh_revoked = False
    gmail.write_token(token_path)
    ingest(gmail_env)
    assert collect_status(gmail_env)["mailbox"]["state"] == "ok"


def test_the_daemon_s_dashboard_names_the_account_once_the_sync_signed_in(gmail_env, gmail, vault_dir):
    """Given the daemon's dashboard writer showing "not yet synced", when the sync signs in (nothing new in the
    mailbox, so no note, no audit line, no signal), then the dashboard names the account within its poll."""
    writer = DashboardWriter(
        gmail_env,
        state_db=StateDB.for_vault(vault_dir, gmail_env.h0_state_dir),
        live=lambda: RUNNING,
        poll_interval=0.05,
        min_interval=0.05,
        briefing=False,
    )
    writer.start()
    try:
        page = vault_dir / DASHBOARD_NOTE
        assert wait_until(lambda: page.exists() and "not yet synced" in page.read_text(), timeout=10)
        ingest(gmail_env)
        assert wait_until(lambda: f"Mailbox: {gmail.address} (gmail) — signed in" in page.read_text(), timeout=10)
    finally:
        writer.stop()


# -- Outlook -------------------------------------------------------------------------------------------------


@pytest.fixture
def outlook_env(
    monkeypatch: pytest.MonkeyPatch, vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, outlook_token: Path
) -> Settings:
    for name, value in outlook_values(vault_dir, graph, authority, outlook_token).items():
        monkeypatch.setenv(name.upper(), str(value))
    monkeypatch.setenv("MAX_RETRIES", "0")
    return load_settings()


def test_outlook_before_any_sync_names_the_account_of_the_sign_in(outlook_env, graph, vault_dir, capsys):
    """Given `h0 auth outlook`'s token cache and no sync, then the account is the one msal's cache names."""
    calls = len(graph.requests)
    text, data = status(capsys, vault_dir)
    assert len(graph.requests) == calls
    expected = f"Mailbox: {graph.address} (outlook, as signed in) — signed in, not yet synced: run `h0 watch`"
    assert mailbox_line(text) == expected
    box = data["mailbox"]
    assert (box["account"], box["account_from"], box["sign_in"]) == (graph.address, "sign_in", "valid")
    assert expected in dashboard(outlook_env).splitlines()


def test_outlook_after_a_sync_names_the_address_graph_s_me_gave(outlook_env, graph, vault_dir, capsys):
    """The mailbox's own address (/me mail) once the sync signed in — here not the sign-in's user name."""
    graph.address = "ann.rivera@contoso.example"
    ingest(outlook_env)
    text, data = status(capsys, vault_dir)
    assert mailbox_line(text).startswith(
        "Mailbox: ann.rivera@contoso.example (outlook) — signed in, confirmed by the mail sync "
    )
    box = data["mailbox"]
    assert (box["account"], box["account_from"], box["state"]) == ("ann.rivera@contoso.example", "profile", "ok")
    assert "Mailbox: ann.rivera@contoso.example (outlook) — signed in" in dashboard(outlook_env)


@pytest.mark.parametrize(
    "answer",
    [
        "ann@contoso.example\n> [!success] All good\n[[Secret note]]",  # line breaks, a callout, a link
        "x" * 400 + "@contoso.example",  # a screenful
    ],
)
def test_outlook_a_hostile_profile_address_names_no_account(outlook_env, graph, vault_dir, capsys, answer):
    """Hostile input: Graph's /me answers with markup and line breaks, or a screenful. It is not recorded as the
    account (the sign-in's name stays); nothing of it reaches status or the dashboard."""
    signed_in = graph.address
    graph.address = answer
    ingest(outlook_env)
    text, data = status(capsys, vault_dir)
    assert data["mailbox"]["account"] == signed_in and data["mailbox"]["state"] == "ok"
    page = dashboard(outlook_env)
    for shown in (text, json.dumps(data), page):
        assert "All good" not in shown and "Secret note" not in shown and "x" * 400 not in shown


def test_a_profile_address_with_markup_is_inert_on_the_dashboard(outlook_env, graph):
    """An address-shaped answer carrying a Markdown link is kept, and shown escaped: no link, no embed."""
    graph.address = "[ann](https://evil.example)@contoso.example"
    ingest(outlook_env)
    line = mailbox_line(dashboard(outlook_env))
    assert "](https://" not in line and "[ann]" not in line and "evil" in line


# -- IMAP, SMTP and the outbox: settings only -----------------------------------------------------------------


def test_imap_names_the_configured_address_and_server_without_a_network_call(monkeypatch, vault_dir, capsys):
    """IMAP is not asked (its host does not even resolve): SMTP_FROM's address and IMAP_HOST, not yet synced."""
    for name, value in {
        "MAIL_BACKEND": "imap",
        "IMAP_HOST": "imap.invalid",
        "IMAP_USER": "ann",
        "IMAP_PASS": "secret",
        "SMTP_HOST": "smtp.invalid",
        "SMTP_FROM": "Ann Rivera <ann@example.com>",
    }.items():
        monkeypatch.setenv(name, value)
    text, data = status(capsys, vault_dir)
    expected = "Mailbox: ann@example.com (imap at imap.invalid) — not yet synced: run `h0 watch`"
    assert mailbox_line(text) == expected
    box = data["mailbox"]
    assert (box["account"], box["account_from"], box["server"], box["sign_in"]) == (
        "ann@example.com",
        "settings",
        "imap.invalid",
        "n/a",
    )
    assert expected in dashboard(load_settings()).splitlines()
    assert "secret" not in text and "secret" not in json.dumps(data)


def test_imap_after_a_sync_against_a_real_server_is_confirmed(vault_dir, imap, relay):
    """Against a real IMAP server (pymap, and Dovecot when installed): once the sync logged in, the configured
    address is confirmed; the account the sync keeps (user at host) is not what is shown."""
    settings = imap_settings(vault_dir, imap, relay[0])
    assert collect_status(settings)["mailbox"]["state"] == "not_synced"
    ingest(settings)
    status_now = collect_status(settings)
    box = status_now["mailbox"]
    assert (box["state"], box["account"], box["server"]) == ("ok", imap.user, imap.host) and box["confirmed_at"]
    expected = f"Mailbox: {imap.user} (imap at {imap.host}) — signed in, confirmed by the mail sync "
    assert render_status(status_now).splitlines()[1].startswith(expected)


def test_imap_user_alone_is_the_account(monkeypatch, vault_dir, capsys):
    monkeypatch.setenv("MAIL_BACKEND", "imap")
    monkeypatch.setenv("IMAP_HOST", "imap.invalid")
    monkeypatch.setenv("IMAP_USER", "bo@example.org")
    _, data = status(capsys, vault_dir)
    assert data["mailbox"]["account"] == "bo@example.org"


def test_the_outbox_names_the_from_it_writes(monkeypatch, vault_dir, capsys):
    monkeypatch.setenv("OWNER_EMAILS", "ann@example.com, ann@home.example")
    text, data = status(capsys, vault_dir)
    expected = "Mailbox: ann@example.com (outbox) — nothing is sent: each message is written to Outbox/"
    assert mailbox_line(text) == expected
    assert data["mailbox"]["state"] == "local" and data["mailbox"]["account_from"] == "settings"
    assert expected in dashboard(load_settings(vault_path=vault_dir)).splitlines()


def test_the_outbox_without_an_address_of_the_owner_says_how_to_set_one(vault_dir, capsys):
    text, data = status(capsys, vault_dir)
    assert mailbox_line(text) == (
        "Mailbox: outbox — nothing is sent: each message is written to Outbox/ "
        "(no address of yours is known: set OWNER_EMAILS)"
    )
    assert data["mailbox"]["account"] is None
