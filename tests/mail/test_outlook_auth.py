"""Microsoft sign-in (issue 43): `h0 auth outlook` runs msal's device code flow against a local HTTPS authority,
the token cache is written atomically and owner-only, tokens refresh silently, a lost grant names the command,
and `h0 doctor` checks the sign-in, its permissions and the mailbox."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.errors import AuthRequired
from h0.mail.providers.outlook_auth import IMAP_SCOPES, MicrosoftSignIn
from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_authority import FakeAuthority
from tests.fakes.fake_graph import FakeGraph
from tests.mail.outlook_fixtures import outlook_env, outlook_values, sign_in


def test_h0_auth_outlook_prints_the_url_and_code_then_writes_the_cache_0600(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, tmp_path: Path
):
    """Given a user who signs in on another device a moment after the code is shown, when `h0 auth outlook`
    runs (a real process, msal against the HTTPS authority), then it prints the URL and the code, waits,
    and writes the token cache readable by the owner only, with nothing half-written beside it."""
    authority.approve_next, authority.interval = False, 1
    token = tmp_path / "secrets" / "outlook_token.json"
    child = subprocess.Popen(
        [H0_BIN, "auth", "outlook"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(**outlook_env(vault_dir, graph, authority, token)),
    )
    try:
        assert child.stdout is not None
        lines = [child.stdout.readline(), child.stdout.readline()]
        assert "https://microsoft.com/devicelogin" in lines[1] and "enter the code" in lines[1]
        assert not token.exists()  # still waiting for the user
        authority.approve()
        out, err = child.communicate(timeout=60)
    finally:
        child.kill() if child.poll() is None else None
    assert child.returncode == 0, err
    assert f"Signed in as {graph.address}" in out
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert sorted(p.name for p in token.parent.iterdir()) == ["outlook_token.json"]
    cache = json.loads(token.read_text())
    assert cache["RefreshToken"] and cache["Account"]
    scopes = " ".join(v["target"] for v in cache["AccessToken"].values())
    assert all(s in scopes for s in ("Mail.ReadWrite", "Mail.Send", "User.Read"))


def test_an_unknown_client_id_is_said_and_nothing_is_written(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, tmp_path: Path
):
    token = tmp_path / "outlook_token.json"
    env = subprocess_env(**outlook_env(vault_dir, graph, authority, token, OUTLOOK_CLIENT_ID="not-registered"))
    result = subprocess.run([H0_BIN, "auth", "outlook"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "did not start the sign-in" in result.stderr and "unknown client" in result.stderr
    assert not token.exists()


def test_imap_scopes_are_asked_for_imap_auth(vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, tmp_path):
    settings = load_settings(
        **{
            **outlook_values(vault_dir, graph, authority, tmp_path / "t.json"),
            "mail_backend": "imap",
            "imap_auth": "oauth2",
        }
    )
    signed = MicrosoftSignIn.from_settings(settings)
    assert signed.scopes == list(IMAP_SCOPES)
    signed.sign_in(lambda _: None)
    assert signed.granted_scopes() >= {"imap.accessasuser.all", "smtp.send"} and signed.access_token()


def test_a_short_lived_token_is_refreshed_silently_and_persisted(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, tmp_path: Path
):
    """msal refreshes a token about to expire before it is used (no 401 round trip); the cache is rewritten."""
    authority.access_token_seconds = 60  # msal renews anything within 5 minutes of expiry
    settings = load_settings(**outlook_values(vault_dir, graph, authority, tmp_path / "t.json"))
    sign_in(settings)
    before = (tmp_path / "t.json").read_text()
    fresh = MicrosoftSignIn.from_settings(settings)
    first = fresh.access_token()
    assert authority.refreshes == 1 and (tmp_path / "t.json").read_text() != before
    assert fresh.access_token() != first and authority.refreshes == 2
    assert stat.S_IMODE((tmp_path / "t.json").stat().st_mode) == 0o600


def test_a_revoked_grant_is_auth_required_naming_the_command_until_a_new_sign_in(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, tmp_path: Path
):
    authority.access_token_seconds = 60
    settings = load_settings(**outlook_values(vault_dir, graph, authority, tmp_path / "t.json"))
    sign_in(settings)
    authority.revoke()
    signed = MicrosoftSignIn.from_settings(settings)
    with pytest.raises(AuthRequired) as caught:
        signed.access_token()
    assert caught.value.message == "Run `h0 auth outlook` to sign in to Microsoft again"
    assert "revoked" in caught.value.details["reason"] and signed.state() == "revoked"
    asked = authority.refreshes
    with pytest.raises(AuthRequired):
        signed.access_token()
    assert authority.refreshes == asked  # known lost: not asked again until the cache changes
    sign_in(settings)
    assert signed.access_token() and signed.state() == "expired_refreshable"  # 60 s tokens: renewed at each use


def test_a_corrupt_or_missing_cache_is_auth_required(vault_dir, graph, authority, tmp_path):
    settings = load_settings(**outlook_values(vault_dir, graph, authority, tmp_path / "t.json"))
    with pytest.raises(AuthRequired) as missing:
        MicrosoftSignIn.from_settings(settings).access_token()
    assert missing.value.details["reason"] == "no sign-in yet"
    (tmp_path / "t.json").write_text("{not json")
    with pytest.raises(AuthRequired) as corrupt:
        MicrosoftSignIn.from_settings(settings).access_token()
    assert "unreadable" in corrupt.value.details["reason"]


def test_doctor_checks_the_sign_in_the_permissions_and_the_mailbox(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, outlook_token: Path
):
    env = subprocess_env(**outlook_env(vault_dir, graph, authority, outlook_token))
    result = subprocess.run([H0_BIN, "doctor", "--no-servers"], env=env, capture_output=True, text=True, timeout=60)
    assert f"signed in as {graph.address}" in result.stdout, result.stdout + result.stderr
    assert "Outlook permissions" in result.stdout and "mail.send" in result.stdout
    assert f"✓ Outlook mailbox — {graph.address}: INBOX, SENT, DRAFT, SPAM, TRASH, Archive" in result.stdout


def test_doctor_names_a_missing_permission_and_the_command(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, tmp_path: Path
):
    authority.granted_scopes = "Mail.ReadWrite User.Read"  # the admin withheld Mail.Send
    token = tmp_path / "t.json"
    sign_in(load_settings(**outlook_values(vault_dir, graph, authority, token)))
    env = subprocess_env(**outlook_env(vault_dir, graph, authority, token))
    result = subprocess.run([H0_BIN, "doctor", "--no-servers"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "missing Mail.Send" in result.stdout and "h0 auth outlook" in result.stdout


def test_a_token_cache_others_can_read_is_a_problem_naming_the_chmod(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, tmp_path: Path
):
    settings = load_settings(**outlook_values(vault_dir, graph, authority, tmp_path / "t.json"))
    sign_in(settings)
    signed = MicrosoftSignIn.from_settings(settings)
    assert signed.problems() == []
    (tmp_path / "t.json").chmod(0o644)
    assert signed.problems() == [
        f"{tmp_path / 't.json'} is readable by other users (mode 644); run: chmod 600 {tmp_path / 't.json'}"
    ]
