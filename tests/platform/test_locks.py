"""File locks through filelock: the audit log's lines and the one-daemon-per-vault lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from h0.pipeline.lock import AlreadyRunning, VaultLock, daemon_holder, holder_path, lock_path
from h0.platform.locks import ProcessLock, held_elsewhere
from h0.vault.audit import AuditLog
from tests.pipeline.harness import wait_until

WRITER = """
import sys
from pathlib import Path
from h0.vault.audit import AuditLog
log = AuditLog(Path(sys.argv[1]), "h0")
for i in range(int(sys.argv[3])):
    log.write("line", writer=sys.argv[2], i=i, padding="x" * 3000)
"""


def test_given_four_processes_appending_at_once_then_no_line_is_torn_or_lost(tmp_path: Path):
    logs = tmp_path / "Logs"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(logs), f"w{n}", "150"]) for n in range(4)]
    assert [p.wait(60) for p in procs] == [0, 0, 0, 0]
    (path,) = logs.glob("h0_*.jsonl")
    lines = path.read_bytes().splitlines()
    records = [json.loads(line) for line in lines]  # a torn line would not parse
    assert len(records) == 600
    for n in range(4):
        assert [r["i"] for r in records if r["writer"] == f"w{n}"] == list(range(150))


def test_a_durable_record_is_on_disk_before_write_returns(tmp_path: Path):
    log = AuditLog(tmp_path / "Logs", "gmail_mcp")
    log.write("pre_send_audit", durable=True, idempotency_key="n-1")
    assert [r["idempotency_key"] for r in log.records(event="pre_send_audit")] == ["n-1"]


def test_a_process_lock_excludes_other_holders_and_a_dropped_reference_keeps_it(tmp_path: Path):
    path = tmp_path / "daemon.lock"
    first = ProcessLock(path)
    assert first.try_acquire()
    del first  # held for the process's lifetime, not the object's
    assert held_elsewhere(path)
    assert not ProcessLock(path).try_acquire()


def test_given_a_running_daemon_when_a_second_starts_then_it_is_refused_naming_the_first(vault_dir: Path):
    code = (
        "import sys,time; from h0.pipeline.lock import VaultLock; VaultLock(sys.argv[1]).acquire(); "
        "print('locked', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(vault_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(AlreadyRunning) as info:
            VaultLock(vault_dir).acquire()
        assert info.value.holder["pid"] == proc.pid
        assert f"pid {proc.pid}" in str(info.value)
        assert daemon_holder(vault_dir)["pid"] == proc.pid
    finally:
        proc.kill()
        proc.wait(10)
    # The OS let go with the process: the next daemon takes over, and names itself.
    assert wait_until(lambda: daemon_holder(vault_dir) is None, timeout=5)
    lock = VaultLock(vault_dir)
    lock.acquire()
    try:
        assert daemon_holder(vault_dir)["pid"] == os.getpid()
    finally:
        lock.release()


def test_a_crashed_daemon_s_leftover_note_names_nobody(vault_dir: Path):
    """Stale-lock recovery: the note of who holds the lock is believed only while the lock is held."""
    holder_path(vault_dir).parent.mkdir(parents=True, exist_ok=True)
    holder_path(vault_dir).write_text(json.dumps({"pid": 999999, "started": "2020-01-01T00:00:00Z"}))
    lock_path(vault_dir).write_text("")
    assert daemon_holder(vault_dir) is None
    lock = VaultLock(vault_dir)
    lock.acquire()
    try:
        assert daemon_holder(vault_dir)["pid"] == os.getpid()
    finally:
        lock.release()
    assert not holder_path(vault_dir).exists()


def test_a_status_probe_at_the_moment_a_daemon_starts_does_not_refuse_it(vault_dir: Path):
    """`h0 status` takes the lock for an instant to look; a daemon starting then waits that instant out."""
    path = lock_path(vault_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    probe = ProcessLock(path)
    assert probe.try_acquire()
    lock = VaultLock(vault_dir)
    threading.Timer(0.05, probe.release).start()
    lock.acquire()  # waits out the probe instead of raising AlreadyRunning
    try:
        assert daemon_holder(vault_dir)["pid"] == os.getpid()
    finally:
        lock.release()
