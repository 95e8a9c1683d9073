"""Fixtures and helpers for the mail tests: a running fake Gmail, a token for it, settings, a service."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from h0.config import Settings, load_settings
from h0.mail import MailService
from tests.fakes.fake_gmail import FakeGmail

# Small delays keep the retry tests fast; the policy's shape is what they check.
FAST_RETRIES = {"max_retries": 3, "retry_delay_ms": 1, "retry_backoff_multiplier": 2.0}
# These tests drive the send path (MIME, retries, caps, exactly once) with free content
# through send_email, which a user must opt into; tests/security checks it is off by default.
DIRECT_SEND = {"allow_unapproved_send": True}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def gmail_settings(vault_dir: Path, gmail: FakeGmail, token_path: Path) -> Settings:
    return gmail_settings_for(vault_dir, gmail, token_path)


def gmail_settings_for(vault_dir: Path, gmail: FakeGmail, token_path: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "vault_path": vault_dir,
        "mail_backend": "gmail",
        "gmail_token_path": token_path,
        "gmail_api_endpoint": gmail.api_endpoint,
        "gmail_token_uri": gmail.token_uri,
        **FAST_RETRIES,
        **DIRECT_SEND,
    }
    values.update(overrides)
    return load_settings(**values)


def gmail_env(vault_dir: Path, gmail: FakeGmail, token_path: Path, **overrides: str) -> dict[str, str]:
    """Environment variables for an `h0 mcp gmail` child process against the fake."""
    env = {
        "VAULT_PATH": str(vault_dir),
        "MAIL_BACKEND": "gmail",
        "GMAIL_TOKEN_PATH": str(token_path),
        "GMAIL_API_ENDPOINT": gmail.api_endpoint,
        "GMAIL_TOKEN_URI": gmail.token_uri,
        "MAX_RETRIES": "3",
        "RETRY_DELAY_MS": "1",
        "LOG_LEVEL": "WARNING",
        "ALLOW_UNAPPROVED_SEND": "true",
    }
    env.update(overrides)
    return env


@pytest.fixture
def service(gmail_settings: Settings) -> Iterator[MailService]:
    mail = MailService(gmail_settings)
    yield mail
    mail.close()


def dead_pid() -> int:
    """The pid of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def audit_records(vault_dir: Path, event: str | None = None) -> list[dict]:
    records = []
    for path in sorted((vault_dir / "Logs").glob("gmail_mcp_*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if event is None or record["event"] == event:
                records.append(record)
    return records


def tool_error(result) -> dict:
    """The typed error of a failed tool call, checked for the shape every client relies on."""
    assert result.is_error, result
    assert result.structured_content is None
    text = result.content[0].text
    assert "Traceback" not in text
    body = json.loads(text)
    assert set(body) >= {"error", "message", "details"}
    return body


async def drive_concurrently(client: Client, gmail, n: int) -> None:
    """Given n received messages, when n get_email and n send_email calls run at once on one
    session, then every answer belongs to its own call."""
    incoming = {i: gmail.add_message(subject=f"incoming {i}", body=f"body {i}") for i in range(n)}
    read: dict[int, str] = {}
    sent: dict[int, dict] = {}

    async def get(i: int) -> None:
        result = await client.call_tool("get_email", {"message_id": incoming[i]})
        assert not result.is_error, result.content[0].text
        read[i] = result.structured_content["body"].strip()

    async def send(i: int) -> None:
        result = await client.call_tool(
            "send_email",
            {"to": f"r{i}@example.com", "subject": f"out {i}", "body": f"b{i}", "idempotency_key": f"c-{i}"},
        )
        assert not result.is_error, result.content[0].text
        sent[i] = result.structured_content

    async with anyio.create_task_group() as group:
        for i in range(n):
            group.start_soon(get, i)
            group.start_soon(send, i)

    assert read == {i: f"body {i}" for i in range(n)}
    by_id = {s.id: s for s in gmail.sent}
    assert len(by_id) == n
    for i, result in sent.items():
        assert by_id[result["message_id"]].header("To") == f"r{i}@example.com"
        assert by_id[result["message_id"]].header("Message-ID") == result["rfc822_message_id"]
