"""The notes' names kept in memory (h0.vault.index.names): an email's notes are the same as when every
phrase of it is looked up, and a name added, renamed or deleted a moment ago counts at once — by this
index, by another process's index on the same file, and after the file is rebuilt."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import h0.vault.index.names as names_module
from h0.vault.disclosure import Disclosure, folder_keys
from h0.vault.index import VaultIndex

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PRIVATE = Disclosure(("journal",))


def about(index: VaultIndex, text: str, addresses: tuple[str, ...] = ()) -> list[tuple[str, float, list[str]]]:
    return [(a.path, a.score, a.why) for a in index.about(text=text, addresses=addresses, limit=10)]


def named(index: VaultIndex, text: str) -> list[str]:
    return [a.path for a in index.about(text=text, limit=10) if any(w.startswith("the email names") for w in a.why)]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_an_emails_notes_are_the_same_as_when_every_phrase_is_looked_up(tmp_path: Path, monkeypatch):
    """Given the knowledge vault and its 22 emails (and one too long for every phrase to be looked up),
    when the notes each is about are found with the names kept and without them (past MAX_NAMES),
    then they are the same notes, scores and reasons."""
    spec = json.loads((FIXTURES / "relatedness.json").read_text(encoding="utf-8"))
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "knowledge_vault", vault)
    index = VaultIndex.open(vault, tmp_path / "state", Disclosure(folder_keys(spec["private_folders"])))
    emails = [(f"{e['subject']}\n{e['body']}", (e["from"].rsplit("<", 1)[-1].strip(">"),)) for e in spec["emails"]]
    long_text = " ".join(f"{e[0]} atlas migration lee park" for e in emails)  # past MAX_KEYS / 4 words
    emails.append((long_text, ()))
    kept = [about(index, text, addresses) for text, addresses in emails]
    assert index.names.current() is not None
    assert sum(1 for found in kept if any("the email names" in w for _, _, why in found for w in why)) >= 3
    monkeypatch.setattr(names_module, "MAX_NAMES", 0)
    fresh = VaultIndex.open(vault, tmp_path / "state", Disclosure(folder_keys(spec["private_folders"])))
    assert fresh.names.current() is None  # too many names to keep: every phrase is looked up
    assert [about(fresh, text, addresses) for text, addresses in emails] == kept


def test_a_name_added_renamed_or_deleted_a_moment_ago_counts(tmp_path: Path):
    """Given an index that has looked an email up (its names kept), when the owner writes a note, renames
    it and deletes it, each reported by the watcher, then the next look-up sees each change."""
    vault = tmp_path / "vault"
    write(vault / "Projects" / "Atlas Migration.md", "The Atlas migration plan.\n")
    index = VaultIndex.open(vault, tmp_path / "state", PRIVATE)
    text = "Hi, about the Quanta rollout and the atlas migration: any news?"
    assert named(index, text) == ["Projects/Atlas Migration.md"]
    note = vault / "Projects" / "Quanta Rollout.md"
    write(note, "---\naliases: [rollout plan]\n---\nThe rollout.\n")
    index.changed([str(note)])
    assert sorted(named(index, text)) == ["Projects/Atlas Migration.md", "Projects/Quanta Rollout.md"]
    assert named(index, "Where is the rollout plan?") == ["Projects/Quanta Rollout.md"]  # an alias
    renamed = vault / "Projects" / "Quanta Launch.md"
    note.rename(renamed)
    index.changed([str(note), str(renamed)])
    assert named(index, text) == ["Projects/Atlas Migration.md"]
    assert named(index, "The quanta launch is Friday.") == ["Projects/Quanta Launch.md"]
    renamed.unlink()
    index.changed([str(renamed)])
    assert named(index, "The quanta launch is Friday.") == []


def test_a_name_another_process_indexed_counts(tmp_path: Path):
    """Given two indexes on one file (the daemon's and the vault server's), when the other indexes a new
    note first, then this one — whose own sync finds the note already indexed — names it too."""
    vault = tmp_path / "vault"
    write(vault / "Notes" / "Brightline.md", "Brightline GmbH, our vendor.\n")
    mine = VaultIndex.open(vault, tmp_path / "state", PRIVATE)
    theirs = VaultIndex.open(vault, tmp_path / "state", PRIVATE)
    text = "The northwind summit agenda, please."
    assert named(mine, text) == []
    note = vault / "Events" / "Northwind Summit.md"
    write(note, "Agenda of the summit.\n")
    theirs.changed([str(note)])
    theirs.sync()
    mine.changed([str(note)])
    assert named(mine, text) == ["Events/Northwind Summit.md"]
    write(note, "---\nprivate: true\n---\nAgenda.\n")  # the look-up that follows still judges each note
    theirs.changed([str(note)])
    theirs.sync()
    assert named(mine, text) == []


def test_names_are_read_again_from_a_rebuilt_index(tmp_path: Path):
    """Given kept names, when the index file is deleted and rebuilt from a vault that changed meanwhile,
    then the names are the rebuilt file's."""
    vault = tmp_path / "vault"
    write(vault / "Notes" / "Quanta Dashboard.md", "The dashboard.\n")
    index = VaultIndex.open(vault, tmp_path / "state", PRIVATE)
    assert named(index, "Is the quanta dashboard up?") == ["Notes/Quanta Dashboard.md"]
    assert index.db.path is not None
    index.db.path.unlink()
    (vault / "Notes" / "Quanta Dashboard.md").rename(vault / "Notes" / "Quanta Board.md")
    assert named(index, "Is the quanta dashboard up?") == []
    assert named(index, "Is the quanta board up?") == ["Notes/Quanta Board.md"]


@pytest.mark.parametrize("text", ["", "   \n", "Hi!"])
def test_an_email_with_no_words_or_no_names_finds_no_named_note(tmp_path: Path, text: str):
    vault = tmp_path / "vault"
    write(vault / "Notes" / "Hi There.md", "x\n")
    index = VaultIndex.open(vault, tmp_path / "state", PRIVATE)
    assert named(index, text) == []
