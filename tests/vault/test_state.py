"""H0's state database: the secret, "already sent" bound to content, caps and keys across processes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from h0.state import Cap, StateDB, state_dir_for
from tests.statedb import crash_edit, crash_rows

ROOT = Path(__file__).resolve().parents[2]


def claim(db: StateDB, key: str, content: str = "c", *, caps=(), rfc: str | None = None, **fields):
    return db.claim_send(
        key=key, rfc822_message_id=rfc or f"<{key}@t>", content_hash=content, caps=caps, in_flight_s=120.0, **fields
    )


def test_given_a_vault_then_its_state_lives_outside_it_with_a_private_secret(tmp_path: Path, vault_dir: Path):
    """Given a vault, when H0 opens its state, then the folder is outside the vault, the secret file is
    mode 0600, and the secret is the same every time (keys survive restarts)."""
    db = StateDB.for_vault(vault_dir, tmp_path / "state")
    assert not db.directory.is_relative_to(vault_dir)
    assert db.directory == state_dir_for(vault_dir, tmp_path / "state")
    secret = db.secret
    mode = stat.S_IMODE((db.directory / "secret.key").stat().st_mode)
    assert mode == 0o600
    again = StateDB.for_vault(vault_dir, tmp_path / "state")
    assert again.secret == secret and len(secret) == 32
    assert db.mac("k", "x") == again.mac("k", "x") != db.mac("other", "x")
    other_vault = tmp_path / "other"
    other_vault.mkdir()
    assert StateDB.for_vault(other_vault, tmp_path / "state").directory != db.directory


def test_given_a_key_sent_then_the_same_content_is_already_sent_and_other_content_is_a_conflict(tmp_path: Path):
    db = StateDB(tmp_path)
    assert claim(db, "k", "content-A").status == "claimed"
    db.mark_sent("<k@t>", provider_message_id="p1", thread_id="t1", sent_at="2026-01-01T00:00:00Z", backend="gmail")
    again = claim(db, "k", "content-A")
    assert again.status == "already_sent" and again.row["provider_message_id"] == "p1"
    forged = claim(db, "k", "content-B")
    assert forged.status == "conflict"


def test_given_a_pending_send_of_a_live_process_then_in_progress_and_of_a_dead_one_unresolved(tmp_path: Path):
    db = StateDB(tmp_path)
    assert claim(db, "k").status == "claimed"
    assert crash_edit(db.path, "UPDATE sends SET pid = ?", (os.getppid(),))
    assert claim(db, "k").status == "in_progress"
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    assert crash_edit(db.path, "UPDATE sends SET pid = ?", (child.pid,))
    assert claim(db, "k").status == "unresolved"
    db.mark_failed("<k@t>", error="send_failed", reason="never reached the provider")
    assert claim(db, "k").status == "claimed"


def test_given_the_cap_reached_then_rate_limited_with_the_time_a_slot_frees(tmp_path: Path):
    db = StateDB(tmp_path)
    cap = Cap(3600.0, 2, "hourly")
    now = time.time()
    for key in ("a", "b"):
        assert claim(db, key, caps=[cap]).status == "claimed"
        db.mark_sent(f"<{key}@t>", provider_message_id=key, thread_id=None, sent_at="x", backend="b", now=now - 600)
    limited = claim(db, "c", caps=[cap])
    assert limited.status == "rate_limited" and limited.cap == cap
    assert 2990 <= limited.retry_after <= 3010
    assert len(db.sends_within(3600.0)) == 2


def test_given_a_pending_send_then_it_counts_against_the_cap(tmp_path: Path):
    db = StateDB(tmp_path)
    cap = Cap(3600.0, 1, "hourly")
    assert claim(db, "a", caps=[cap]).status == "claimed"
    assert claim(db, "b", caps=[cap]).status == "rate_limited"


def test_given_an_email_already_answered_then_a_second_reply_is_refused_unless_not_exclusive(tmp_path: Path):
    db = StateDB(tmp_path)
    assert claim(db, "r1", reply_to="m1", source="Needs_Action/EMAIL_1.md", exclusive_reply=True).status == "claimed"
    db.mark_sent("<r1@t>", provider_message_id="p", thread_id=None, sent_at="x", backend="b")
    second = claim(db, "r2", reply_to="m1", exclusive_reply=True)
    assert second.status == "answered" and second.row["idempotency_key"] == "r1"
    assert claim(db, "r3", source="Needs_Action/EMAIL_1.md", exclusive_reply=True).status == "answered"
    assert claim(db, "r4", reply_to="m1", exclusive_reply=False).status == "claimed"  # send_anyway


def test_given_a_sent_note_then_it_is_unfiled_until_marked_and_found_by_name(tmp_path: Path):
    db = StateDB(tmp_path)
    claim(db, "k", note_path="Approved/reply.md", note_hash="h")
    db.mark_sent("<k@t>", provider_message_id="p", thread_id=None, sent_at="x", backend="b")
    assert [r["note_path"] for r in db.unfiled_sends(3600)] == ["Approved/reply.md"]
    assert [r["idempotency_key"] for r in db.recently_sent_named("reply.md", 3600)] == ["k"]
    db.mark_filed("<k@t>", "Done/reply.md")
    assert db.unfiled_sends(3600) == []


def test_given_attachments_first_seen_then_later_reads_get_the_first_hashes(tmp_path: Path):
    db = StateDB(tmp_path)
    assert db.first_seen_attachments("Approved/a.md", "h1", {"f.pdf": "aaa"}) == {"f.pdf": "aaa"}
    assert db.first_seen_attachments("Approved/a.md", "h1", {"f.pdf": "bbb"}) == {"f.pdf": "aaa"}
    assert db.first_seen_attachments("Approved/a.md", "h2", {"f.pdf": "bbb"}) == {"f.pdf": "bbb"}


_RACER = """
import json, sys, time
from h0.state import Cap, StateDB
db = StateDB(sys.argv[1])
start = float(sys.argv[3])
while time.time() < start:
    time.sleep(0.001)
