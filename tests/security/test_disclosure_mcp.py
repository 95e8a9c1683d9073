"""Issue 29, rule 1 (disclosure), with an MCP client as the agent: a private note — in any spelling of
`private`, a `private` tag, a private folder, or a private thread — is never shown, never matched by a
filter (not even by count), never searched or related, and no write tool can make it less private."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from h0.mcp.vault_server import build_vault_server
from h0.vault import frontmatter
from h0.vault.disclosure import Disclosure
from h0.vault.model import marked_private
from tests.conftest import H0_BIN, subprocess_env

pytestmark = pytest.mark.anyio

SPELLINGS = {
    "Notes/bool.md": "private: true",
    "Notes/yes.md": "Private: yes",
    "Notes/one.md": "PRIVATE: 1",
    "Notes/on.md": "private: 'On'",
    "Notes/tag-list.md": "tags: [work, private]",
    "Notes/tag-text.md": 'tags: "#Private, health"',
}
# Notes private by where they are or whom they belong with.
INHERITED = {
    "Journal/2026-11-24.md": "mood: low",  # a private folder (PRIVATE_FOLDERS)
    "Done/EMAIL_old.md": "type: email\nthread_id: T-secret\nmessage_id: m-old\nprivate: true",  # a private email
    "Needs_Action/EMAIL_new.md": "type: email\nthread_id: T-secret\nmessage_id: m-new\nstatus: pending",  # its thread
    "Done/EMAIL_src.md": "type: email\nmessage_id: m-src\nprivate: true",
    "Drafts/REPLY_src.md": "to: x@example.com\nsubject: Re\nstatus: pending_approval\nsource: Done/EMAIL_src.md",
}
PRIVATE_NOTES = {**SPELLINGS, **INHERITED}


def word(rel: str) -> str:
    """The distinctive word of one private note: it must never reach an MCP client."""
    return "zq" + "".join(ch for ch in rel.lower() if ch.isalnum())


def write(vault_dir: Path, rel: str, head: str, body: str) -> None:
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{head}\nbudget: 5000\ncontact: leak@secret.example\n---\n{body}\n", encoding="utf-8")


def private_vault(vault_dir: Path) -> None:
    for rel, head in PRIVATE_NOTES.items():
        write(vault_dir, rel, head, f"{word(rel)} Atlas merger notes, see leak@secret.example")
    write(vault_dir, "Notes/public.md", "kind: plan", "Atlas merger public plan, leak@secret.example")
    write(vault_dir, "Notes/public-false.md", "private: false", "Atlas merger, falsely marked, leak@secret.example")


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    return dict(json.loads(result.content[0].text))


def server(vault_dir: Path):
    return build_vault_server(vault_dir, private_folders="Journal")


def test_the_gate_reads_every_spelling_and_no_false_one():
    for head in SPELLINGS.values():
        assert marked_private(frontmatter.load(head)), head
    for fm in ({"private": False}, {"private": "no"}, {"private": 0}, {"tags": ["privacy"]}, {"privately": True}):
        assert not marked_private(fm), fm
    gate = Disclosure(("journal",))
    assert gate.never("journal/sub/a.md") and gate.never("Logs/x.md") and gate.never(".obsidian/a.md")
    assert not gate.never("Journals.md") and not gate.never("Journal-public/a.md")


async def test_no_private_note_is_read_listed_filtered_searched_or_related(vault_dir: Path):
    private_vault(vault_dir)
    async with Client(server(vault_dir)) as client:
        for rel in PRIVATE_NOTES:
            refused = error_of(await client.call_tool("read_note", {"path": rel}))
            assert refused["error"] == "permission_denied" and refused["details"]["reason"] == "private", rel
        many = (await client.call_tool("read_notes", {"paths": list(PRIVATE_NOTES)})).structured_content
        assert many["notes"] == [] and {e["error"] for e in many["errors"]} == {"permission_denied"}
        # A filter never matches on a private note's properties, not even by count.
        for flt in ("budget:5000", "contact:leak@secret.example", ["budget:5000", "kind:plan"]):
            listed = (
                await client.call_tool("list_notes", {"directory": "", "filter": flt, "recursive": True})
            ).structured_content
            assert listed["notes"] == ["Notes/public-false.md", "Notes/public.md"] or listed["notes"] == [
                "Notes/public.md",
                "Notes/public-false.md",
            ]
            assert listed["total"] == 2
        for flt in ("thread_id:T-secret", "mood:low", "tags:private", "private:true"):
            listed = (
                await client.call_tool("list_notes", {"directory": "", "filter": flt, "recursive": True})
            ).structured_content
            assert listed["notes"] == [] and listed["total"] == 0, flt
        every = (await client.call_tool("list_notes", {"directory": "", "recursive": True})).structured_content
        assert not set(every["notes"]) & set(PRIVATE_NOTES)
        # Search and related notes never show a private note's words.
        for rel in PRIVATE_NOTES:
            found = (await client.call_tool("search_notes", {"query": word(rel)})).structured_content
            assert found["notes"] == [], rel
        atlas = (await client.call_tool("search_notes", {"query": "Atlas merger"})).structured_content
        assert {n["path"] for n in atlas["notes"]} == {"Notes/public.md", "Notes/public-false.md"}
        text = " ".join(word(rel) for rel in PRIVATE_NOTES) + " Atlas merger leak@secret.example"
        related = await client.call_tool("related_notes", {"text": text, "limit": 50})
        answer = json.dumps(related.structured_content)
        assert not set(PRIVATE_NOTES) & {r["path"] for r in related.structured_content["notes"]}
        assert not any(word(rel) in answer for rel in PRIVATE_NOTES)
        for rel in PRIVATE_NOTES:
            refused = error_of(await client.call_tool("related_notes", {"path": rel}))
            assert refused["error"] == "permission_denied", rel
        people = (await client.call_tool("notes_for_address", {"address": "leak@secret.example"})).structured_content
        assert people["notes"] == ["Notes/public-false.md", "Notes/public.md"]
        context = error_of(await client.call_tool("draft_context", {"path": "Needs_Action/EMAIL_new.md"}))
        assert context["error"] == "permission_denied"


UNPRIVATE = [
    ("write_note", {"path": "Notes/bool.md", "frontmatter": {"title": "x"}, "body": "now public"}),
    ("write_note", {"path": "Notes/yes.md", "frontmatter": {"Private": "no"}, "body": "now public"}),
    ("write_note", {"path": "Notes/tag-list.md", "frontmatter": {"tags": ["work"]}, "body": "now public"}),
    ("update_frontmatter", {"path": "Notes/one.md", "set": {}, "remove": ["PRIVATE"]}),
    ("update_frontmatter", {"path": "Notes/on.md", "set": {"private": False}}),
    ("update_frontmatter", {"path": "Notes/tag-text.md", "set": {"tags": "health"}}),
    ("update_frontmatter", {"path": "Needs_Action/EMAIL_new.md", "set": {"thread_id": "T-elsewhere"}}),
    ("update_frontmatter", {"path": "Drafts/REPLY_src.md", "set": {"source": "Done/other.md"}}),
    ("move_note", {"source": "Journal/2026-11-24.md", "destination": "Notes/"}),
    ("move_note", {"source": "Notes/bool.md", "destination": "Notes/open.md", "set_frontmatter": {"private": "no"}}),
    (
        "move_note",
        {"source": "Needs_Action/EMAIL_new.md", "destination": "Done/", "set_frontmatter": {"thread_id": "T-other"}},
    ),
]


@pytest.mark.parametrize(("tool", "arguments"), UNPRIVATE, ids=[f"{t}-{i}" for i, (t, _) in enumerate(UNPRIVATE)])
async def test_no_write_tool_makes_a_note_less_private(vault_dir: Path, tool: str, arguments: dict[str, Any]):
    private_vault(vault_dir)
    before = {rel: (vault_dir / rel).read_bytes() for rel in PRIVATE_NOTES}
    async with Client(server(vault_dir)) as client:
        refused = error_of(await client.call_tool(tool, arguments))
        assert refused["error"] == "permission_denied" and "private" in refused["message"], refused
        op = {"write_note": "write", "update_frontmatter": "update", "move_note": "move"}[tool]
        batch = (await client.call_tool("apply_changes", {"changes": [{"op": op, **arguments}]})).structured_content
        assert batch["results"][0]["ok"] is False and batch["results"][0]["error"] == "permission_denied"
    assert {rel: (vault_dir / rel).read_bytes() for rel in PRIVATE_NOTES} == before


async def test_changes_that_keep_a_note_private_are_allowed(vault_dir: Path):
    private_vault(vault_dir)
    async with Client(server(vault_dir)) as client:
        kept = await client.call_tool("update_frontmatter", {"path": "Notes/bool.md", "set": {"topic": "x"}})
        moved = await client.call_tool("move_note", {"source": "Notes/yes.md", "destination": "Journal/"})
        more = await client.call_tool("update_frontmatter", {"path": "Notes/public.md", "set": {"private": True}})
        assert not kept.is_error and not moved.is_error and not more.is_error
        refused = error_of(await client.call_tool("read_note", {"path": "Notes/public.md"}))
        assert refused["error"] == "permission_denied"


async def test_a_real_mcp_process_keeps_private_notes_private(vault_dir: Path):
    """The same promises over stdio, with PRIVATE_FOLDERS from the environment and a `.h0/private-folders`."""
    private_vault(vault_dir)
    write(vault_dir, "Health/check.md", "kind: plan", f"{word('health')} results")
    (vault_dir / ".h0").mkdir(exist_ok=True)
    (vault_dir / ".h0/private-folders").write_text("Health\n")
    params = StdioServerParameters(
        command=H0_BIN,
        args=["mcp", "vault"],
        env=subprocess_env(
            VAULT_PATH=str(vault_dir), H0_STATE_DIR=os.environ["H0_STATE_DIR"], PRIVATE_FOLDERS="Journal"
        ),
    )
    async with Client(params) as client:
        for rel in ("Notes/yes.md", "Notes/tag-text.md", "Journal/2026-11-24.md", "Health/check.md"):
            assert error_of(await client.call_tool("read_note", {"path": rel}))["error"] == "permission_denied"
        assert (
            error_of(await client.call_tool("read_note", {"path": "Needs_Action/EMAIL_new.md"}))["details"]["reason"]
            == "private"
        )
        listed = (
            await client.call_tool("list_notes", {"directory": "", "filter": "kind:plan", "recursive": True})
        ).structured_content
        assert listed["notes"] == ["Notes/public.md"] and listed["total"] == 1
        found = (await client.call_tool("search_notes", {"query": word("health")})).structured_content
        assert found["notes"] == []
        refused = error_of(
            await client.call_tool("update_frontmatter", {"path": "Notes/one.md", "set": {}, "remove": ["PRIVATE"]})
        )
        assert refused["error"] == "permission_denied"
        out = error_of(await client.call_tool("move_note", {"source": "Health/check.md", "destination": "Notes/"}))
        assert out["error"] == "permission_denied"
    assert (vault_dir / "Health/check.md").exists() and "PRIVATE: 1" in (vault_dir / "Notes/one.md").read_text()


async def test_a_private_folders_record_that_cannot_be_read_keeps_every_note_from_a_real_mcp_process(vault_dir: Path):
    """Given `.h0/private-folders` replaced by a FIFO (it may name any folder: H0 cannot read which), when an MCP
    client reads, lists and searches through a real `h0 mcp vault`, then no note is shown — the one the record
    named, a diary's, a plain one — each refusal says which file to fix, and nothing waits on the FIFO."""
    private_vault(vault_dir)
    write(vault_dir, "Health/check.md", "kind: plan", f"{word('health')} results")
    (vault_dir / ".h0").mkdir(exist_ok=True)
    os.mkfifo(vault_dir / ".h0/private-folders")
    params = StdioServerParameters(
        command=H0_BIN, args=["mcp", "vault"], env=subprocess_env(VAULT_PATH=str(vault_dir), PRIVATE_FOLDERS="")
    )
    async with Client(params) as client:
        for rel in ("Health/check.md", "Notes/public.md"):
            refused = error_of(await client.call_tool("read_note", {"path": rel}))
            assert refused["error"] == "permission_denied" and ".h0/private-folders" in refused["message"], refused
        listed = (await client.call_tool("list_notes", {"directory": "", "recursive": True})).structured_content
        assert listed["notes"] == [] and listed["total"] == 0
        found = (await client.call_tool("search_notes", {"query": "Atlas merger"})).structured_content
        assert found["notes"] == []
