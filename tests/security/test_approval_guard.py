"""One approval folder: nobody but the human (and the daemon's own filing) touches Approved/.

The vault server's guard compares what a path *resolves to* — symlinked folders and files,
`..`, Unicode spellings, case variants — on both sides of a move and for every write; the
watcher and the sweep agree on which notes are in Approved/. Every hostile call gets a
typed `permission_denied`, leaves one audit line, and leaves every byte on disk as it was.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from h0.mcp.vault_server import build_vault_server
from h0.pipeline.routes import reconcile
from h0.pipeline.watcher import trigger_path
from h0.vault import AuditLog, Vault
from h0.vault.approval import ApprovalFolder
from tests.conftest import H0_BIN, subprocess_env

pytestmark = pytest.mark.anyio

DRAFT = "---\nto: bob@example.com\nsubject: Hello\n---\nHi Bob,\n"
APPROVED_TEXT = "---\nto: bob@example.com\nsubject: Approved\n---\nExactly what the human approved.\n"
NFC_NAME = unicodedata.normalize("NFC", "Café.md")
NFD_NAME = unicodedata.normalize("NFD", "Café.md")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
async def client(vault_dir: Path):
    """The server Claude Code (or any MCP client) gets: no daemon filing."""
    async with Client(build_vault_server(vault_dir)) as c:
        yield c


@pytest.fixture
async def daemon_client(vault_dir: Path):
    """The server the daemon spawns for itself (H0_DAEMON_CHILD=1)."""
    async with Client(build_vault_server(vault_dir, daemon_filing=True)) as c:
        yield c


@pytest.fixture
def approved_note(vault_dir: Path) -> Path:
    path = vault_dir / "Approved/d.md"
    path.write_text(APPROVED_TEXT)
    return path


def disk(vault_dir: Path) -> dict[str, object]:
    """Every file and link of the vault outside Logs/: bytes, or ('link', target)."""
    state: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(vault_dir):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = path.relative_to(vault_dir).as_posix()
            if rel == "Logs" or rel.startswith("Logs/") and not rel.startswith("Logs/failed"):
                continue
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
            elif path.is_file():
                state[rel] = path.read_bytes()
            else:
                state[rel] = "dir"
    return state


def refusals(vault_dir: Path) -> list[dict]:
    return list(AuditLog(vault_dir / "Logs", "vault_mcp").records(event="approval_guard_refused"))


async def assert_refused(client: Client, vault_dir: Path, tool: str, args: dict, reason: str | None = None) -> dict:
    """Then: a typed permission_denied, one audit line, and not a byte changed on disk."""
    before, audited = disk(vault_dir), len(refusals(vault_dir))
    result = await client.call_tool(tool, args)
    assert result.is_error and result.structured_content is None, result
    body = json.loads(result.content[0].text)
    assert body["error"] == "permission_denied" and body["message"], body
    assert disk(vault_dir) == before
    lines = refusals(vault_dir)[audited:]
    assert len(lines) == 1 and lines[0]["tool"] == tool
    if reason is not None:
        assert lines[0]["reason"] == reason
    return body


class TestASymlinkedFolderIntoApproved:
    """Given `Shortcut -> Approved` inside the vault."""

    @pytest.fixture(autouse=True)
    def shortcut(self, vault_dir: Path):
        os.symlink(vault_dir / "Approved", vault_dir / "Shortcut")

    async def test_when_a_note_is_written_through_it_then_it_is_refused(self, client, vault_dir: Path):
        args = {"path": "Shortcut/x.md", "frontmatter": {"to": "x@y.z", "subject": "s"}, "body": "b"}
        await assert_refused(client, vault_dir, "write_note", args, "into_approved")
        assert not (vault_dir / "Approved/x.md").exists()

    async def test_when_an_approved_note_is_edited_through_it_then_it_is_refused(
        self, client, vault_dir, approved_note
    ):
        await assert_refused(
            client, vault_dir, "update_frontmatter", {"path": "Shortcut/d.md", "set": {"to": "evil@x.com"}}
        )
        assert approved_note.read_text() == APPROVED_TEXT

    @pytest.mark.parametrize("destination", ["Shortcut/", "Shortcut/d.md", "Shortcut/sub/d.md"])
    async def test_when_a_draft_is_moved_into_it_then_it_is_refused(self, client, vault_dir: Path, destination):
        (vault_dir / "Drafts/d.md").write_text(DRAFT)
        await assert_refused(
            client, vault_dir, "move_note", {"source": "Drafts/d.md", "destination": destination}, "into_approved"
        )
        assert (vault_dir / "Drafts/d.md").read_text() == DRAFT

    async def test_when_even_the_daemon_moves_a_draft_into_it_then_it_is_refused(self, daemon_client, vault_dir: Path):
        (vault_dir / "Drafts/d.md").write_text(DRAFT)
        await assert_refused(
            daemon_client, vault_dir, "move_note", {"source": "Drafts/d.md", "destination": "Shortcut/"}
        )


class TestASymlinkedFileIntoApproved:
    """Given `Drafts/x.md -> ../Approved/d.md`: editing the link would edit the approved note."""

    @pytest.fixture(autouse=True)
    def link(self, vault_dir: Path, approved_note: Path):
        os.symlink("../Approved/d.md", vault_dir / "Drafts/x.md")

    async def test_when_written_then_it_is_refused(self, client, vault_dir: Path, approved_note: Path):
        args = {"path": "Drafts/x.md", "frontmatter": {"to": "evil@x.com", "subject": "s"}, "body": "other"}
        await assert_refused(client, vault_dir, "write_note", args, "edit_in_approved")
        assert approved_note.read_text() == APPROVED_TEXT and (vault_dir / "Drafts/x.md").is_symlink()

    async def test_when_its_frontmatter_is_updated_then_it_is_refused(
        self, client, vault_dir: Path, approved_note: Path
    ):
        await assert_refused(
            client, vault_dir, "update_frontmatter", {"path": "Drafts/x.md", "set": {"to": "evil@x.com"}}
        )
        assert approved_note.read_text() == APPROVED_TEXT

    async def test_when_the_daemon_edits_it_then_it_is_refused_too(self, daemon_client, vault_dir: Path):
        await assert_refused(
            daemon_client, vault_dir, "update_frontmatter", {"path": "Drafts/x.md", "set": {"status": "sent"}}
        )


async def test_given_a_symlinked_note_anywhere_when_written_then_it_is_refused(client, vault_dir: Path):
    """Given `Drafts/link.md -> ../Done/real.md` (nothing to do with Approved/), when a tool
    writes it, then it is refused: a write would replace the link with a copy."""
    (vault_dir / "Done/real.md").write_text(DRAFT)
    os.symlink("../Done/real.md", vault_dir / "Drafts/link.md")
    await assert_refused(
        client, vault_dir, "write_note", {"path": "Drafts/link.md", "frontmatter": {}, "body": "x"}, "symlink"
    )
    await assert_refused(
        client, vault_dir, "update_frontmatter", {"path": "Drafts/link.md", "set": {"a": 1}}, "symlink"
    )


class TestOtherSpellingsOfApproved:
    @pytest.mark.parametrize("path", ["Drafts/../Approved/x.md", "Approved/./x.md", "vault/Approved/x.md", "ABSOLUTE"])
    async def test_given_another_spelling_when_a_note_is_written_then_it_is_refused(
        self, client, vault_dir: Path, path
    ):
        path = str(vault_dir / "Approved/x.md") if path == "ABSOLUTE" else path
        await assert_refused(
            client, vault_dir, "write_note", {"path": path, "frontmatter": {}, "body": "b"}, "into_approved"
        )

    async def test_given_dotdot_when_an_approved_note_is_moved_out_then_it_is_refused(
        self, client, vault_dir, approved_note
    ):
        args = {"source": "Done/../Approved/d.md", "destination": "Needs_Action/../Done/"}
        await assert_refused(client, vault_dir, "move_note", args, "out_of_approved")

    async def test_given_an_nfd_named_approved_note_when_named_in_nfc_then_every_change_is_refused(
        self, client, vault_dir: Path
    ):
        """Given Approved/Café.md stored decomposed (as macOS writes it), when a tool names it
        composed, then writes, edits and moves out are all refused."""
        (vault_dir / "Approved" / NFD_NAME).write_text(APPROVED_TEXT)
        rel = f"Approved/{NFC_NAME}"
        await assert_refused(
            client, vault_dir, "write_note", {"path": rel, "frontmatter": {}, "body": "x"}, "edit_in_approved"
        )
        await assert_refused(client, vault_dir, "update_frontmatter", {"path": rel, "set": {"to": "evil@x.com"}})
        await assert_refused(client, vault_dir, "move_note", {"source": rel, "destination": "Done/"}, "out_of_approved")

    async def test_given_an_nfd_named_draft_when_moved_into_approved_then_it_is_refused(self, client, vault_dir: Path):
        (vault_dir / "Drafts" / NFD_NAME).write_text(DRAFT)
        args = {"source": f"Drafts/{NFC_NAME}", "destination": "Approved/"}
        await assert_refused(client, vault_dir, "move_note", args, "into_approved")


class TestCaseVariantsOfApproved:
    """On macOS and Windows `approved/` *is* Approved/; on Linux it is another folder. The
    guard refuses it either way (defensively, by name); the watcher and sweep go by identity."""

    @pytest.mark.parametrize("folder", ["approved", "APPROVED", "aPPROVED"])
    async def test_when_a_note_is_written_or_moved_there_then_it_is_refused(self, client, vault_dir: Path, folder):
        (vault_dir / "Drafts/d.md").write_text(DRAFT)
        await assert_refused(
            client, vault_dir, "write_note", {"path": f"{folder}/x.md", "frontmatter": {}, "body": "b"}
        )
        await assert_refused(client, vault_dir, "move_note", {"source": "Drafts/d.md", "destination": f"{folder}/"})
        assert not (vault_dir / folder).exists() or (vault_dir / folder).samefile(vault_dir / "Approved")

    async def test_given_a_real_separate_approved_folder_when_its_note_is_touched_then_it_is_refused(
        self, client, vault_dir: Path
    ):
        if (vault_dir / "APPROVED").exists():
            pytest.skip("a case-insensitive file system: approved/ is Approved/ here")
        (vault_dir / "approved").mkdir()
        (vault_dir / "approved/n.md").write_text(APPROVED_TEXT)
        assert not ApprovalFolder(vault_dir).contains("approved/n.md")  # by identity, another folder …
        await assert_refused(client, vault_dir, "update_frontmatter", {"path": "approved/n.md", "set": {"a": 1}})
        await assert_refused(client, vault_dir, "move_note", {"source": "approved/n.md", "destination": "Done/"})


class TestMovingOutOfApproved:
    @pytest.mark.parametrize(
        "destination", ["Done/", "Drafts/", "Logs/failed/", "Needs_Action/", "Rejected/", "Done/x.md"]
    )
    async def test_given_an_approved_note_when_a_tool_moves_it_out_then_it_is_refused(
        self, client, vault_dir: Path, approved_note: Path, destination
    ):
        """The attack: file an approved note as sent without sending it."""
        args = {"source": "Approved/d.md", "destination": destination, "set_frontmatter": {"status": "sent"}}
        body = await assert_refused(client, vault_dir, "move_note", args, "out_of_approved")
        assert "human" in body["message"]
        assert approved_note.read_text() == APPROVED_TEXT

    @pytest.mark.parametrize(
        ("destination", "landed"),
        [
            ("Done/", "Done/d.md"),
            ("Drafts/", "Drafts/d.md"),
            ("Logs/failed/", "Logs/failed/d.md"),
            ("Done/sent.md", "Done/sent.md"),
        ],
    )
    async def test_given_the_daemons_server_when_it_files_a_note_then_it_moves(
        self, daemon_client, vault_dir: Path, approved_note: Path, destination, landed
    ):
        args = {
            "source": "Approved/d.md",
            "destination": destination,
            "rename_if_exists": True,
            "set_frontmatter": {"status": "sent"},
        }
        result = await daemon_client.call_tool("move_note", args)
        assert not result.is_error, result
        assert result.structured_content["destination"] == landed
        assert not approved_note.exists() and "status: sent" in (vault_dir / landed).read_text()
        assert refusals(vault_dir) == []

    @pytest.mark.parametrize("destination", ["Needs_Action/", "Rejected/", "Done/sub/", "Logs/", "Outbox/d.md", "d.md"])
    async def test_given_the_daemons_server_when_it_moves_a_note_elsewhere_then_it_is_refused(
        self, daemon_client, vault_dir: Path, approved_note: Path, destination
    ):
        args = {"source": "Approved/d.md", "destination": destination}
        body = await assert_refused(daemon_client, vault_dir, "move_note", args, "not_a_filing_folder")
        assert "Done/" in body["message"]

    async def test_given_the_daemons_server_when_it_renames_within_approved_then_it_is_refused(
        self, daemon_client, vault_dir: Path, approved_note: Path
    ):
        args = {"source": "Approved/d.md", "destination": "Approved/e.md"}
        await assert_refused(daemon_client, vault_dir, "move_note", args, "into_approved")


@pytest.mark.parametrize("server", ["plain", "daemon"])
async def test_given_an_approved_note_when_any_server_edits_it_then_it_is_refused(
    vault_dir: Path, approved_note: Path, server
):
    """Editing in Approved/ is refused even for the daemon's own server."""
    async with Client(build_vault_server(vault_dir, daemon_filing=server == "daemon")) as c:
        args = {"path": "Approved/d.md", "frontmatter": {"to": "evil@x.com", "subject": "s"}, "body": "other"}
        await assert_refused(c, vault_dir, "write_note", args, "edit_in_approved")
        await assert_refused(c, vault_dir, "update_frontmatter", {"path": "Approved/d.md", "set": {"status": "sent"}})
        await assert_refused(
            c, vault_dir, "write_note", {"path": "Approved/sub/new.md", "frontmatter": {}, "body": "b"}
        )
    assert approved_note.read_text() == APPROVED_TEXT


