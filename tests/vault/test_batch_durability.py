"""`Vault.batch`: every write and move of a batch durable when the batch ends, each folder fsynced
once instead of once per note; and `AuditLog.write_many`: a batch's records in one append."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.errors import Conflict
from h0.vault import AuditLog, Vault
from h0.vault import store as store_module


@pytest.fixture
def synced(monkeypatch) -> list[str]:
    calls: list[str] = []
    monkeypatch.setattr(store_module, "fsync_dir", lambda directory, **_: calls.append(Path(directory).name))
    return calls


def test_outside_a_batch_each_write_fsyncs_its_folder(vault: Vault, synced: list[str]):
    for i in range(3):
        vault.write_note(f"Drafts/d{i}.md", {"to": "a@example.com"}, "x\n")
    assert synced == ["Drafts"] * 3


def test_a_batch_fsyncs_each_folder_once_when_it_ends_not_before(vault: Vault, synced: list[str]):
    with vault.batch():
        for i in range(50):
            vault.write_note(f"Drafts/d{i}.md", {"to": "a@example.com"}, "x\n")
            vault.write_note(f"Needs_Action/e{i}.md", {"status": "pending"}, "y\n")
        vault.move_note("Needs_Action/e0.md", "Done/")
        assert synced == []  # deferred: nobody has been told yet that these notes are written
    assert sorted(synced) == ["Done", "Drafts", "Needs_Action"]


def test_a_batch_that_fails_halfway_still_makes_what_it_wrote_durable(vault: Vault, synced: list[str]):
    vault.write_note("Drafts/taken.md", {}, "mine\n")
    synced.clear()
    with pytest.raises(Conflict), vault.batch():
        vault.write_note("Drafts/new.md", {}, "x\n")
        vault.write_note("Drafts/taken.md", {}, "not mine\n", create_only=True)
    assert synced == ["Drafts"]


def test_nested_batches_join_the_outer_one(vault: Vault, synced: list[str]):
    with vault.batch():
        with vault.batch():
            vault.write_note("Drafts/a.md", {}, "x\n")
        assert synced == []
    assert synced == ["Drafts"]


def test_write_many_appends_every_record_in_order(vault_dir: Path):
    audit = AuditLog(vault_dir / "Logs", "vault_mcp")
    audit.write("first")
    audit.write_many([("note_written", {"path": f"Drafts/d{i}.md", "hash": None}) for i in range(3)])
    audit.write_many([])
    records = list(audit.records())
    assert [r["event"] for r in records] == ["first"] + ["note_written"] * 3
    assert [r.get("path") for r in records[1:]] == ["Drafts/d0.md", "Drafts/d1.md", "Drafts/d2.md"]
    assert all("hash" not in r and r["severity"] == "info" for r in records[1:])
