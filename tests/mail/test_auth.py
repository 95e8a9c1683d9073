"""Gmail OAuth against the fake token endpoint, with the real google-auth refresh code."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from h0.errors import AuthRequired
from h0.mail import MailService
from h0.mail.models import DirectSend
from h0.mail.providers.auth import REAUTH_MESSAGE, TokenStore
from h0.mcp.mail_server import SERVER_NAME
from tests.conftest import H0_BIN, ROOT, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import audit_records, gmail_settings_for


def test_given_no_token_json_then_tools_answer_auth_required_and_nothing_is_sent(
    vault_dir: Path, gmail: FakeGmail, tmp_path: Path
):
    service = MailService(gmail_settings_for(vault_dir, gmail, tmp_path / "absent.json"))
    with pytest.raises(AuthRequired) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    assert caught.value.message == REAUTH_MESSAGE
    assert "missing" in caught.value.details["reason"]
    assert gmail.sent == [] and service.backend.token_state() == "missing"
    assert [r["event"] for r in audit_records(vault_dir)] == ["pre_send_audit", "send_failed"]
    assert service.health(SERVER_NAME).token == "missing"


def test_given_an_expired_token_then_it_is_refreshed_at_gmail_token_uri_and_persisted_0600(
    vault_dir: Path, gmail: FakeGmail, tmp_path: Path
):
    token = gmail.write_token(tmp_path / "token.json", expired=True)
    before = json.loads(token.read_text())
    assert TokenStore(token).state() == "expired_refreshable"
    service = MailService(gmail_settings_for(vault_dir, gmail, token))
    gmail.add_message(subject="hello")
    assert service.list_emails("in:inbox", 5).emails[0].subject == "hello"
    assert gmail.token_refreshes == 1
    after = json.loads(token.read_text())
    assert after["token"] != before["token"] and after["expiry"] > before["expiry"]
    # every other field is kept — including the token_uri google-auth ignores anyway
    assert {k: v for k, v in after.items() if k not in ("token", "expiry")} == {
        k: v for k, v in before.items() if k not in ("token", "expiry")
    }
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert not [p for p in token.parent.iterdir() if p.name.endswith(".tmp")]
    assert TokenStore(token).state() == "valid"
    # a restarted server uses the persisted token: no second refresh
    MailService(gmail_settings_for(vault_dir, gmail, token)).list_emails("in:inbox", 1)
    assert gmail.token_refreshes == 1


def test_given_a_revoked_refresh_token_then_auth_required_says_to_re_authenticate(
    vault_dir: Path, gmail: FakeGmail, tmp_path: Path
):
    token = gmail.write_token(tmp_path / "token.json", expired=True)
    gmail.revoke_refresh_token()
    service = MailService(gmail_settings_for(vault_dir, gmail, token))
    with pytest.raises(AuthRequired) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    assert caught.value.message == "Run `h0 auth gmail` to re-authenticate"
    assert "revoked" in caught.value.details["reason"]
    assert gmail.sent == []
    health = service.health(SERVER_NAME)
    assert health.token == "revoked" and health.status == "degraded"
    with pytest.raises(AuthRequired):  # and it stays refused without another round trip
        service.get_email("anything")


def test_given_gmail_rejects_the_access_token_then_it_is_refreshed_once_and_the_call_succeeds(service, gmail):
    msg_id = gmail.add_message(subject="after 401")
    gmail.expire_access_tokens()
    assert service.get_email(msg_id).subject == "after 401"
    assert gmail.token_refreshes == 1


def test_given_many_threads_and_an_expired_token_then_one_refresh_serves_them_all(vault_dir, gmail, tmp_path):
    token = gmail.write_token(tmp_path / "token.json", expired=True)
    service = MailService(gmail_settings_for(vault_dir, gmail, token))
    ids = [gmail.add_message(subject=f"m{i}") for i in range(8)]
    results: dict[int, str] = {}

    def read(i: int) -> None:
        results[i] = service.get_email(ids[i]).subject

    threads = [threading.Thread(target=read, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: f"m{i}" for i in range(8)}
    assert gmail.token_refreshes == 1


@pytest.mark.parametrize("content", ["{not json", "[]", '{"token": "x"}'])
def test_given_a_corrupt_token_json_then_auth_required(vault_dir, gmail, tmp_path, content):
    token = tmp_path / "token.json"
    token.write_text(content)
    service = MailService(gmail_settings_for(vault_dir, gmail, token))
    with pytest.raises(AuthRequired) as caught:
        service.list_emails("in:inbox", 1)
    assert caught.value.message == REAUTH_MESSAGE


def test_given_a_token_readable_by_others_then_health_says_so(vault_dir, gmail, token_path):
    token_path.chmod(0o644)
    health = MailService(gmail_settings_for(vault_dir, gmail, token_path)).health(SERVER_NAME)
    assert any("chmod 600" in p for p in health.problems)


def test_given_no_oauth_client_file_then_h0_auth_gmail_explains_where_to_get_it(tmp_path: Path):
    env = subprocess_env(
        GMAIL_CREDENTIALS_PATH=str(tmp_path / "credentials.json"), GMAIL_TOKEN_PATH=str(tmp_path / "t.json")
    )
    for command in (
        [H0_BIN, "auth", "gmail", "--no-browser"],
        [sys.executable, str(ROOT / "scripts" / "gmail_auth.py"), "--no-browser"],
    ):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
        assert done.returncode == 1
        assert "Desktop app" in done.stderr and "credentials.json" in done.stderr
        assert not (tmp_path / "t.json").exists()