async def test_reading_approved_notes_stays_allowed(client, vault_dir: Path, approved_note: Path):
    os.symlink(vault_dir / "Approved", vault_dir / "Shortcut")
    for path in ("Approved/d.md", "Shortcut/d.md"):
        result = await client.call_tool("read_note", {"path": path})
        assert not result.is_error and "Exactly what the human approved." in result.structured_content["body"]
    listed = await client.call_tool("list_notes", {"directory": "Approved"})
    assert listed.structured_content["notes"] == ["Approved/d.md"]


class TestTheWatcherAndTheSweepAgree:
    """A note is in the approval folder iff its parent directory is `<vault>/Approved`'s real
    directory: the watcher triggers on exactly the notes the sweep lists, under the same path."""

    def triggered(self, vault_dir: Path, rel_on_disk: str) -> str | None:
        return trigger_path(str(vault_dir), str(vault_dir / rel_on_disk), ApprovalFolder(vault_dir))

    def test_given_a_note_in_approved_then_both_name_it_alike(self, vault: Vault, vault_dir: Path, approved_note: Path):
        assert self.triggered(vault_dir, "Approved/d.md") == "Approved/d.md"
        assert "Approved/d.md" in reconcile(vault, triage=False)

    def test_given_an_nfd_name_then_both_name_it_in_nfc(self, vault: Vault, vault_dir: Path):
        (vault_dir / "Approved" / NFD_NAME).write_text(APPROVED_TEXT)
        assert self.triggered(vault_dir, f"Approved/{NFD_NAME}") == f"Approved/{NFC_NAME}"
        assert reconcile(vault, triage=False) == [f"Approved/{NFC_NAME}"]

    def test_given_a_separate_lowercase_approved_folder_on_linux_then_neither_sends_from_it(
        self, vault: Vault, vault_dir: Path
    ):
        if (vault_dir / "APPROVED").exists():
            pytest.skip("a case-insensitive file system: approved/ is Approved/ here")
        (vault_dir / "approved").mkdir()
        (vault_dir / "approved/n.md").write_text(APPROVED_TEXT)
        assert self.triggered(vault_dir, "approved/n.md") is None
        assert reconcile(vault, triage=False) == []

    def test_given_a_symlinked_folder_or_note_then_neither_treats_it_as_approved(self, vault: Vault, vault_dir: Path):
        """Given `Shortcut -> Approved` and `Approved/link.md -> ../Drafts/x.md`: the shortcut is
        not a trigger folder, and a link's text lives where tools may still edit it."""
        (vault_dir / "Approved/real.md").write_text(APPROVED_TEXT)
        os.symlink(vault_dir / "Approved", vault_dir / "Shortcut")
        (vault_dir / "Drafts/x.md").write_text(DRAFT)
        os.symlink("../Drafts/x.md", vault_dir / "Approved/link.md")
        assert self.triggered(vault_dir, "Shortcut/real.md") is None
        assert self.triggered(vault_dir, "Approved/link.md") is None
        assert self.triggered(vault_dir, "Approved/real.md") == "Approved/real.md"
        assert reconcile(vault, triage=False) == ["Approved/real.md"]

    def test_given_approved_replaced_after_start_then_its_new_identity_is_learnt(self, vault_dir: Path):
        approval = ApprovalFolder(vault_dir)
        (vault_dir / "Approved").rename(vault_dir / "Approved.old")
        (vault_dir / "Approved").mkdir()
        (vault_dir / "Approved/n.md").write_text(APPROVED_TEXT)
        # A spelling other than the cached one makes it compare identities (as a case variant
        # would on macOS): the stale identity fails, is looked up again, and then matches.
        assert approval.is_approval_note(str(vault_dir / "Approved/./n.md"))
        assert not approval.is_approval_note(str(vault_dir / "Approved.old/./n.md"))


