"""read_note answers from what is on disk at the call, whatever it answered before: a note made private
between two reads of one real `h0 mcp vault` process is refused at the second — by its own mark, a `#private`
in its text, a move into a private folder, its folder recorded as private, its sender's People note made
private. The edits keep the file's size, inode and modification time where they can (a sync tool that sets
the time it was given, an edit within one tick of the clock): nothing may answer from a parse or a verdict
kept by the file's signature alone."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import H0_BIN, subprocess_env

pytestmark = pytest.mark.anyio

EVENT_WAIT_S = 10.0  # a hang guard for the index's watcher to report an edit; the test waits for the answer


def params(vault_dir: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=H0_BIN,
        args=["mcp", "vault"],
        env=subprocess_env(VAULT_PATH=str(vault_dir), PRIVATE_FOLDERS="Journal", LOG_LEVEL="WARNING"),
    )


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Replace `old` by `new` (the same length) in place, keeping the file's inode, size and mtime_ns."""
    assert len(old.encode()) == len(new.encode())
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    with open(path, "r+b") as handle:  # the same inode: no new file renamed over it
        handle.write(text.replace(old, new).encode("utf-8"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def refusal(result: Any) -> dict[str, Any]:
    assert result.is_error and result.structured_content is None, result
    return dict(json.loads(result.content[0].text))


async def read(client: Client, rel: str) -> dict[str, Any]:
    result = await client.call_tool("read_note", {"path": rel})
    assert not result.is_error, result.content[0].text
    return dict(result.structured_content)


async def test_a_note_made_private_between_two_reads_is_refused_at_the_second(vault_dir: Path):
    """Given notes read once through a real vault server (after its index parsed them), when one is marked
    `private: on`, one gets `#private` in its text (both in place: same size, inode and time) and one is moved
    into a private folder, then reading each again is refused as private, and a public note still reads."""
    notes = vault_dir / "Notes"
    notes.mkdir()
    (notes / "mark.md").write_text("---\nkind: plan\nprivate: no\n---\nThe Atlas plan.\n", encoding="utf-8")
    (notes / "tag.md").write_text("---\nkind: plan\n---\nSession notes #publics\n", encoding="utf-8")
    (notes / "moved.md").write_text("---\nkind: plan\n---\nDiary, for now in Notes.\n", encoding="utf-8")
    (notes / "public.md").write_text("---\nkind: plan\nprivate: no\n---\nThe public plan.\n", encoding="utf-8")
    async with Client(params(vault_dir)) as client:
        await client.call_tool("search_notes", {"query": "Atlas"})  # the index has parsed every note
        for name in ("mark", "tag", "moved", "public"):
            first = await read(client, f"Notes/{name}.md")
            assert first["frontmatter"]["kind"] == "plan"
        assert (await read(client, "Notes/mark.md"))["frontmatter"]["private"] == "no"

        edit_in_place(notes / "mark.md", "private: no", "private: on")
        edit_in_place(notes / "tag.md", "#publics", "#private")
        (vault_dir / "Journal").mkdir()
        os.rename(notes / "moved.md", vault_dir / "Journal/moved.md")

        for rel in ("Notes/mark.md", "Notes/tag.md", "Journal/moved.md"):
            refused = refusal(await client.call_tool("read_note", {"path": rel}))
            assert refused["error"] == "permission_denied" and refused["details"]["reason"] == "private", rel
            assert "Atlas" not in refused["message"] and "Diary" not in refused["message"]
        many = (await client.call_tool("read_notes", {"paths": ["Notes/mark.md", "Notes/tag.md"]})).structured_content
        assert many["notes"] == [] and {e["error"] for e in many["errors"]} == {"permission_denied"}
        assert (await read(client, "Notes/public.md"))["body"] == "The public plan.\n"
        # Back to public in place: the answer is the file's text now, not a kept one.
        edit_in_place(notes / "mark.md", "private: on", "private: no")
        again = await read(client, "Notes/mark.md")
        assert again["frontmatter"] == {"kind": "plan", "private": "no"} and again["body"] == "The Atlas plan.\n"


async def until_refused(client: Client, rel: str) -> dict[str, Any]:
    """Read `rel` until it is refused (the index's watcher reports the edit that makes it private)."""
    with anyio.fail_after(EVENT_WAIT_S):
        while True:
            result = await client.call_tool("read_note", {"path": rel})
            if result.is_error:
                return refusal(result)


async def test_a_folder_recorded_private_or_a_private_person_counts_at_the_next_read(vault_dir: Path):
    """Given a note and an email read once through a real vault server, when the note's folder is added to
    `.h0/private-folders` (as the owner edits it), then the next read of the note is refused — no restart; and
    when the sender's People note is marked private, the email is refused once the server hears of the edit."""
    (vault_dir / ".h0").mkdir(exist_ok=True)
    (vault_dir / ".h0/private-folders").write_text("# private folders\nDiary\n", encoding="utf-8")
    (vault_dir / "Health").mkdir()
    (vault_dir / "Health/check.md").write_text("---\nkind: plan\n---\nResults.\n", encoding="utf-8")
    (vault_dir / "People").mkdir()
    (vault_dir / "People/Dana.md").write_text("---\nemail: dana@clinic.example\n---\nDana.\n", encoding="utf-8")
    (vault_dir / "Needs_Action/EMAIL_dana.md").write_text(
        "---\ntype: email\nfrom: dana@clinic.example\nsubject: Your results\nstatus: pending\n---\nResults.\n",
        encoding="utf-8",
    )
    async with Client(params(vault_dir)) as client:
        await client.call_tool("search_notes", {"query": "Results"})
        assert (await read(client, "Health/check.md"))["body"] == "Results.\n"
        assert (await read(client, "Needs_Action/EMAIL_dana.md"))["frontmatter"]["from"] == "dana@clinic.example"

        record = vault_dir / ".h0/private-folders"
        record.write_text("# private folders\nDiary\nHealth\n", encoding="utf-8")
        refused = refusal(await client.call_tool("read_note", {"path": "Health/check.md"}))
        assert refused["error"] == "permission_denied" and refused["details"]["reason"] == "private"
        listed = (await client.call_tool("list_notes", {"directory": "", "recursive": True})).structured_content
        assert "Health/check.md" not in listed["notes"] and "Needs_Action/EMAIL_dana.md" in listed["notes"]
        found = (await client.call_tool("search_notes", {"query": "Results"})).structured_content
        assert [n["path"] for n in found["notes"]] == ["Needs_Action/EMAIL_dana.md"]
        record.write_text("# private folders\nDiary\n", encoding="utf-8")
        assert (await read(client, "Health/check.md"))["body"] == "Results.\n"  # the owner's call, both ways

        (vault_dir / "People/Dana.md").write_text(
            "---\nemail: dana@clinic.example\nprivate: true\n---\nDana.\n", encoding="utf-8"
        )
        refused = await until_refused(client, "Needs_Action/EMAIL_dana.md")
        assert refused["error"] == "permission_denied" and refused["details"]["reason"] == "private"
        assert "clinic" not in refused["message"]
