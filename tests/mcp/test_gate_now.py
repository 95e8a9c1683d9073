"""GateNow: the vault server's gate follows `.h0/private-folders` (and, without it, the diary folders) as they
are at each call, judged by the files' signatures; a file changed within RACY_NS is never trusted by its
signature (two edits in one tick of the file system's clock would share one)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from h0.mcp.gate_now import RACY_NS, GateNow


def later() -> int:
    """A clock past the racy window of every file written so far: signatures are trusted."""
    return time.time_ns() + 2 * RACY_NS


def test_an_edited_record_counts_at_the_next_call_both_ways(vault_dir: Path):
    record = vault_dir / ".h0" / "private-folders"
    record.parent.mkdir(exist_ok=True)
    record.write_text("Health\n", encoding="utf-8")
    gates = GateNow(vault_dir, "Journal", clock=later)
    first = gates()
    assert first.never("Health/a.md") and first.never("Journal/a.md") and not first.never("Notes/a.md")
    assert gates() is first  # unchanged signatures: the same gate, nothing read again
    record.write_text("Health\nNotes\n", encoding="utf-8")
    assert gates().never("Notes/a.md")
    record.write_text("Health\n", encoding="utf-8")  # the owner may un-private a folder too
    assert not gates().never("Notes/a.md")
    record.unlink()  # no record: the diary folders count (none here), the setting still does
    assert not gates().never("Health/a.md") and gates().never("Journal/a.md")


def test_without_a_record_a_diary_folder_made_later_is_private_at_once(vault_dir: Path):
    gates = GateNow(vault_dir, "", clock=later)
    assert not gates().never("Diary/2026-11-28.md")
    (vault_dir / "Diary").mkdir()
    assert gates().never("Diary/2026-11-28.md")
    (vault_dir / ".obsidian").mkdir(exist_ok=True)
    (vault_dir / ".obsidian" / "daily-notes.json").write_text('{"folder": "Days"}', encoding="utf-8")
    assert gates().never("Days/2026-11-28.md")


def test_a_recent_record_is_read_again_and_one_rewritten_keeping_size_inode_and_mtime_counts(vault_dir: Path):
    """Given a record written just now, each call reads it again (a second save within the same tick of the
    clock would keep every time stamp); and a rewrite that keeps its size, inode and mtime (a sync tool setting
    the time it was given) counts at the next call."""
    record = vault_dir / ".h0" / "private-folders"
    record.parent.mkdir(exist_ok=True)
    record.write_text("Aaaaaa\n", encoding="utf-8")
    gates = GateNow(vault_dir, "")  # the real clock: the record was written just now
    assert gates().never("Aaaaaa/x.md")
    assert gates() is not gates()  # not trusted by its signature while it is this recent
    before = record.stat()
    with open(record, "r+b") as handle:
        handle.write(b"Health\n")
    os.utime(record, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert gates().never("Health/x.md") and not gates().never("Aaaaaa/x.md")


def test_a_record_that_cannot_be_read_keeps_every_note_private(vault_dir: Path):
    record = vault_dir / ".h0" / "private-folders"
    record.parent.mkdir(exist_ok=True)
    record.write_text("Health\n", encoding="utf-8")
    gates = GateNow(vault_dir, "", clock=later)
    assert not gates().never("Notes/a.md")
    record.unlink()
    os.mkfifo(record)
    refused = gates()
    assert refused.never("Notes/a.md") and refused.unreadable is not None