async def test_a_real_h0_mcp_vault_process_refuses_symlinks_into_approved_and_files_only_as_the_daemons_child(
    vault_dir: Path, approved_note: Path
):
    """Given `Shortcut -> Approved` and an approved note, when a real `h0 mcp vault` started
    as from .mcp.json writes through the shortcut or files the note, then both are refused;
    when one started with H0_DAEMON_CHILD=1 (as the daemon starts it) files it in Done/, it moves."""
    os.symlink(vault_dir / "Approved", vault_dir / "Shortcut")

    def server(**env: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=H0_BIN,
            args=["mcp", "vault"],
            env=subprocess_env(VAULT_PATH=str(vault_dir), LOG_LEVEL="WARNING", **env),
        )

    async with Client(server()) as plain:
        await assert_refused(plain, vault_dir, "write_note", {"path": "Shortcut/x.md", "frontmatter": {}, "body": "b"})
        await assert_refused(plain, vault_dir, "move_note", {"source": "Approved/d.md", "destination": "Done/"})
    async with Client(server(H0_DAEMON_CHILD="1")) as daemons:
        await assert_refused(
            daemons, vault_dir, "update_frontmatter", {"path": "Shortcut/d.md", "set": {"status": "sent"}}
        )
        moved = await daemons.call_tool("move_note", {"source": "Approved/d.md", "destination": "Done/"})
    assert not moved.is_error and moved.structured_content["destination"] == "Done/d.md"
    assert not approved_note.exists() and (vault_dir / "Done/d.md").read_text() == APPROVED_TEXT


