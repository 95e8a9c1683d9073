"""`h0 watch`, `h0 sweep` and `h0 status` as a person runs them: real processes, exit codes, messages."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from h0.pipeline.lock import daemon_holder
from tests.conftest import H0_BIN, subprocess_env
from tests.pipeline.harness import frontmatter, wait_until, write_draft


def env_for(vault_dir: Path) -> dict[str, str]:
    return subprocess_env(VAULT_PATH=str(vault_dir), LOG_LEVEL="INFO")


def test_watch_sends_stops_gracefully_on_sigterm_and_a_second_watch_exits_3(vault_dir: Path, tmp_path: Path):
    log = open(tmp_path / "watch.log", "w+")  # noqa: SIM115 - a file, not a pipe nobody reads while the daemon runs
    first = subprocess.Popen([H0_BIN, "watch"], env=env_for(vault_dir), stderr=log, text=True)
    try:
        assert wait_until(lambda: (daemon_holder(vault_dir) or {}).get("pid") == first.pid, timeout=30)
        second = subprocess.run([H0_BIN, "watch"], env=env_for(vault_dir), capture_output=True, text=True, timeout=60)
        assert second.returncode == 3
        assert f"pid {first.pid}" in second.stderr and "already watches this vault" in second.stderr
        write_draft(vault_dir, "Approved", "w.md")
        assert wait_until(lambda: (vault_dir / "Done/w.md").exists(), timeout=30)
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(60)
        log.seek(0)
        err = log.read()
        log.close()
    assert first.returncode == 0, err
    assert "nothing is really sent" in err  # the outbox backend says so loudly
    assert "✉ sent Approved/w.md" in err and "stopped" in err
    assert daemon_holder(vault_dir) is None


def test_sweep_does_one_pass_and_exits_0(vault_dir: Path):
    write_draft(vault_dir, "Approved", "s.md")
    write_draft(vault_dir, "Rejected", "r.md")
    result = subprocess.run([H0_BIN, "sweep"], env=env_for(vault_dir), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert frontmatter(vault_dir, "Done/s.md")["status"] == "sent"
    assert frontmatter(vault_dir, "Done/r.md")["decision"] == "rejected"
    assert len(list((vault_dir / "Outbox").glob("*.eml"))) == 1


def test_status_shows_folders_waiting_drafts_sends_errors_and_the_daemon(vault_dir: Path):
    write_draft(vault_dir, "Drafts", "wait.md", status="pending_approval")
    write_draft(vault_dir, "Approved", "go.md")
    (vault_dir / "Approved/bad.md").write_text("---\nsubject: nobody\n---\nx\n")
    os.utime(vault_dir / "Approved/bad.md", (time.time() - 60, time.time() - 60))  # not being typed
    subprocess.run([H0_BIN, "sweep"], env=env_for(vault_dir), capture_output=True, timeout=120, check=True)
    text = subprocess.run([H0_BIN, "status"], env=env_for(vault_dir), capture_output=True, text=True, timeout=60)
    assert text.returncode == 0
    assert "Daemon: not running" in text.stdout and "Drafts/wait.md" in text.stdout
    assert "Done/go.md → to bob@example.com" in text.stdout and "send_refused" in text.stdout  # where it is now
    data = json.loads(
        subprocess.run(
            [H0_BIN, "status", "--json"], env=env_for(vault_dir), capture_output=True, text=True, timeout=60
        ).stdout
    )
    assert data["folders"]["Done"] == 1 and data["waiting_for_approval"] == ["Drafts/wait.md"]
    assert data["approved_not_yet_sent"] == []  # a draft with no recipient went back to Drafts/
    assert frontmatter(vault_dir, "Drafts/bad.md")["h0_error_code"] == "invalid_request"
    assert data["recent_sends"][0]["path"] == "Approved/go.md" and data["recent_sends"][0]["done_path"] == "Done/go.md"


def test_a_missing_vault_and_bad_configuration_get_a_message_and_exit_1(tmp_path: Path):
    missing = subprocess.run(
        [H0_BIN, "watch"],
        env=subprocess_env(VAULT_PATH=str(tmp_path / "nope")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1 and "does not exist" in missing.stderr and "h0 init" in missing.stderr
    bad = subprocess.run(
        [H0_BIN, "status"],
        env=subprocess_env(VAULT_PATH=str(tmp_path), MAIL_BACKEND="carrier-pigeon"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and "MAIL_BACKEND" in bad.stderr and ".env.example" in bad.stderr


def test_an_unknown_llm_provider_is_a_message_not_a_traceback(vault_dir: Path):
    result = subprocess.run(
        [H0_BIN, "sweep"],
        env=subprocess_env(VAULT_PATH=str(vault_dir), LLM_PROVIDER="bogus"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "Unknown LLM_PROVIDER 'bogus'" in result.stderr
    assert "Traceback" not in result.stderr
