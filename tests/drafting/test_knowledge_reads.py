"""A burst's emails from one sender each read the sender's People note: the same bytes are parsed once
(h0.drafting.knowledgenotes.KnowledgeReads, by content hash), and the owner's edit a moment later, a
file swapped in with the same size and time, or a note made private, is read and judged as it is now."""

from __future__ import annotations

import os
from pathlib import Path

from h0.drafting.indexed import IndexKnowledge
from h0.drafting.knowledgenotes import KnowledgeReads, read_knowledge
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.note import content_hash

GATE = Disclosure(("journal",))
PERSON = "People/Dana Rivera.md"
NOTE = "---\nemail: dana@example.com\nlanguage: de\n---\nDana leads the Atlas project.\n"


def knowledge_of(vault: Path, tmp_path: Path) -> IndexKnowledge:
    (vault / "People").mkdir(parents=True, exist_ok=True)
    (vault / PERSON).write_text(NOTE, encoding="utf-8")
    return IndexKnowledge(VaultIndex.open(vault, tmp_path / "state", GATE))


def bodies(knowledge: IndexKnowledge) -> list[str]:
    return [note.text for note in knowledge.notes_for_address("dana@example.com")]


def test_the_same_people_note_asked_again_is_the_same_answer(tmp_path: Path):
    vault = tmp_path / "vault"
    knowledge = knowledge_of(vault, tmp_path)
    first = knowledge.notes_for_address("dana@example.com")
    again = knowledge.notes_for_address("dana@example.com")
    assert [n.text for n in first] == [n.text for n in again] == ["Dana leads the Atlas project."]
    assert again[0].frontmatter is first[0].frontmatter  # the same bytes: the parse kept, not made again


def test_the_owner_s_edit_a_moment_later_is_read(tmp_path: Path):
    vault = tmp_path / "vault"
    knowledge = knowledge_of(vault, tmp_path)
    assert bodies(knowledge) == ["Dana leads the Atlas project."]
    (vault / PERSON).write_text(NOTE.replace("leads", "joined"), encoding="utf-8")
    knowledge.changed(str(vault / PERSON))
    assert bodies(knowledge) == ["Dana joined the Atlas project."]


def test_a_file_swapped_in_with_the_same_size_and_time_is_read(tmp_path: Path):
    vault = tmp_path / "vault"
    knowledge = knowledge_of(vault, tmp_path)
    assert bodies(knowledge) == ["Dana leads the Atlas project."]
    path = vault / PERSON
    before = os.stat(path)
    path.write_text(NOTE.replace("Atlas", "Orion"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert bodies(knowledge) == ["Dana leads the Orion project."]  # the index was told nothing: read as it is


def test_a_note_made_private_a_moment_ago_is_never_shown(tmp_path: Path):
    vault = tmp_path / "vault"
    knowledge = knowledge_of(vault, tmp_path)
    assert bodies(knowledge) == ["Dana leads the Atlas project."]
    (vault / PERSON).write_text(NOTE.replace("language: de", "private: true"), encoding="utf-8")
    assert bodies(knowledge) == []  # judged on the bytes as they are now, before the index hears of it


def test_the_answers_kept_are_bounded(tmp_path: Path):
    reads = KnowledgeReads(limit=2, chars=60)
    for k in range(3):
        (tmp_path / f"n{k}.md").write_text(f"# Note {k}\n" + "x" * 20, encoding="utf-8")
        read_knowledge(tmp_path, f"n{k}.md", GATE, reads)
    kept = [k for k in range(3) if reads.get(f"n{k}.md", _digest(tmp_path / f"n{k}.md")) is not None]
    assert kept == [1, 2]
    (tmp_path / "big.md").write_text("y" * 100, encoding="utf-8")
    read_knowledge(tmp_path, "big.md", GATE, reads)
    assert reads.get("big.md", _digest(tmp_path / "big.md")) is None  # over the characters kept: not kept


def _digest(path: Path) -> str:
    return content_hash(path.read_bytes())
