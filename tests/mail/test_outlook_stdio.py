"""`h0 mcp gmail` with MAIL_BACKEND=outlook as a real stdio process, driven by the mcp client, against the fake
Graph and the fake HTTPS authority (msal in the child trusts it through REQUESTS_CA_BUNDLE)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_authority import FakeAuthority
from tests.fakes.fake_graph import FakeGraph
from tests.mail.conftest import tool_error
from tests.mail.outlook_fixtures import outlook_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**env))


async def test_a_spawned_outlook_server_names_the_account_syncs_reads_and_sends(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, outlook_token: Path
):
    incoming = [graph.add_message(subject=f"incoming {i}", body=f"body {i}") for i in range(4)]
    env = outlook_env(vault_dir, graph, authority, outlook_token, ALLOW_UNAPPROVED_SEND="true")
    async with Client(params(env)) as client:
        health = (await client.call_tool("health_check", {})).structured_content
        assert health["account"] == graph.address and health["backend"] == "outlook" and health["status"] == "ok"
        new = (await client.call_tool("list_new_emails", {"max_results": 10})).structured_content
        assert sorted(e["id"] for e in new["emails"]) == sorted(incoming) and new["mode"] == "catch_up"
        acked = await client.call_tool("ack_new_emails", {"cursor": new["cursor"], "message_ids": incoming})
        assert not acked.is_error and acked.structured_content["labelled"] == 4
        read: dict[int, str] = {}
        sent: dict[int, dict] = {}

        async def get(i: int) -> None:
            result = await client.call_tool("get_email", {"message_id": incoming[i]})
            read[i] = result.structured_content["body"].strip()

        async def send(i: int) -> None:
            result = await client.call_tool(
                "send_email",
                {"to": f"r{i}@example.com", "subject": f"out {i}", "body": "b", "idempotency_key": f"k{i}"},
            )
            assert not result.is_error, result.content[0].text
            sent[i] = result.structured_content

        async with anyio.create_task_group() as group:
            for i in range(4):
                group.start_soon(get, i)
                group.start_soon(send, i)
        missing = await client.call_tool("get_email", {"message_id": "not an id!"})
        assert tool_error(missing)["error"] == "invalid_request"
    assert read == {i: f"body {i}" for i in range(4)}
    by_message_id = {s.header("Message-ID"): s for s in graph.sent}
    assert len(by_message_id) == 4 and len(graph.in_folder("sentitems")) == 4
    for i, result in sent.items():
        assert by_message_id[result["rfc822_message_id"]].header("To") == f"r{i}@example.com"


async def test_a_revoked_grant_is_a_typed_auth_required_naming_the_command(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, outlook_token: Path
):
    graph.expire_tokens()
    authority.revoke()
    env = outlook_env(vault_dir, graph, authority, outlook_token, ALLOW_UNAPPROVED_SEND="true")
    async with Client(params(env)) as client:
        error = tool_error(await client.call_tool("send_email", {"to": "bob@example.com", "subject": "S", "body": "b"}))
        health = (await client.call_tool("health_check", {})).structured_content
    assert error["error"] == "auth_required" and "h0 auth outlook" in error["message"]
    assert health["token"] == "revoked" and health["status"] == "degraded" and graph.sent == []
