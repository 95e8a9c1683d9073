"""A large first build of the vault index is made by a child process (h0.vault.index.gather.build_in_child): the
process that then opens the index — the vault server, the daemon — only compares the vault with what the child
wrote, so the build's thousands of parsed notes never stay in its memory (benchmarks.md: the server's RSS after
a first start). The child's index is the one the process would have built: the same notes, the same private ones."""

from __future__ import annotations

from pathlib import Path

import pytest

import h0.vault.index as index_module
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.index.gather import build_in_child, index_file

NOTES = 30


def vault_of(root: Path) -> Path:
    for i in range(NOTES - 3):
        path = root / "Notes" / f"n{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nkind: plan\n---\nAtlas note {i}\n", encoding="utf-8")
    (root / "Notes/tagged.md").write_text("---\nthread_id: T-1\n---\nBetween us #private\n", encoding="utf-8")
    (root / "Notes/mate.md").write_text("---\nthread_id: T-1\n---\nAtlas call\n", encoding="utf-8")
    (root / "Journal").mkdir()
    (root / "Journal/day.md").write_text("Atlas diary\n", encoding="utf-8")
    return root


def test_a_child_builds_the_index_file_and_the_parent_only_compares(tmp_path: Path):
    vault = vault_of(tmp_path / "vault")
    db = index_file(vault, tmp_path / "state")
    assert db is not None and build_in_child(vault, db)
    index = VaultIndex(vault, db, Disclosure(("journal",)))  # this process has read no note yet
    assert index.count() == NOTES
    report = index.reconcile(elsewhere=False)
    assert (report.indexed, report.unchanged) == (0, NOTES)
    assert index.is_private("Notes/tagged.md") and index.is_private("Notes/mate.md")
    assert index.is_private("Journal/day.md") and not index.is_private("Notes/n1.md")
    assert "Notes/n1.md" in {hit.path for hit in index.search("Atlas note 1", limit=50).hits}


def test_a_build_past_the_threshold_is_handed_to_a_child_and_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(index_module, "CHILD_FROM", 10)
    vault = vault_of(tmp_path / "vault")
    index = VaultIndex.open(vault, tmp_path / "state", Disclosure(("journal",)), reconcile=False)
    report = index.reconcile()
    assert (report.indexed, report.unchanged) == (NOTES, 0) and index.count() == NOTES
    assert index.shown(["Notes/n2.md", "Notes/mate.md", "Journal/day.md"]) == ["Notes/n2.md"]
