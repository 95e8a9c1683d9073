"""Copies of a note: the names sync tools give them (h0.vault.copies) and what the send ledger answers for
them (h0.state.ledger: `copy`, `filing`). The daemon end to end: tests/pipeline/test_sync_copies.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from h0.errors import Conflict, Refusal
from h0.mail.copies import copy_of_sent, wait_for_original
from h0.state import StateDB
from h0.vault.copies import is_copy_name, original_name
from h0.vault.paths import PathResolver


@pytest.mark.parametrize(
    ("name", "original"),
    [
        ("note.sync-conflict-20261128-101010-ABCDEFG.md", "note.md"),  # Syncthing
        ("note 2.md", "note.md"),  # iCloud Drive
        ("note 14.md", "note.md"),
        ("note (conflicted copy 2026-11-28).md", "note.md"),  # Dropbox
        ("note (Mara's conflicted copy 2026-11-28).md", "note.md"),
        ("note (Conflicted copy Mara's iPhone 202611281010).md", "note.md"),  # Obsidian Sync
        ("note (Case Conflict).md", "note.md"),
        ("note (Mara's iPhone).md", "note.md"),  # a device's copy
        ("note (Mara’s MacBook Pro).md", "note.md"),
        ("note (1).md", "note.md"),  # browsers, Google Drive
        ("note 2 (1).md", "note.md"),  # a copy of a copy
        ("note.sync-conflict-20261128-101010-ABCDEFG 2.md", "note.md"),
        ("REPLY_EMAIL_abc 2.md", "REPLY_EMAIL_abc.md"),
    ],
)
def test_given_a_sync_tools_copy_name_then_its_original_name(name: str, original: str):
    assert original_name(name) == original and is_copy_name(name)


@pytest.mark.parametrize(
    "name",
    ["note.md", "Q3 2026.md", "Meeting (draft).md", "2.md", " (1).md", "note.sync-conflict.md", "Re: 1.md", "a.txt"],
)
def test_given_a_name_no_sync_tool_makes_then_it_is_its_own_original(name: str):
    assert original_name(name) == name and not is_copy_name(name)


def claim(db: StateDB, key: str, note_path: str | None, *, note_hash: str = "h", **extra):
    return db.claim_send(
        key=key,
        rfc822_message_id=f"<{key}-{note_path}@t>",
        content_hash="c",
        caps=(),
        in_flight_s=120.0,
        note_path=note_path,
        note_hash=note_hash,
        **extra,
    )


def sent(db: StateDB, key: str, note_path: str, *, ago: float = 0.0) -> None:
    db.mark_sent(
        f"<{key}-{note_path}@t>",
        provider_message_id="p",
        thread_id=None,
        sent_at="2026-11-28T10:10:10.000Z",
        backend="outbox",
        now=time.time() - ago,
    )


def test_given_a_message_sent_for_one_note_then_another_note_with_it_is_a_copy(tmp_path: Path):
    """Given a send of Approved/a.md, when another note claims the same key, then the answer is `filing` while
    the original's note is not filed yet (moments after the send) and `copy` once it is filed; the original
    itself, not yet filed, is `already_sent` (a crash between the send and the filing)."""
    db = StateDB(tmp_path)
    assert claim(db, "k", "Approved/a.md").status == "claimed"
    sent(db, "k", "Approved/a.md")
    assert claim(db, "k", "Approved/a 2.md").status == "filing"
    assert claim(db, "k", "Approved/a.md").status == "already_sent"
    db.mark_filed("<k-Approved/a.md@t>", "Done/a.md")
    copy = claim(db, "k", "Approved/a 2.md")
    assert copy.status == "copy" and copy.row is not None and copy.row["filed_path"] == "Done/a.md"
    assert claim(db, "k", "Approved/a.md").status == "copy"  # the same path again, after it was filed
    assert claim(db, "k", None).status == "already_sent"  # free content has no note: no copy


def test_given_an_unfiled_send_of_long_ago_then_another_note_is_a_copy_of_it(tmp_path: Path):
    db = StateDB(tmp_path)
    claim(db, "k", "Approved/a.md")
    sent(db, "k", "Approved/a.md", ago=600)  # never filed (its filing failed): not waited for forever
    assert claim(db, "k", "Approved/b.md").status == "copy"


def test_given_an_unknown_outcome_then_the_note_is_unresolved_and_another_note_a_copy(tmp_path: Path):
    db = StateDB(tmp_path)
    claim(db, "k", "Approved/a.md")
    db.mark_failed("<k-Approved/a.md@t>", error="send_failed", reason="lost after DATA", unknown=True)
    assert claim(db, "k", "Approved/a.md").status == "unresolved"
    assert claim(db, "k", "Approved/a 2.md").status == "filing"
    db.mark_filed("<k-Approved/a.md@t>", "Done/a.md")
    assert claim(db, "k", "Approved/a 2.md").status == "copy"


def test_given_the_same_bytes_sent_under_another_key_then_a_copy_only_when_asked(tmp_path: Path):
    """Given a note's bytes sent under one key, when a note with the same bytes claims another key (its
    attachment changed since, or the key's recipe did), then it is a copy — unless it is `send_anyway`."""
    db = StateDB(tmp_path)
    claim(db, "k1", "Approved/a.md", note_hash="bytes")
    sent(db, "k1", "Approved/a.md")
    assert claim(db, "k2", "Approved/b.md", note_hash="bytes", copies_by_bytes=True).status == "copy"
    assert claim(db, "k3", "Approved/c.md", note_hash="bytes", copies_by_bytes=False).status == "claimed"


def test_given_a_copy_then_its_refusal_says_when_the_original_went_and_where(tmp_path: Path):
    row = {"state": "sent", "sent_at": "2026-11-28T10:10:10.000Z", "filed_path": "Done/a.md", "note_path": "x"}
    error = copy_of_sent(row, path="Approved/a 2.md")
    assert isinstance(error, Conflict) and error.refusal is Refusal.COPY_OF_SENT
    assert "already sent on 2026-11-28 10:10 UTC (Done/a.md)" in error.message and "send_anyway" in error.message
    unknown = copy_of_sent({"state": "unknown", "started_at": 0.0, "filed_path": "Done/a.md"})
    assert "may or may not have gone out" in unknown.message and "1970-01-01 00:00 UTC" in unknown.message


def test_given_a_copy_beside_its_original_in_approved_then_it_waits(vault_dir: Path):
    resolver = PathResolver(vault_dir)
    (vault_dir / "Approved/a 2.md").write_text("x")
    wait_for_original(resolver, "Approved/a 2.md")  # no original: goes on
    (vault_dir / "Approved/a.md").write_text("x")
    with pytest.raises(Conflict) as waits:
        wait_for_original(resolver, "Approved/a 2.md")
    assert waits.value.refusal is Refusal.ORIGINAL_WAITING and waits.value.details["original"] == "Approved/a.md"
    wait_for_original(resolver, "Approved/a.md")  # the original itself never waits
