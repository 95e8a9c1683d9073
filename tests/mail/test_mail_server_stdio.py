"""`h0 mcp gmail` as a real stdio process, driven by the mcp client, against the fake Gmail."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import audit_records, drive_concurrently, gmail_env, tool_error

pytestmark = pytest.mark.anyio


# Spawn to first answer is mostly Python importing the MCP SDK: a hang guard only, loose enough for a
# shared 2-core machine running other suites (10 s failed there); scripts/bench/bench_vault.py measures start-up.
HANG_GUARD_S = 30.0


def params(**env: str) -> StdioServerParameters:
    return StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**env))


async def test_given_a_spawned_server_then_health_check_answers_within_3_seconds(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """SC-006, with the account confirmed by Gmail. The 3 s are the call's; start-up (mostly
    importing the MCP SDK) is bounded loosely, as it depends on how busy the machine is."""
    spawned = time.monotonic()
    async with Client(params(**gmail_env(vault_dir, gmail, token_path))) as client:
        started = time.monotonic()
        health = await client.call_tool("health_check", {})
        answered = time.monotonic()
    assert health.structured_content["account"] == gmail.address and health.structured_content["status"] == "ok"
    assert answered - started < 3.0, f"health_check took {answered - started:.2f}s"
    assert answered - spawned < HANG_GUARD_S, f"spawn to first answer took {answered - spawned:.2f}s"


async def test_given_an_expired_token_when_a_session_sends_then_the_child_refreshes_persists_and_audits(
    vault_dir: Path, gmail: FakeGmail, tmp_path: Path
):
    token = gmail.write_token(tmp_path / "token.json", expired=True)
    before = json.loads(token.read_text())["token"]
    async with Client(params(**gmail_env(vault_dir, gmail, token))) as client:
        for i in range(3):
            result = await client.call_tool(
                "send_email",
                {"to": "bob@example.com", "subject": f"S{i}", "body": "b", "idempotency_key": f"stdio-{i}"},
            )
            assert not result.is_error, result.content[0].text
        again = await client.call_tool(
            "send_email", {"to": "bob@example.com", "subject": "S0", "body": "b", "idempotency_key": "stdio-0"}
        )
        assert again.structured_content["already_sent"] is True
        missing = await client.call_tool("get_email", {"message_id": "ffffffffffffffff"})
        assert tool_error(missing)["error"] == "not_found"
    assert [s.header("Subject") for s in gmail.sent] == ["S0", "S1", "S2"]
    assert gmail.token_refreshes == 1 and json.loads(token.read_text())["token"] != before
    assert len(audit_records(vault_dir, "pre_send_audit")) == 3 and len(audit_records(vault_dir, "email_sent")) == 3


async def test_given_concurrent_calls_on_one_stdio_session_then_every_answer_matches_its_call(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    async with Client(params(**gmail_env(vault_dir, gmail, token_path))) as client:
        await drive_concurrently(client, gmail, 8)


async def test_given_no_token_then_the_server_still_starts_and_answers_auth_required(
    vault_dir: Path, gmail: FakeGmail, tmp_path: Path
):
    async with Client(params(**gmail_env(vault_dir, gmail, tmp_path / "missing.json"))) as client:
        error = tool_error(await client.call_tool("send_email", {"to": "bob@example.com", "subject": "S", "body": "b"}))
        health = await client.call_tool("health_check", {})
    assert error["error"] == "auth_required" and error["message"] == "Run `h0 auth gmail` to re-authenticate"
    assert health.structured_content["token"] == "missing"


def test_given_the_outbox_backend_then_start_up_says_loudly_on_stderr_that_nothing_is_sent(vault_dir: Path):
    done = subprocess.run(
        [H0_BIN, "mcp", "gmail"],
        input="",
        capture_output=True,
        text=True,
        timeout=30,
        env=subprocess_env(VAULT_PATH=str(vault_dir)),
    )
    assert "NOTHING IS REALLY SENT" in done.stderr
    assert done.stdout == ""  # stdout is the protocol's


async def test_given_sigterm_during_a_send_then_the_send_completes_is_audited_and_the_exit_is_0(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """Contract lifecycle: in-flight work completes, then a clean exit."""
    gmail.delay_next(1.0, path_contains="messages/send")
    env = subprocess_env(**gmail_env(vault_dir, gmail, token_path))
    # Driven by hand over its pipes (raw JSON-RPC lines, then SIGTERM mid-send): Popen starts it and returns.
    child = subprocess.Popen(  # noqa: ASYNC220
        [H0_BIN, "mcp", "gmail"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        for message in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "send_email",
                    "arguments": {"to": "bob@example.com", "subject": "in flight", "body": "b"},
                },
            },
        ):
            child.stdin.write((json.dumps(message) + "\n").encode())
            child.stdin.flush()
        deadline = time.monotonic() + 20
        while not any(path.endswith("messages/send") for _, path in gmail.requests):  # the send is in Gmail's hands
            assert time.monotonic() < deadline
            await anyio.sleep(0.02)
        child.terminate()
        assert await anyio.to_thread.run_sync(lambda: child.wait(timeout=15)) == 0
    finally:
        child.kill()
        child.wait()
    assert [s.header("Subject") for s in gmail.sent] == ["in flight"]
    assert [r["event"] for r in audit_records(vault_dir)] == ["pre_send_audit", "email_sent"]


async def test_given_claude_codes_own_mail_server_sends_an_approved_note_then_status_and_briefing_show_it(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """A send made through another process's mail server (Claude Code's, no daemon running) is the same
    one `email_sent` record every report reads: `h0 status`, the dashboard's data and the briefing."""
    import datetime as dt
    import os

    from h0.config import Settings
    from h0.report.audittail import AuditTail
    from h0.report.briefing import collect_day, render_briefing
    from h0.report.collect import collect_status
    from h0.report.privacy import report_view
    from h0.vault import Vault

    draft = vault_dir / "Approved" / "reply.md"
    draft.write_text("---\nto: Dana <dana@example.com>\ncc: lee@example.org\nsubject: Friday\n---\nFriday works.\n")
    old = time.time() - 120  # approved a while ago: no settle period left
    os.utime(draft, (old, old))
    note_hash = Vault(vault_dir).read_note("Approved/reply.md").hash
    env = gmail_env(vault_dir, gmail, token_path, ALLOW_UNAPPROVED_SEND="false")
    async with Client(params(**env)) as client:
        result = await client.call_tool("send_approved_draft", {"path": "Approved/reply.md", "note_hash": note_hash})
        assert not result.is_error, result.content[0].text
    assert [s.header("Subject") for s in gmail.sent] == ["Friday"]

    (record,) = audit_records(vault_dir, "email_sent")  # one record of the send, the mail server's
    assert record["path"] == "Approved/reply.md" and record["recipients"]["cc"] == ["lee@example.org"]
    settings = Settings(vault_path=vault_dir)
    status = collect_status(settings)
    assert status["totals"]["sends_24h"] == 1
    (send,) = status["recent_sends"]
    assert send["path"] == "Approved/reply.md" and send["recipients"]["to"] == ["dana@example.com"]
    records = AuditTail(vault_dir / "Logs").refresh()
    page = render_briefing(collect_day(dt.date.today(), records, report_view(settings, Vault(vault_dir))), status)
    assert "## Sent (1)" in page and "dana@example.com" in page