class TestTheSendingClaim:
    """Logs/H0_Sender.md says which computer sends (h0.vault.sending_computer): H0 writes it, `h0 sending take` moves it.
    An agent's write could stop sending or move it to another computer — never double it — but it is still
    not an agent's to write: every MCP write, edit or move of it is refused, case and spelling variants too."""

    CLAIM = "---\ntype: h0_sender\nmachine: desk-1\nhost: DESK\nseen: 2026-11-28T10:00:00Z\n---\nH0 sends from DESK.\n"

    @pytest.fixture(autouse=True)
    def claim(self, vault_dir: Path):
        (vault_dir / "Logs/H0_Sender.md").write_text(self.CLAIM)

    @pytest.mark.parametrize("path", ["Logs/H0_Sender.md", "logs/h0_sender.md", "./Logs/../Logs/H0_Sender.md"])
    async def test_writing_or_editing_it_is_refused(self, client, vault_dir: Path, path: str):
        args = {"path": path, "frontmatter": {"machine": "agent-box", "host": "agent"}, "body": "b"}
        await assert_refused(client, vault_dir, "write_note", args, "sending_claim")
        await assert_refused(client, vault_dir, "update_frontmatter", {"path": path, "set": {"machine": "x"}})
        assert (vault_dir / "Logs/H0_Sender.md").read_text() == self.CLAIM

    async def test_moving_it_away_or_a_note_onto_it_is_refused(self, client, vault_dir: Path):
        (vault_dir / "Drafts/d.md").write_text(DRAFT)
        await assert_refused(client, vault_dir, "move_note", {"source": "Logs/H0_Sender.md", "destination": "Done/"})
        await assert_refused(
            client,
            vault_dir,
            "move_note",
            {"source": "Drafts/d.md", "destination": "Logs/H0_Sender.md", "overwrite": True},
            "sending_claim",
        )
        assert (vault_dir / "Logs/H0_Sender.md").read_text() == self.CLAIM

    async def test_writing_it_when_there_is_none_is_refused(self, client, vault_dir: Path):
        (vault_dir / "Logs/H0_Sender.md").unlink()
        args = {"path": "Logs/H0_Sender.md", "frontmatter": {"machine": "agent-box"}, "body": "b"}
        await assert_refused(client, vault_dir, "write_note", args, "sending_claim")
        assert not (vault_dir / "Logs/H0_Sender.md").exists()
