"""The vault MCP server, in memory: every tool, typed results, typed errors, the approval guard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from h0.mcp.vault_server import build_vault_server
from h0.vault import AuditLog
from tests.mcp.conftest import error_of
from tests.mcp.contracts import check_contract

pytestmark = pytest.mark.anyio


# Every tool the vault server offers (the MCP Inspector's interop test checks the same set).
VAULT_TOOLS = {
    "read_note",
    "read_notes",
    "write_note",
    "update_frontmatter",
    "list_notes",
    "move_note",
    "apply_changes",
    "search_notes",
    "related_notes",
    "notes_for_address",
    "draft_context",
    "revise_draft",
    "free_slots",
    "health_check",
}


async def test_contract_of_every_vault_tool_is_pinned(client):
    tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == VAULT_TOOLS
    for tool in tools:
        assert tool.output_schema and tool.input_schema and tool.annotations
    check_contract("vault_tools", tools)


async def test_annotations_say_which_tools_only_read(client):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("read_note", "read_notes", "list_notes", "search_notes", "health_check"):
        assert tools[name].annotations.read_only_hint is True
    assert tools["write_note"].annotations.read_only_hint is False
    assert tools["write_note"].annotations.destructive_hint is True
    assert tools["move_note"].annotations.read_only_hint is False
    assert tools["apply_changes"].annotations.read_only_hint is False
    assert tools["apply_changes"].annotations.destructive_hint is True


async def test_given_a_written_note_when_read_then_it_round_trips(client):
    """US3-1: write_note then read_note returns identical content."""
    fm = {"to": "bob@example.com", "subject": "Re: hi", "tags": ["x"], "when": "2026-11-21"}
    written = await client.call_tool("write_note", {"path": "Needs_Action/test.md", "frontmatter": fm, "body": "Hi\n"})
    assert not written.is_error
    read = await client.call_tool("read_note", {"path": "Needs_Action/test.md"})
    assert read.structured_content == {**written.structured_content}
    assert read.structured_content["frontmatter"] == fm and read.structured_content["body"] == "Hi\n"
    assert json.loads(read.content[0].text) == read.structured_content


async def test_given_a_note_when_moved_then_it_is_gone_from_the_source(client, vault_dir: Path):
    """US3-2."""
    (vault_dir / "Needs_Action/email.md").write_text("---\nstatus: pending\n---\n")
    result = await client.call_tool("move_note", {"source": "Needs_Action/email.md", "destination": "Done/email.md"})
    assert result.structured_content["moved"] is True
    assert (result.structured_content["source"], result.structured_content["destination"]) == (
        "Needs_Action/email.md",
        "Done/email.md",
    )
    assert not (vault_dir / "Needs_Action/email.md").exists() and (vault_dir / "Done/email.md").exists()


async def test_list_notes_with_a_filter_returns_matching_paths(client, vault_dir: Path):
    """US3-3."""
    (vault_dir / "Needs_Action/a.md").write_text("---\nstatus: pending\n---\n")
    (vault_dir / "Needs_Action/b.md").write_text("---\nstatus: done\n---\n")
    result = await client.call_tool("list_notes", {"directory": "vault/Needs_Action", "filter": "status:pending"})
    assert result.structured_content["notes"] == ["Needs_Action/a.md"]
    assert result.structured_content["total"] == 1 and result.structured_content["truncated"] is False


@pytest.mark.parametrize("daemon", [False, True], ids=["client", "daemon"])
async def test_a_status_filter_compares_as_the_typed_model_does(vault_dir: Path, daemon: bool):
    """Given `status: Needs_Info` and ` NEEDS_INFO `, when listed with `status:needs_info`, then both are
    listed, as the sweep and the reports read them; a field the model does not read as a word stays exact.
    (The daemon's server pre-filters the cached frontmatter by bytes; a client's judges every note.)"""
    (vault_dir / "Needs_Action/a.md").write_text("---\nstatus: Needs_Info\ntype: EMAIL\n---\n")
    (vault_dir / "Needs_Action/b.md").write_text("---\nstatus: ' NEEDS_INFO '\n---\n")
    (vault_dir / "Needs_Action/c.md").write_text("---\nstatus: needs_more\nsubject: Needs_Info\n---\n")
    async with Client(build_vault_server(vault_dir, daemon_filing=daemon)) as client:

        async def listed(flt: str | list[str]) -> list[str]:
            result = await client.call_tool("list_notes", {"directory": "Needs_Action", "filter": flt})
            assert not result.is_error, result
            return result.structured_content["notes"]

        assert await listed("status:needs_info") == ["Needs_Action/a.md", "Needs_Action/b.md"]
        assert await listed("Status:needs_info") == []  # the field's name is as written
        assert await listed("type:email") == ["Needs_Action/a.md"]
        assert await listed("subject:needs_info") == []  # not a word field: exact
        assert await listed(["subject:Needs_Info", "status:NEEDS_MORE"]) == ["Needs_Action/c.md"]


async def test_a_listing_sends_each_note_as_just_its_path(client, vault_dir: Path):
    """Given notes in a folder, when listed, then `notes` is their paths as plain strings, sorted,
    and the text content carries the same JSON, for clients that read only text."""
    for name in ("b.md", "a.md"):
        (vault_dir / "Done" / name).write_text("---\nstatus: done\n---\n")
    result = await client.call_tool("list_notes", {"directory": "Done"})
    assert result.structured_content == {
        "notes": ["Done/a.md", "Done/b.md"],
        "total": 2,
        "truncated": False,
        "skipped": [],
    }
    assert json.loads(result.content[0].text) == result.structured_content


async def test_a_listing_schema_leaves_its_paths_nothing_to_check_one_by_one(client):
    """Given the published list_notes schema, then `notes` is a bare array (no item schema for the
    stock Python client's jsonschema to apply 2,500 times) and the rest is flat: no `$ref`."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["list_notes"].output_schema
    notes = schema["properties"]["notes"]
    assert notes["type"] == "array" and "items" not in notes and "strings" in notes["description"]
    assert schema["required"] == ["notes", "total", "truncated"]
    assert "$defs" not in schema and "$ref" not in json.dumps(schema)


async def test_a_search_schema_gives_its_items_inline(client):
    """Given the published search_notes schema, then its items carry no `$ref` and no nullable
    `anyOf`: the stock Python client checks every item with jsonschema, where those cost most."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["search_notes"].output_schema
    assert "$defs" not in schema
    items = schema["properties"]["notes"]["items"]
    assert items["type"] == "object" and items["required"] == ["path", "snippet", "line"]
    assert "$ref" not in json.dumps(schema) and "anyOf" not in json.dumps(items)


async def test_read_of_a_missing_note_is_a_typed_not_found(client):
    """US3-4: no FileNotFoundError traceback."""
    body = error_of(await client.call_tool("read_note", {"path": "Needs_Action/nope.md"}))
    assert body["error"] == "not_found" and body["path"] == "Needs_Action/nope.md"


async def test_search_notes_returns_path_line_and_snippet(client, vault_dir: Path):
    (vault_dir / "Done/a.md").write_text("---\nsubject: x\n---\nThe Quarterly report\n")
    result = await client.call_tool("search_notes", {"query": "quarterly REPORT"})
    assert result.structured_content["notes"] == [{"path": "Done/a.md", "snippet": "The Quarterly report", "line": 4}]


async def test_health_check_reports_root_writability_obsidian_and_counts(client, vault_dir: Path):
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / "Drafts/d.md").write_text("x")
    health = (await client.call_tool("health_check", {})).structured_content
    assert health["status"] == "ok" and health["writable"] is True and health["obsidian"] is True
    assert health["vault_root"] == str(vault_dir) and health["folders"]["Drafts"] == 1
    assert not [p for p in vault_dir.iterdir() if p.name.startswith(".h0-health")]


def _deep(levels: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(levels):
        value = {"n": value}
    return value


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("read_note", {"path": "../../etc/passwd"}, "permission_denied"),
        ("read_note", {"path": "/etc/passwd"}, "permission_denied"),
        ("read_note", {"path": "a\x00b.md"}, "invalid_request"),
        ("write_note", {"path": ".obsidian/app.json", "frontmatter": {}, "body": "x"}, "permission_denied"),
        ("write_note", {"path": "Drafts/x.md", "frontmatter": {"k": "bell\u0007"}, "body": "x"}, "invalid_request"),
        ("write_note", {"path": "Drafts/x.md", "frontmatter": {"": "empty key"}, "body": "x"}, "invalid_request"),
        ("write_note", {"path": "Drafts/x.md", "frontmatter": _deep(100), "body": "x"}, "invalid_request"),
        ("write_note", {"path": "Approved/x.md", "frontmatter": {}, "body": "x"}, "permission_denied"),
        ("move_note", {"source": "Drafts/none.md", "destination": "Done/"}, "not_found"),
        ("list_notes", {"directory": "Missing"}, "not_found"),
        ("list_notes", {"directory": "Done", "filter": "nocolon"}, "invalid_request"),
        ("search_notes", {"query": ""}, "invalid_request"),
        ("read_note", {}, "invalid_request"),
        ("read_note", {"path": 12}, "invalid_request"),
        ("no_such_tool", {}, "invalid_request"),
    ],
)
async def test_bad_input_gets_a_typed_error(client, vault_dir: Path, tool, args, code):
    before = sorted(p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*"))
    assert error_of(await client.call_tool(tool, args))["error"] == code
    after = sorted(p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*") if "Logs/" not in p.as_posix())
    assert [p for p in after if not p.startswith("Logs")] == [p for p in before if not p.startswith("Logs")]


async def test_corrupt_frontmatter_is_a_parse_error(client, vault_dir: Path):
    (vault_dir / "Approved/bad.md").write_text("---\nto: [x\n---\nbody")
    assert error_of(await client.call_tool("read_note", {"path": "Approved/bad.md"}))["error"] == "parse_error"


async def test_move_onto_an_existing_note_is_a_conflict(client, vault_dir: Path):
    (vault_dir / "Needs_Action/a.md").write_text("a")
    (vault_dir / "Done/a.md").write_text("b")
    body = error_of(await client.call_tool("move_note", {"source": "Needs_Action/a.md", "destination": "Done/"}))
    assert body["error"] == "conflict"
    assert (vault_dir / "Done/a.md").read_text() == "b"


async def test_write_with_a_stale_hash_is_a_conflict(client, vault_dir: Path):
    (vault_dir / "Drafts/d.md").write_text("---\na: 1\n---\nv1\n")
    seen = (await client.call_tool("read_note", {"path": "Drafts/d.md"})).structured_content
    (vault_dir / "Drafts/d.md").write_text("---\na: 1\n---\nhuman edit\n")
    args = {"path": "Drafts/d.md", "frontmatter": {"a": 2}, "body": "v2\n", "if_match": seen["hash"]}
    assert error_of(await client.call_tool("write_note", args))["error"] == "conflict"
    assert "human edit" in (vault_dir / "Drafts/d.md").read_text()


class TestApprovalIsTheHumansActAlone:
    async def test_write_note_into_approved_is_refused_and_audited(self, client, vault_dir: Path):
        args = {"path": "Approved/sneaky.md", "frontmatter": {"to": "x@y.z", "subject": "s"}, "body": "b"}
        assert error_of(await client.call_tool("write_note", args))["error"] == "permission_denied"
        assert not (vault_dir / "Approved/sneaky.md").exists()
        refusals = list(AuditLog(vault_dir / "Logs", "vault_mcp").records(event="approval_guard_refused"))
        assert refusals[0]["path"] == "Approved/sneaky.md" and refusals[0]["tool"] == "write_note"

    async def test_editing_a_note_already_in_approved_is_refused(self, client, vault_dir: Path):
        (vault_dir / "Approved/d.md").write_text("---\nto: a@b.c\nsubject: s\n---\napproved text\n")
        args = {"path": "Approved/d.md", "frontmatter": {"to": "evil@x.com", "subject": "s"}, "body": "other"}
        assert error_of(await client.call_tool("write_note", args))["error"] == "permission_denied"
        assert "approved text" in (vault_dir / "Approved/d.md").read_text()

    @pytest.mark.parametrize("destination", ["Approved/", "Approved/d.md", "approved/d.md", "Drafts/../Approved/d.md"])
    async def test_move_note_into_approved_is_refused(self, client, vault_dir: Path, destination):
        (vault_dir / "Drafts/d.md").write_text("---\nto: a@b.c\nsubject: s\n---\nb\n")
        body = error_of(await client.call_tool("move_note", {"source": "Drafts/d.md", "destination": destination}))
        assert body["error"] == "permission_denied"
        assert (vault_dir / "Drafts/d.md").exists() and not list((vault_dir / "Approved").glob("*.md"))

    async def test_moving_out_of_approved_is_refused(self, client, vault_dir: Path):
        (vault_dir / "Approved/d.md").write_text("---\nto: a@b.c\nsubject: s\n---\nb\n")
        args = {"source": "Approved/d.md", "destination": "Done/", "set_frontmatter": {"status": "sent"}}
        assert error_of(await client.call_tool("move_note", args))["error"] == "permission_denied"
        assert (vault_dir / "Approved/d.md").exists() and not (vault_dir / "Done/d.md").exists()

    async def test_the_daemons_own_server_files_out_of_approved(self, vault_dir: Path):
        """Only with daemon_filing (the server the daemon spawns) may a note leave Approved/, for Done/."""
        (vault_dir / "Approved/d.md").write_text("---\nto: a@b.c\nsubject: s\n---\nb\n")
        async with Client(build_vault_server(vault_dir, daemon_filing=True)) as daemons:
            result = await daemons.call_tool("move_note", {"source": "Approved/d.md", "destination": "Done/"})
        assert not result.is_error and (vault_dir / "Done/d.md").exists()


async def test_writes_and_moves_leave_an_audit_trail(client, vault_dir: Path):
    await client.call_tool("write_note", {"path": "Drafts/a.md", "frontmatter": {}, "body": "x"})
    await client.call_tool("move_note", {"source": "Drafts/a.md", "destination": "Done/"})
    events = [r["event"] for r in AuditLog(vault_dir / "Logs", "vault_mcp").records()]
    assert events == ["note_written", "note_moved"]


async def test_update_frontmatter_changes_only_the_given_keys(client, vault_dir: Path):
    (vault_dir / "Needs_Action/e.md").write_text("---\nstatus: pending\nzip: 01234 # keep\n---\nBody stays.\n")
    seen = (await client.call_tool("read_note", {"path": "Needs_Action/e.md"})).structured_content
    result = await client.call_tool(
        "update_frontmatter", {"path": "Needs_Action/e.md", "set": {"status": "done"}, "if_match": seen["hash"]}
    )
    assert result.structured_content["path"] == "Needs_Action/e.md"
    assert (vault_dir / "Needs_Action/e.md").read_text() == "---\nstatus: done\nzip: 01234 # keep\n---\nBody stays.\n"
    stale = await client.call_tool(
        "update_frontmatter", {"path": "Needs_Action/e.md", "set": {"status": "x"}, "if_match": seen["hash"]}
    )
    assert error_of(stale)["error"] == "conflict"
    denied = await client.call_tool("update_frontmatter", {"path": "Approved/e.md", "set": {"to": "evil@x.com"}})
    assert error_of(denied)["error"] == "permission_denied"