results = []
for i in range(int(sys.argv[4])):
    key = sys.argv[2] if i == 0 else f"{sys.argv[2]}-{i}"
    c = db.claim_send(key=key, rfc822_message_id=f"<{key}@t>", content_hash="c",
                      caps=[Cap(3600.0, int(sys.argv[5]), "hourly")], in_flight_s=120.0)
    results.append(c.status)
print(json.dumps(results))
"""


@pytest.mark.parametrize("processes", [4])
def test_given_processes_racing_then_one_claims_a_shared_key_and_the_cap_holds_across_them(
    tmp_path: Path, processes: int
):
    """Given several processes claiming at the same instant, when they share one key and each claims
    more sends than the cap allows, then exactly one process wins the shared key and the capped
    processes claim no more sends than the cap in total. (The extra racers on the shared key have a
    cap of 1,000 so that someone always wins it: one of them may claim it after the capped ones
    filled the cap, so the rows may number cap + 1.)"""
    StateDB(tmp_path)  # create the schema once
    start = time.time() + 1.0
    cap, per_process = 5, 4
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _RACER,
                str(tmp_path),
                "shared" if n == 0 else f"own{n}",
                str(start),
                str(per_process),
                str(cap),
            ],
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        for n in range(processes)
    ]
    # Every process also races on the shared key with its first claim.
    shared = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(tmp_path), "shared", str(start), "1", "1000"],
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        for _ in range(processes)
    ]
    outcomes = [json.loads(p.communicate(timeout=60)[0]) for p in children + shared]
    statuses = [s for result in outcomes for s in result]
    db = StateDB(tmp_path)
    rows = crash_rows(db.path, "SELECT idempotency_key FROM sends")
    assert statuses.count("claimed") == len(rows) <= cap + 1
    capped = [s for result in outcomes[:processes] for s in result]
    assert capped.count("claimed") <= cap  # each was made while fewer than `cap` sends were recorded
    assert sum(1 for r in rows if r["idempotency_key"] == "shared") == 1
    assert "rate_limited" in statuses
    # The losers of the shared key saw it pending in its winner (alive or, if it already exited, dead).
    assert set(statuses) <= {"claimed", "rate_limited", "in_progress", "unresolved"}
