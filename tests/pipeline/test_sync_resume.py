"""A killed `h0 watch` resumes its Gmail sync from the durable cursor: nothing lost, nothing twice.

A real daemon process (and its MCP server children) against the fake Gmail, killed with
SIGKILL at the two moments that matter: while it reads new mail (no note yet) and after it
wrote the notes but before Gmail labelled the messages (notes on disk, cursor not moved).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from h0.pipeline.lock import daemon_holder
from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.pipeline.harness import wait_until
from tests.procs import descendants

pytestmark = pytest.mark.slow  # two daemon starts and two kills: ~10-20 s


def start_watch(vault_dir: Path, gmail: FakeGmail, token_path: Path, log: Path) -> subprocess.Popen:
    env = subprocess_env(
        VAULT_PATH=str(vault_dir),
        MAIL_BACKEND="gmail",
        GMAIL_TOKEN_PATH=str(token_path),
        GMAIL_API_ENDPOINT=gmail.api_endpoint,
        GMAIL_TOKEN_URI=gmail.token_uri,
        GMAIL_POLL_SECONDS="0.2",
        LOG_LEVEL="INFO",
        MAX_RETRIES="1",
        RETRY_DELAY_MS="50",
        H0_STATE_DIR=str(vault_dir.parent / "h0-state"),
    )
    return subprocess.Popen(
        [H0_BIN, "watch"], env=env, stdout=subprocess.DEVNULL, stderr=open(log, "a"), start_new_session=True
    )


def kill_everything(daemon: subprocess.Popen) -> None:
    """SIGKILL the daemon and every process it started, at once: no handler runs, nothing is flushed."""
    victims = [daemon.pid, *descendants(daemon.pid)]
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    daemon.wait(30)


def email_notes(vault_dir: Path) -> Counter:
    return Counter(p.name for p in vault_dir.rglob("EMAIL_*.md"))


def labelled(gmail: FakeGmail, ids: list[str]) -> bool:
    label = gmail.label_named("H0/ingested")
    return label is not None and all(label["id"] in gmail.message(m).labels for m in ids)


def stored_cursor(state_root: Path) -> int:
    (db,) = state_root.rglob("state.db")
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT cursor FROM mail_sync").fetchone()
    return int(row[0]) if row and row[0] is not None else 0  # 0: no cursor yet (the first catch-up runs)


def added_at(gmail: FakeGmail, message_id: str) -> int:
    """The historyId of the record that added `message_id` to the mailbox."""
    (record,) = [r for r in gmail.history if r["type"] == "messageAdded" and r["message_id"] == message_id]
    return int(record["id"])


def test_a_killed_daemon_resumes_from_its_cursor_without_loss_or_duplicates(vault_dir, gmail, token_path, tmp_path):
    log = tmp_path / "watch.log"
    first = [gmail.add_message(subject=f"first {i}", body=f"first {i}") for i in range(3)]
    daemon = start_watch(vault_dir, gmail, token_path, log)
    try:
        assert wait_until(lambda: labelled(gmail, first), timeout=60), log.read_text()
        # Past the first mail (acknowledged); it may still move on over the labelling's own history.
        assert wait_until(lambda: stored_cursor(tmp_path / "h0-state") >= max(added_at(gmail, m) for m in first))

        # Kill 1: while the daemon reads the new mail (the batch of messages.get never answers).
        gmail.stall_next(path_contains="/batch/gmail/v1")
        seen = len(gmail.requests)
        reading = [gmail.add_message(subject=f"reading {i}", body=f"reading {i}") for i in range(4)]
        assert wait_until(lambda: ("POST", "/batch/gmail/v1") in gmail.requests[seen:], timeout=30)
    finally:
        kill_everything(daemon)
    gmail.release_stalled()
    assert not any(f"EMAIL_{m}.md" in email_notes(vault_dir) for m in reading)
    unread_from = min(added_at(gmail, m) for m in reading)
    assert stored_cursor(tmp_path / "h0-state") < unread_from  # nothing acknowledged: not past the unread mail

    # Kill 2: the notes are written, the acknowledgement (one batchModify: >= 10 ids) never answers.
    more = [gmail.add_message(subject=f"more {i}", body=f"more {i}") for i in range(8)]
    wanted = reading + more
    gmail.stall_next(path_contains="messages/batchModify")
    seen = len(gmail.requests)
    daemon = start_watch(vault_dir, gmail, token_path, log)
    try:
        assert wait_until(lambda: any(path.endswith("batchModify") for _, path in gmail.requests[seen:]), timeout=60), (
            log.read_text()
        )
        assert all(f"EMAIL_{m}.md" in email_notes(vault_dir) for m in wanted)  # written before the acknowledgement
    finally:
        kill_everything(daemon)
    gmail.release_stalled()
    assert not any(labelled(gmail, [m]) for m in wanted)
    assert stored_cursor(tmp_path / "h0-state") < unread_from

    # Mail that arrives while no daemon runs, then a restart: everything is ingested from the cursor.
    while_down = [gmail.add_message(subject=f"down {i}") for i in range(2)]
    gmail.reset_quota()
    daemon = start_watch(vault_dir, gmail, token_path, log)
    everything = first + wanted + while_down
    try:
        assert wait_until(lambda: labelled(gmail, everything), timeout=60), log.read_text()
        assert wait_until(lambda: daemon_holder(vault_dir) is not None, timeout=10)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
    notes = email_notes(vault_dir)
    assert set(notes) == {f"EMAIL_{m}.md" for m in everything}
    assert max(notes.values()) == 1  # no message has a second note, in any folder
    # It resumed from its cursor: history, not a catch-up by query.
    assert "messages.list" not in [name for name, _ in gmail.quota]
    assert "history.list" in [name for name, _ in gmail.quota]
    assert "Traceback" not in log.read_text()
