"""One daemon per vault (spec edge case: two instances must not send the same draft)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from h0.pipeline.lock import AlreadyRunning, VaultLock, daemon_holder


def test_a_second_lock_on_the_same_vault_is_refused_with_the_holder(vault_dir: Path):
    first = VaultLock(vault_dir)
    first.acquire()
    try:
        with pytest.raises(AlreadyRunning) as info:
            VaultLock(vault_dir).acquire()
        assert info.value.holder["pid"] == os.getpid()
        assert daemon_holder(vault_dir)["pid"] == os.getpid()
    finally:
        first.release()
    assert daemon_holder(vault_dir) is None


def test_the_lock_dies_with_its_process_no_stale_pid_file(vault_dir: Path):
    code = "import sys,time; from h0.pipeline.lock import VaultLock; VaultLock(sys.argv[1]).acquire(); print('locked', flush=True); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code, str(vault_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        assert daemon_holder(vault_dir)["pid"] == proc.pid
        proc.kill()
        proc.wait(10)
        deadline = time.monotonic() + 5
        while daemon_holder(vault_dir) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        lock = VaultLock(vault_dir)
        lock.acquire()  # the kernel released it with the process
        lock.release()
    finally:
        proc.kill()
