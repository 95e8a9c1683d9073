"""Shared fixtures: a real temporary vault, settings pointing at it, and a clean environment."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import mcp.client.stdio  # noqa: F401 - see below
import pytest

from h0.vault import Vault, init_vault

# mcp.client.stdio binds `errlog=sys.stderr` when it is first imported. Imported here, that is
# pytest's global capture (a real file); imported lazily inside a test using capsys, it would be
# capsys's buffer, which has no fileno, and every later MCP server spawn in that worker would fail.

ROOT = Path(__file__).resolve().parent.parent
H0_BIN = str(Path(sys.executable).with_name("h0"))

# Settings must come from each test, never from a developer's own .env or shell.
_H0_ENV = (
    "VAULT_PATH", "MAIL_BACKEND", "GMAIL_TOKEN_PATH", "GMAIL_CREDENTIALS_PATH", "GMAIL_API_ENDPOINT",
    "GMAIL_TOKEN_URI", "GMAIL_QUERY", "GMAIL_POLL_SECONDS", "SMTP_HOST", "SMTP_PORT", "SMTP_SECURE",
    "SMTP_USER", "SMTP_PASS", "RATE_LIMIT_PER_HOUR", "RATE_LIMIT_PER_DAY", "MAX_RETRIES", "RETRY_DELAY_MS",
    "RETRY_BACKOFF_MULTIPLIER", "SWEEP_INTERVAL_SECONDS", "LLM_PROVIDER", "LLM_MODEL", "LLM_API_KEY",
    "LLM_BASE_URL", "LOG_LEVEL", "SMTP_FROM", "SMTP_TIMEOUT_SECONDS", "GMAIL_INGESTED_LABEL",
    "APPROVAL_SETTLE_SECONDS", "ALLOW_UNAPPROVED_SEND", "H0_STATE_DIR", "H0_DAEMON_CHILD",
    "DASHBOARD_ENABLED", "BRIEFINGS_ENABLED",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _H0_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("H0_ENV_FILE", "")
    # H0's state database and secret live outside the vault; each test gets its own.
    monkeypatch.setenv("H0_STATE_DIR", str(tmp_path / "h0-state"))
    # A .env in the working directory must not leak into tests either.
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    init_vault(root)
    return root


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    return Vault(vault_dir)


@pytest.fixture
def gmail():
    """A running fake Gmail (tests/fakes/fake_gmail.py), stopped after the test."""
    from tests.fakes.fake_gmail import FakeGmail

    with FakeGmail() as fake:
        yield fake


@pytest.fixture
def token_path(gmail, tmp_path: Path) -> Path:
    """A token.json the fake Gmail accepts."""
    folder = tmp_path / "secrets"
    folder.mkdir()
    return gmail.write_token(folder / "token.json")


def subprocess_env(**overrides: str) -> dict[str, str]:
    """An environment for child processes: no H0 settings inherited, then the overrides."""
    env = {k: v for k, v in os.environ.items() if k not in _H0_ENV}
    env["H0_ENV_FILE"] = ""
    env.update(overrides)
    return env
