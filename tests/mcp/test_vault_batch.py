"""The vault server's batch tools (read_notes, apply_changes) and any-of filters: in memory through
the `mcp` client, then `McpVault` over a real stdio server beside `LocalVault` — the same
answers, the same types, whichever implementation of `VaultAPI` gives them."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.errors import Conflict, InvalidRequest, NotFound, ParseError, PermissionDenied
from h0.mcp.api import McpVault
from h0.mcp.client import McpConnection, ServerCommand
from h0.mcp.vault_server import MAX_BATCH
from h0.vault import AuditLog, Moved, Note, Vault
from h0.vault.api import ListQuery, LocalVault, Move, NoteRef, Notes, Update, Write
from tests.conftest import subprocess_env
from tests.mcp.conftest import error_of

EMAIL = "---\ntype: email\nstatus: pending\nthread_id: {tid}\n---\nHello\n"


@pytest.mark.anyio
async def test_read_notes_answers_each_note_in_order_and_each_failure_in_errors(client, vault_dir: Path):
    (vault_dir / "Needs_Action/b.md").write_text(EMAIL.format(tid="t1"))
    (vault_dir / "Needs_Action/a.md").write_text(EMAIL.format(tid="t2"))
    (vault_dir / "Needs_Action/bad.md").write_text("---\nkey: [unclosed\n---\n")
    asked = ["Needs_Action/b.md", "Needs_Action/missing.md", "Needs_Action/a.md", "Needs_Action/bad.md", "../x.md"]
    result = (await client.call_tool("read_notes", {"paths": asked})).structured_content
    assert [n["path"] for n in result["notes"]] == ["Needs_Action/b.md", "Needs_Action/a.md"]
    assert result["notes"][0]["frontmatter"]["thread_id"] == "t1" and result["notes"][0]["body"] == "Hello\n"
    errors = {e["path"]: e["error"] for e in result["errors"]}
    assert errors == {
        "Needs_Action/missing.md": "not_found",
        "Needs_Action/bad.md": "parse_error",
        "../x.md": "permission_denied",
    }


@pytest.mark.anyio
async def test_apply_changes_applies_in_order_and_a_failed_change_stops_no_other(client, vault_dir: Path):
    (vault_dir / "Needs_Action/e.md").write_text(EMAIL.format(tid="t1"))
    (vault_dir / "Drafts/taken.md").write_text("mine\n")
    changes = [
        {
            "op": "write",
            "path": "Drafts/new.md",
            "frontmatter": {"to": "a@example.com"},
            "body": "Hi\n",
            "create_only": True,
        },
        {"op": "write", "path": "Drafts/taken.md", "frontmatter": {}, "body": "not mine\n", "create_only": True},
        {"op": "update", "path": "Needs_Action/e.md", "set": {"status": "awaiting_approval"}, "if_match": "stale"},
        {"op": "update", "path": "Needs_Action/e.md", "set": {"status": "awaiting_approval"}},
        {"op": "move", "source": "Needs_Action/e.md", "destination": "Done/", "set_frontmatter": {"status": "done"}},
    ]
    results = (await client.call_tool("apply_changes", {"changes": changes})).structured_content["results"]
    assert [r["ok"] for r in results] == [True, False, False, True, True]
    assert results[1]["error"] == "conflict" and results[2]["error"] == "conflict"
    assert results[4]["path"] == "Done/e.md" and results[4]["source"] == "Needs_Action/e.md"
    assert (vault_dir / "Drafts/taken.md").read_text() == "mine\n"
    assert "status: done" in (vault_dir / "Done/e.md").read_text()


@pytest.mark.anyio
async def test_apply_changes_keeps_the_approval_guard_for_every_change(client, vault_dir: Path):
    """An agent cannot slip a note into Approved/ (or edit one there, or take one out) inside a batch."""
    (vault_dir / "Drafts/d.md").write_text("---\nto: a@example.com\n---\nHi\n")
    (vault_dir / "Approved/x.md").write_text("---\nto: a@example.com\n---\nApproved text\n")
    changes = [
        {"op": "write", "path": "Approved/new.md", "frontmatter": {"to": "evil@example.com"}, "body": "x"},
        {"op": "update", "path": "Approved/x.md", "set": {"to": "evil@example.com"}},
        {"op": "move", "source": "Drafts/d.md", "destination": "Approved/"},
        {"op": "move", "source": "Approved/x.md", "destination": "Done/"},
        {"op": "move", "source": "Drafts/d.md", "destination": "approved/../APPROVED/"},
    ]
    results = (await client.call_tool("apply_changes", {"changes": changes})).structured_content["results"]
    assert [r["error"] for r in results] == ["permission_denied"] * 5
    assert not (vault_dir / "Approved/new.md").exists() and (vault_dir / "Drafts/d.md").exists()
    assert (vault_dir / "Approved/x.md").read_text().endswith("Approved text\n")
    refusals = list(AuditLog(vault_dir / "Logs", "vault_mcp").records(event="approval_guard_refused"))
    assert len(refusals) == 5 and {r["tool"] for r in refusals} == {"apply_changes"}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({"changes": []}, "empty"),
        ({"changes": [{"op": "delete", "path": "Drafts/d.md"}]}, "an unknown op"),
        ({"changes": [{"op": "write", "path": "Drafts/d.md"}]}, "a write without body"),
        ({"changes": [{"op": "move", "source": "Drafts/d.md", "destination": "Done/"}] * (MAX_BATCH + 1)}, "too many"),
        ({"changes": "Drafts/d.md"}, "not a list"),
    ],
)
async def test_a_malformed_batch_is_one_typed_invalid_request_and_changes_nothing(client, vault_dir: Path, args, why):
    (vault_dir / "Drafts/d.md").write_text("x\n")
    body = error_of(await client.call_tool("apply_changes", args))
    assert body["error"] == "invalid_request", why
    assert (vault_dir / "Drafts/d.md").read_text() == "x\n"


@pytest.mark.anyio
async def test_read_notes_refuses_an_empty_or_oversized_batch(client):
    for paths in ([], ["Drafts/x.md"] * (MAX_BATCH + 1), "Drafts/x.md"):
        assert error_of(await client.call_tool("read_notes", {"paths": paths}))["error"] == "invalid_request"


@pytest.mark.anyio
async def test_list_notes_with_a_list_of_filters_returns_the_notes_matching_any(client, vault_dir: Path):
    for name, tid in (("a", "t1"), ("b", "t2"), ("c", "t3"), ("d", "12")):
        (vault_dir / f"Needs_Action/{name}.md").write_text(EMAIL.format(tid=tid))
    result = await client.call_tool(
        "list_notes", {"directory": "", "recursive": True, "filter": ["thread_id:t1", "thread_id:t3", "thread_id:12"]}
    )
    assert result.structured_content["notes"] == ["Needs_Action/a.md", "Needs_Action/c.md", "Needs_Action/d.md"]
    body = error_of(await client.call_tool("list_notes", {"directory": "", "filter": ["thread_id:t1", "no colon"]}))
    assert body["error"] == "invalid_request"


# -- the same seam, two implementations -------------------------------------------------------------


@pytest.fixture(scope="module")
def stdio_vault(tmp_path_factory):
    """One real `h0 mcp vault` process over stdio for the parity tests of this module."""
    from h0.vault import init_vault

    root = tmp_path_factory.mktemp("parity") / "vault"
    root.mkdir()
    init_vault(root)
    env = subprocess_env(VAULT_PATH=str(root), LOG_LEVEL="ERROR")
    conn = McpConnection(ServerCommand.h0("vault", "vault", env), call_timeout=20).start()
    assert conn.wait_ready(30), conn.last_error
    yield root, McpVault(conn)
    conn.close()


def _fresh(root: Path, folder: str) -> None:
    (root / folder).mkdir(exist_ok=True)
    for note in (root / folder).glob("*.md"):
        note.unlink()


@pytest.mark.parametrize("kind", ["local", "mcp"])
def test_both_implementations_answer_the_same_typed_values(stdio_vault, kind):
    root, remote = stdio_vault
    api = LocalVault(Vault(root)) if kind == "local" else remote
    notes = Notes(api)  # a note at a time, over the same three verbs
    folder = f"Parity_{kind}"
    _fresh(root, folder)
    (root / folder / "a.md").write_text(EMAIL.format(tid="t1"))
    (root / folder / "bad.md").write_text("---\nkey: [unclosed\n---\n")

    a, missing, bad = api.read_many([f"{folder}/a.md", f"{folder}/none.md", f"{folder}/bad.md"])
    assert isinstance(a, Note) and a.frontmatter["thread_id"] == "t1" and a.body == "Hello\n"
    assert isinstance(missing, NotFound) and isinstance(bad, ParseError)
    (outside,) = api.read_many(["../outside.md"])
    assert isinstance(outside, PermissionDenied)

    written, conflict, updated, moved = api.apply(
        [
            Write(f"{folder}/draft.md", {"to": "a@example.com"}, "Hi\n", create_only=True),
            Write(f"{folder}/a.md", {}, "x", create_only=True),
            Update(f"{folder}/a.md", {"status": "awaiting_approval"}, if_match=a.hash),
            Move(f"{folder}/draft.md", f"{folder}/sub/", rename_if_exists=True, set_frontmatter={"status": "done"}),
        ]
    )
    assert isinstance(written, NoteRef) and written.path == f"{folder}/draft.md"
    assert isinstance(conflict, Conflict)
    assert isinstance(updated, NoteRef) and updated.hash == notes.read(f"{folder}/a.md").hash != a.hash
    assert isinstance(moved, Moved) and moved.destination == f"{folder}/sub/draft.md" and moved.hash

    assert api.list(ListQuery(folder, ("thread_id:t1", "status:done"), recursive=True)) == [
        f"{folder}/a.md",
        f"{folder}/sub/draft.md",
    ]
    assert notes.update(f"{folder}/a.md", {"x": 1}, remove=("status",)).path == f"{folder}/a.md"
    assert "status" not in notes.read(f"{folder}/a.md").frontmatter
    with pytest.raises(PermissionDenied):
        notes.read("../../etc/passwd")
    with pytest.raises(Conflict):
        notes.write(f"{folder}/a.md", {}, "x", create_only=True)
    with pytest.raises(InvalidRequest):
        api.list(ListQuery(folder, "no colon"))


class Answers:
    """A connection whose server answers `answer` to every call (a server breaking its contract)."""

    name = "vault"

    def __init__(self, answer: dict) -> None:
        self.answer = answer

    def call(self, tool: str, arguments, *, timeout=None) -> dict:
        return self.answer


@pytest.mark.parametrize(
    "answer",
    [
        {"notes": [], "errors": []},  # fewer notes than asked
        {"notes": [{"path": "a.md"}]},  # a note without its fields
        {"errors": []},
    ],
)
def test_a_result_without_the_promised_shape_is_an_internal_error_not_a_crash(answer):
    from h0.errors import InternalError

    with pytest.raises(InternalError):
        McpVault(Answers(answer)).read_many(["a.md"])
    with pytest.raises(InternalError):
        McpVault(Answers({"results": []})).apply([Update("a.md", {"x": 1})])
