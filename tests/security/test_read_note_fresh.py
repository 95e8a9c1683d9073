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

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import H0_BIN, subprocess_env

pytestmark = pytest.mark.anyio


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
