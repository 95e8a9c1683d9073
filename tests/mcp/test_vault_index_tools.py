"""The vault server's search, related notes and people tools over the index (issue 21), as a real
`h0 mcp vault` process: fresh within an event, ranked and paged, private notes kept from MCP
clients; and no hostile file (a FIFO named *.md) can hold up a later call (issue 20, class 8)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from h0.mcp.vault_server import build_vault_server
from tests.conftest import H0_BIN, subprocess_env
from tests.pipeline.harness import wait_until

pytestmark = pytest.mark.anyio


def note(vault_dir: Path, rel: str, body: str, **frontmatter: str) -> None:
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "".join(f"{k}: {v}\n" for k, v in frontmatter.items())
    path.write_text(f"---\n{head}---\n{body}" if frontmatter else body)


def params(vault_dir: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=H0_BIN,
        args=["mcp", "vault"],
        env=subprocess_env(VAULT_PATH=str(vault_dir), H0_STATE_DIR=os.environ["H0_STATE_DIR"], **env),
    )


def error_of(result) -> dict:
    assert result.is_error
    return json.loads(result.content[0].text)


def vault_with_people(vault_dir: Path) -> None:
    note(vault_dir, "People/Dana Rivera.md", "Head of ops at Acme. Prefers Friday calls.\n", email="dana@acme.example")
    note(vault_dir, "Projects/Atlas.md", "Atlas migration for Acme, budget 40k. Contact [[Dana Rivera]].\n")
    note(vault_dir, "Done/lunch.md", "Lunch menu for Tuesday.\n")
    note(vault_dir, "Journal/2026-11-24.md", "Worried about the Atlas budget.\n")
    note(vault_dir, "Done/salary.md", "Atlas bonus numbers.\n", private="true")


async def test_search_is_fresh_ranked_paged_and_keeps_private_notes_from_mcp_clients(vault_dir: Path):
    vault_with_people(vault_dir)
    async with Client(params(vault_dir, PRIVATE_FOLDERS="Journal")) as client:
        found = (await client.call_tool("search_notes", {"query": "atlas"})).structured_content
        assert {n["path"] for n in found["notes"]} == {"Projects/Atlas.md"}  # not Journal/ nor private: true
        # An agent's write is found at once; a file written behind the server's back once its event arrives.
        await client.call_tool("write_note", {"path": "Drafts/a.md", "frontmatter": {}, "body": "atlas draft\n"})
        first = (await client.call_tool("search_notes", {"query": "atlas", "limit": 1})).structured_content
        assert first["truncated"] is True and len(first["notes"]) == 1
        note(vault_dir, "Done/late.md", "atlas, written outside\n")

        async def all_paths() -> set[str]:
            page = (await client.call_tool("search_notes", {"query": "atlas", "limit": 50})).structured_content
            return {n["path"] for n in page["notes"]}

        seen = set()
        for _ in range(200):
            seen = await all_paths()
            if "Done/late.md" in seen:
                break
        assert seen == {"Projects/Atlas.md", "Drafts/a.md", "Done/late.md"}
        second = (
            await client.call_tool("search_notes", {"query": "atlas", "limit": 2, "offset": 2})
        ).structured_content
        assert len(second["notes"]) == 1 and second["truncated"] is False and second["offset"] == 2
        refused = error_of(await client.call_tool("read_note", {"path": "Journal/2026-11-24.md"}))
        assert refused["error"] == "permission_denied" and "private" in refused["message"]


async def test_related_notes_and_people_by_address_with_why(vault_dir: Path):
    vault_with_people(vault_dir)
    email = (
        "From: Dana Rivera <dana@acme.example>\nSubject: Atlas budget\n\nHi, can we go over the Atlas budget on Friday?"
    )
    async with Client(params(vault_dir, PRIVATE_FOLDERS="Journal")) as client:
        related = (await client.call_tool("related_notes", {"text": email, "limit": 5})).structured_content["notes"]
        people = (await client.call_tool("notes_for_address", {"address": "Dana@Acme.example"})).structured_content
        bad = error_of(await client.call_tool("notes_for_address", {"address": "not an address"}))
        both = error_of(await client.call_tool("related_notes", {}))
    assert [r["path"] for r in related][:2] == ["People/Dana Rivera.md", "Projects/Atlas.md"]
    assert "about dana@acme.example" in related[0]["why"]
    assert any("atlas" in why for why in related[1]["why"])
    assert all(r["path"] not in ("Journal/2026-11-24.md", "Done/salary.md") for r in related)
    assert people == {"address": "dana@acme.example", "notes": ["People/Dana Rivera.md"]}
    assert bad["error"] == both["error"] == "invalid_request"


async def test_the_daemons_own_server_reads_private_notes_for_local_work(vault_dir: Path):
    vault_with_people(vault_dir)
    async with Client(build_vault_server(vault_dir, daemon_filing=True, private_folders="Journal")) as client:
        read = await client.call_tool("read_note", {"path": "Journal/2026-11-24.md"})
        found = (await client.call_tool("search_notes", {"query": "atlas"})).structured_content
    assert not read.is_error
    assert {n["path"] for n in found["notes"]} >= {"Journal/2026-11-24.md", "Done/salary.md"}


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_a_fifo_named_md_cannot_hold_up_a_later_call(vault_dir: Path):
    os.mkfifo(vault_dir / "Drafts/trap.md")
    note(vault_dir, "Drafts/ok.md", "fine\n")
    async with Client(params(vault_dir)) as client:
        trapped = error_of(await client.call_tool("read_note", {"path": "Drafts/trap.md"}))
        many = (await client.call_tool("read_notes", {"paths": ["Drafts/trap.md", "Drafts/ok.md"]})).structured_content
        listed = (await client.call_tool("list_notes", {"directory": "Drafts"})).structured_content
        found = (await client.call_tool("search_notes", {"query": "fine"})).structured_content
    assert trapped["error"] == "invalid_request" and "not a regular file" in trapped["message"]
    assert [n["path"] for n in many["notes"]] == ["Drafts/ok.md"] and many["errors"][0]["path"] == "Drafts/trap.md"
    assert listed["notes"] == ["Drafts/ok.md"]
    assert [n["path"] for n in found["notes"]] == ["Drafts/ok.md"]
    assert wait_until(lambda: (vault_dir / "Drafts/trap.md").exists())
