"""One factory builds the MCP servers for `h0 mcp vault|gmail` and for the in-process harness (h0.mcp.servers).

Given the daemon's environment (H0_DAEMON_CHILD=1), the in-process vault server files an approved note
out of Approved/ as the daemon's child process does; given a client's environment (.mcp.json), it
refuses. And no other module in h0 builds a server its own way, so the two cannot drift.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from h0.config import load_settings
from h0.mcp.servers import in_process_servers

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
APPROVED = "---\nto: bob@example.com\nsubject: Approved\n---\nExactly what the human approved.\n"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def approved(vault_dir: Path) -> Path:
    path = vault_dir / "Approved/d.md"
    path.write_text(APPROVED)
    return path


async def test_given_the_daemon_s_environment_then_its_vault_server_files_out_of_approved(vault_dir, approved):
    targets = in_process_servers(load_settings(vault_path=vault_dir), {"H0_DAEMON_CHILD": "1"})
    async with Client(targets["vault"].build()) as client:
        moved = await client.call_tool("move_note", {"source": "Approved/d.md", "destination": "Done/"})
    assert not moved.is_error, moved
    assert (vault_dir / "Done/d.md").read_text() == APPROVED and not approved.exists()


async def test_given_a_client_s_environment_then_its_vault_server_refuses_to_file_out_of_approved(vault_dir, approved):
    targets = in_process_servers(load_settings(vault_path=vault_dir), {"H0_DAEMON_CHILD": "0"})
    async with Client(targets["vault"].build()) as client:
        refused = await client.call_tool("move_note", {"source": "Approved/d.md", "destination": "Done/"})
    assert refused.is_error and json.loads(refused.content[0].text)["error"] == "permission_denied"
    assert approved.read_text() == APPROVED


async def test_the_in_process_mail_server_serves_the_settings_backend(vault_dir):
    targets = in_process_servers(load_settings(vault_path=vault_dir, mail_backend="outbox"), {})
    assert set(targets) == {"vault", "mail"}
    async with Client(targets["mail"].build()) as client:
        health = await client.call_tool("health_check", {})
    assert not health.is_error and health.structured_content["backend"] == "outbox"


def test_no_other_module_builds_a_server_its_own_way():
    builders = ("build_vault_server(", "build_mail_server(")
    allowed = {"h0/mcp/vault_server.py", "h0/mcp/mail_server.py", "h0/mcp/servers.py"}
    offenders = [
        f"{rel}: {call}"
        for path in sorted((ROOT / "h0").rglob("*.py"))
        if (rel := path.relative_to(ROOT).as_posix()) not in allowed
        for call in builders
        if call in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
