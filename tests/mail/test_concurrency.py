"""Concurrent tool calls on one session: the SDK runs them in worker threads, httplib2 is not
thread-safe, so each thread must get its own connection — and every answer its own call's."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

from h0.mcp.mail_server import build_mail_server
from tests.mail.conftest import audit_records, drive_concurrently

pytestmark = pytest.mark.anyio


async def test_given_concurrent_sends_and_reads_on_one_session_then_none_cross_and_each_thread_has_its_own_http(
    gmail_settings, gmail, vault_dir
):
    server = build_mail_server(gmail_settings)
    async with Client(server) as client:
        await drive_concurrently(client, gmail, 12)
    assert server.mail.backend.http_count > 1, "calls ran in several threads, each with its own Http"
    assert len(audit_records(vault_dir, "pre_send_audit")) == len(audit_records(vault_dir, "email_sent")) == 12


async def test_given_the_same_key_sent_concurrently_then_it_goes_out_once(gmail_settings, gmail):
    """Given six calls with one idempotency key at once, then one message goes out; each other call is
    answered at once — already sent (with the same message), or still being sent (look again) — never
    made to wait for the first."""
    async with Client(build_mail_server(gmail_settings)) as client:
        results: list[dict] = []

        async def send() -> None:
            result = await client.call_tool(
                "send_email", {"to": "bob@example.com", "subject": "once", "body": "b", "idempotency_key": "same"}
            )
            results.append(json.loads(result.content[0].text) if result.is_error else result.structured_content)

        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(send)
    assert len(gmail.sent) == 1
    sent = [r for r in results if "message_id" in r]
    assert [r["already_sent"] for r in sent].count(False) == 1
    assert {r["message_id"] for r in sent} == {gmail.sent[0].id}
    waiting = [r for r in results if "error" in r]
    assert len(sent) + len(waiting) == 6
    assert all(r["details"]["reason"] == "still_sending" and r["details"]["then"] == "look_again" for r in waiting)


async def test_given_a_cap_and_concurrent_sends_then_the_cap_holds(vault_dir, gmail, token_path):
    from tests.mail.conftest import gmail_settings_for

    settings = gmail_settings_for(vault_dir, gmail, token_path, rate_limit_per_hour=3)
    codes: list[str] = []
    async with Client(build_mail_server(settings)) as client:

        async def send(i: int) -> None:
            result = await client.call_tool("send_email", {"to": "bob@example.com", "subject": f"s{i}", "body": "b"})
            text = result.content[0].text if result.content else ""
            codes.append("ok" if not result.is_error else "rate_limited" if "rate_limited" in text else text)

        async with anyio.create_task_group() as group:
            for i in range(8):
                group.start_soon(send, i)
    assert sorted(codes) == ["ok"] * 3 + ["rate_limited"] * 5
    assert len(gmail.sent) == 3
