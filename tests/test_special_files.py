"""A FIFO, socket or device named like a note anywhere in the vault never blocks H0: every read of a file
in the vault goes through h0.platform.fs's careful reader (regular files only, opened without waiting,
bounded). Opening a FIFO for reading waits for a writer forever, so one such "note" used to hold a pass,
a report or a shutdown.

Given a FIFO in each folder a pass or a report reads — Needs_Action, Drafts, Approved, Rejected, Done,
People, a knowledge folder, Briefings, Logs — and under the names of the control notes, when `h0 sweep`
runs, `h0 status` answers and `h0 watch` is stopped, then each completes, and the real work beside the
FIFOs is done."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from h0.errors import InvalidRequest
from h0.pipeline.lock import daemon_holder
from h0.platform.fs import open_regular, read_head, read_regular
from h0.vault import Vault
from h0.vault.notefile import read_note_bytes
from h0.vault.paths import VaultPath
from tests.conftest import H0_BIN, subprocess_env
from tests.pipeline.harness import frontmatter, wait_until, write_draft

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

TODAY = dt.date.today().isoformat()
FIFOS = [
    "Needs_Action/EMAIL_fifo.md",
    "Drafts/fifo.md",
    "Approved/fifo.md",
    "Rejected/fifo.md",
    "Done/fifo.md",
    "People/fifo.md",
    "Projects/fifo.md",  # a knowledge folder, as drafting reads it
    f"Briefings/{TODAY}.md",
    "Logs/h0_2020-01-01.jsonl",  # an old day of the audit log, read by the reports
    "Logs/failed/fifo.md",
    "H0_Rules.md",
    "H0_Profile.md",
    "H0_Memory.md",
    "H0_Dashboard.md",
    ".h0/private-folders",
    ".obsidian/daily-notes.json",
]
SLOW = 90  # a guard for a hang only; each run below takes a few seconds


def email(vault: Path, key: str, subject: str) -> None:
    (vault / "Needs_Action" / f"EMAIL_{key}.md").write_text(
        f"---\ntype: email\nstatus: pending\nfrom: Ann Lee <ann@example.com>\nsubject: {subject}\n"
        f"message_id: {key}\nthread_id: t-{key}\n---\n```text\nHi, {subject.lower()} Thanks, Ann\n```\n",
        encoding="utf-8",
    )


@pytest.fixture
def trapped(vault_dir: Path) -> Path:
    """The vault with real work — an email to triage, an approved draft, a person and a project — beside a FIFO
    in every place listed above."""
    for folder in ("People", "Projects", "Briefings", ".h0", ".obsidian"):
        (vault_dir / folder).mkdir(exist_ok=True)
    (vault_dir / "People/Ann Lee.md").write_text("---\nemail: ann@example.com\n---\nRuns Atlas.\n", encoding="utf-8")
    (vault_dir / "Projects/Atlas.md").write_text("# Atlas\nAtlas ships in May.\n", encoding="utf-8")
    email(vault_dir, "m1", "When does Atlas ship?")
    write_draft(vault_dir, "Approved", "go.md")
    for rel in FIFOS:
        path = vault_dir / rel
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    return vault_dir


def status_of(vault: Path, rel: str) -> str | None:
    return frontmatter(vault, rel).get("status") if (vault / rel).is_file() else None


def env_for(vault: Path) -> dict[str, str]:
    return subprocess_env(VAULT_PATH=str(vault), LOG_LEVEL="INFO")


def test_given_fifos_everywhere_then_a_sweep_completes_and_does_the_real_work(trapped: Path):
    run = subprocess.run([H0_BIN, "sweep", "-v"], env=env_for(trapped), capture_output=True, text=True, timeout=SLOW)
    assert run.returncode == 0, run.stdout + run.stderr
    assert frontmatter(trapped, "Done/go.md")["status"] == "sent"
    assert frontmatter(trapped, "Needs_Action/EMAIL_m1.md")["status"] != "pending"  # triaged
    assert "Traceback" not in run.stderr
    for rel in FIFOS:
        if rel not in ("H0_Dashboard.md", f"Briefings/{TODAY}.md"):  # H0's own notes: rewritten in their place
            assert (trapped / rel).is_fifo(), rel  # nothing H0 did replaced or deleted what it could not read


def test_given_fifos_everywhere_then_status_answers_in_text_and_json(trapped: Path):
    text = subprocess.run([H0_BIN, "status"], env=env_for(trapped), capture_output=True, text=True, timeout=SLOW)
    assert text.returncode == 0, text.stderr
    assert "Emails that need you:" in text.stdout
    as_json = subprocess.run(
        [H0_BIN, "status", "--json"], env=env_for(trapped), capture_output=True, text=True, timeout=SLOW
    )
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["totals"]["approved_not_yet_sent"] == 1  # Approved/go.md, read beside the FIFO


def test_given_fifos_everywhere_then_a_running_daemon_works_beside_them_and_stops_on_sigterm(
    trapped: Path, tmp_path: Path
):
    log = open(tmp_path / "watch.log", "w+")  # noqa: SIM115 - a file, not a pipe nobody reads while it runs
    daemon = subprocess.Popen([H0_BIN, "watch"], env=env_for(trapped), stderr=log, text=True)
    try:
        assert wait_until(lambda: status_of(trapped, "Done/go.md") == "sent", timeout=SLOW)
        for rel in ("Needs_Action/EMAIL_fifo2.md", "Approved/fifo2.md", "Drafts/fifo2.md"):
            os.mkfifo(trapped / rel)  # arriving while it runs: the watcher reports them
        email(trapped, "m2", "Is Atlas on time?")
        assert wait_until(lambda: status_of(trapped, "Needs_Action/EMAIL_m2.md") not in (None, "pending"), timeout=SLOW)
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(SLOW)
        log.seek(0)
        err = log.read()
        log.close()
    assert code == 0, err
    assert "stopped" in err and "Traceback" not in err
    assert daemon_holder(trapped) is None


# -- the reader itself ------------------------------------------------------------------------------


def test_the_careful_reader_refuses_every_kind_of_special_file_without_waiting(tmp_path: Path):
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    with socket.socket(socket.AF_UNIX) as server:
        sock = tmp_path / "sock.md"
        server.bind(str(sock))
        for special in (fifo, sock, Path("/dev/null")):
            for read in (open_regular, lambda p: read_head(p, 10), lambda p: read_regular(p, 10)):
                with pytest.raises(OSError) as refused:
                    read(special)
                assert "not a regular file" in str(refused.value)
    folder = tmp_path / "folder.md"
    folder.mkdir()
    with pytest.raises(IsADirectoryError):
        read_regular(folder, 10)
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * 11)
    assert read_head(big, 10) == b"x" * 10
    with pytest.raises(OSError, match="larger than 10 bytes"):
        read_regular(big, 10)
    assert read_regular(big, 11) == b"x" * 11


def test_a_note_swapped_for_a_fifo_after_it_was_resolved_is_refused_without_waiting(tmp_path: Path):
    """Resolving a path finds it a regular file (its lstat), and the read then opens it without looking again:
    a FIFO put in its place meanwhile is still refused at once (opened without waiting, checked once open)."""
    vault = Vault(tmp_path)
    (tmp_path / "Done").mkdir()
    note = tmp_path / "Done" / "a.md"
    note.write_text("---\ntitle: A\n---\nBody.\n", encoding="utf-8")
    target = vault.resolve("Done/a.md")
    assert target.mode and read_note_bytes(target)[0].startswith(b"---")
    note.unlink()
    os.mkfifo(note)
    with pytest.raises(InvalidRequest, match="not a regular file"):
        read_note_bytes(target)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_a_regular_file_longer_than_its_status_says_is_read_whole():
    """One read of the size the status gives, and one byte more, takes a note whole; a file that holds more than
    its status said (it grew since; /proc's files say 0) is read on to its end."""
    data, _ = read_note_bytes(VaultPath("status", "/proc/self/status"))
    assert data.startswith(b"Name:") and b"\nPid:" in data and len(data) > 200


def test_given_a_fifo_in_approved_when_a_client_asks_to_send_it_then_it_is_refused_at_once(vault_dir: Path):
    """An MCP client names the FIFO itself (`send_approved_draft`, path `Approved/trap.md`): the approval
    guard's own open must not wait for a writer either."""
    import threading

    from h0.config import load_settings
    from h0.errors import H0Error
    from h0.mail import MailService

    os.mkfifo(vault_dir / "Approved/trap.md")
    service = MailService(load_settings(vault_path=vault_dir))
    answered: list[str] = []

    def send() -> None:
        try:
            service.send_approved_draft("Approved/trap.md", "0" * 64)
        except H0Error as exc:
            answered.append(exc.message)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    thread.join(SLOW)
    assert not thread.is_alive(), "send_approved_draft waited on the FIFO"
    assert answered and "not a regular file" in answered[0]
    assert (vault_dir / "Approved/trap.md").is_fifo() and not list((vault_dir / "Outbox").glob("*.eml"))
