"""Who changed a draft is shown where the human looks (issue 20, class 2): a draft an agent writes
through H0's vault server carries the tool and the client in its frontmatter (whatever the agent put
there), and `h0 status` (text and JSON) and the dashboard name the agent, or say the text was changed
outside H0's tools — and say nothing for a draft H0 wrote itself."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import Implementation

from h0.cli import main
from h0.mcp.vault_server import build_vault_server
from tests.pipeline.harness import frontmatter

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("loguru_restored")]
DRAFT_FM = {"to": "bob@example.com", "subject": "Hello", "status": "pending_approval"}


async def write_as(vault_dir: Path, client_name: str, path: str, *, daemon: bool = False, **extra: str) -> None:
    server = build_vault_server(vault_dir, daemon_filing=daemon, state_dir=Path(os.environ["H0_STATE_DIR"]))
    async with Client(server, client_info=Implementation(name=client_name, version="1")) as client:
        result = await client.call_tool(
            "write_note", {"path": path, "frontmatter": {**DRAFT_FM, **extra}, "body": "Hi Bob,\n\nSee you soon.\n"}
        )
        assert not result.is_error, result


def status_json(capsys) -> dict:
    assert main(["status", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


async def test_an_agents_draft_names_the_agent_on_the_note_in_status_and_on_the_dashboard(
    vault_dir, monkeypatch, capsys
):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    # The agent tries to pass its draft off as H0's: the stamp is the server's, not the agent's.
    await write_as(vault_dir, "probe-agent", "Drafts/agent.md", h0_changed_by="H0")
    await write_as(vault_dir, "H0", "Drafts/own.md", daemon=True)
    fm = frontmatter(vault_dir, "Drafts/agent.md")
    assert fm["h0_changed_by"].startswith("write_note from probe-agent 1 at ")
    assert "h0_changed_by" not in frontmatter(vault_dir, "Drafts/own.md")

    details = {d["path"]: d for d in status_json(capsys)["waiting_for_approval_details"]}
    agent = details["Drafts/agent.md"]["last_change"]
    assert agent["agent"] is True and agent["tool"] == "write_note" and agent["client"] == "probe-agent 1"
    assert details["Drafts/own.md"]["last_change"]["by"] == "H0"

    # The human edits the agent's draft in Obsidian: now it was last changed outside H0's tools.
    note = vault_dir / "Drafts/agent.md"
    note.write_text(note.read_text(encoding="utf-8").replace("See you soon.", "See you Friday."), encoding="utf-8")
    assert main(["status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    edited = next(line for line in lines if "Drafts/agent.md" in line)
    assert "last changed outside H0's tools" in edited
    own = next(line for line in lines if "Drafts/own.md" in line)
    assert "last changed" not in own

    await write_as(vault_dir, "probe-agent", "Drafts/agent2.md")
    from h0.config import Settings
    from h0.report.collect import collect_status
    from h0.report.dashboard import render_dashboard

    text = render_dashboard(collect_status(Settings()))
    line = next(line for line in text.splitlines() if "agent2" in line)
    assert (
        "last changed by an agent (write\\_note from the MCP client probe-agent 1)" in line
        or "last changed by an agent (write_note from the MCP client probe-agent 1)" in line
    )
