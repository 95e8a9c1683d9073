"""`h0 import` of a real mailbox: history is knowledge, work is recent. Only mail of the last
WORK_WINDOW_DAYS that the owner has not answered becomes a note; older mail and the owner's sent mail are
kept as history that drafting and the follow-ups read. The import is one streaming pass that resumes
after Ctrl-C or a full disk without a duplicate, refuses a second import at once, never follows a
symbolic link, and turns every hostile message into one line while the rest goes on."""

from __future__ import annotations

import email.utils
import errno
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from h0.cli import EXIT_OK, EXIT_WORK_FAILED, main
from h0.config import load_settings
from h0.drafting.profile import LEARNED_HEADING
from h0.followup.ledger import FollowupLedger
from h0.handlers.context import HandlerContext
from h0.handlers.mail_import import ImportReport, MailImport
from h0.handlers.thread import conversation, kept_earlier
from h0.platform.locks import ProcessLock
from h0.state import StateDB, state_dir_for
from h0.state.history import FileMark, HeldWork, HistoryMessage, MailHistory
from h0.vault import Vault
from tests.conftest import H0_BIN, subprocess_env

pytestmark = pytest.mark.usefixtures("loguru_restored")
OWNER = "me@example.com"
DAY = 86400.0


def raw_message(
    n: int,
    *,
    sender: str = "Dana Rivera <dana@acme.example>",
    to: str = OWNER,
    days_ago: float = 1.0,
    subject: str | None = None,
    body: str | None = None,
    reply_to: str | None = None,
    extra: str = "",
) -> bytes:
    date = email.utils.formatdate(time.time() - days_ago * DAY)
    head = (
        f"From: {sender}\nTo: {to}\nSubject: {subject or f'Question {n}'}\nDate: {date}\n"
        f"Message-ID: <m{n}@test.example>\n"
    )
    if reply_to:
        head += f"In-Reply-To: {reply_to}\nReferences: {reply_to}\n"
    if OWNER in sender and not extra:
        extra = "X-Gmail-Labels: Sent\n"  # as a Takeout export marks the owner's mail (a From alone is not proof)
    return (head + extra + "\n" + (body or f"Could you send the figures for item {n}?") + "\n").encode()


def mbox(path: Path, messages: Sequence[bytes]) -> Path:
    with open(path, "wb") as handle:
        handle.writelines(
            b"From sender@example Mon Jan  1 00:00:00 2024\n" + raw.replace(b"\nFrom ", b"\n>From ") + b"\n"
            for raw in messages
        )
    return path


@pytest.fixture
def env(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("OWNER_EMAILS", OWNER)
    return vault_dir


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["import", *args])
    return code, capsys.readouterr().out.splitlines()


def history_of(vault_dir: Path) -> MailHistory:
    return MailHistory(StateDB.for_vault(vault_dir, Path(os.environ["H0_STATE_DIR"])))


def notes_in(vault_dir: Path, folder: str) -> list[str]:
    return sorted(n.path for n in Vault(vault_dir).list_notes(folder).notes)


def test_recent_unanswered_mail_is_work_and_the_rest_is_history_that_h0_learns_from(env: Path, tmp_path: Path, capsys):
    """Given an mbox of two years: old mail, the owner's sent mail (greeting and sign-off of their own), a
    recent question the owner answered later in the file, and a recent one nobody answered,
    when it is imported, then only the unanswered recent one is a note, history holds the rest, the
    profile's learned section shows the owner's greeting and sign-off at once, the follow-up ledger knows
    the recent messages, and triage reads the thread's history."""
    messages = [
        raw_message(1, days_ago=400, subject="Old budget"),
        raw_message(2, days_ago=300, sender="Bob <bob@else.example>"),
        raw_message(
            3,
            sender=f"Me <{OWNER}>",
            to="Dana Rivera <dana@acme.example>",
            days_ago=299,
            subject="Re: Old budget",
            body="Hi Dana,\n\nThe budget is fine by me.\n\nCheers,\nMe",
            reply_to="<m1@test.example>",
        ),
        raw_message(4, days_ago=3, subject="Answered soon"),
        raw_message(5, days_ago=2, subject="Still open", reply_to="<m1@test.example>"),
        raw_message(
            6,
            sender=f"Me <{OWNER}>",
            to="dana@acme.example",
            days_ago=1,
            subject="Re: Answered soon",
            body="Hi Dana,\n\nDone, see attached.\n\nCheers,\nMe",
            reply_to="<m4@test.example>",
        ),
    ]
    code, out = run(capsys, str(mbox(tmp_path / "All mail.mbox", messages)))
    assert code == EXIT_OK, out
    assert out[0] == "h0 import: 1 new in Needs_Action/, 5 kept as history (2 of them yours)"
    (work,) = notes_in(env, "Needs_Action")
    note = Vault(env).read_note(work)
    assert note.frontmatter["subject"] == "Still open"
    assert notes_in(env, "Done") == []
    profile = (env / "H0_Profile.md").read_text()
    learned = profile.split(LEARNED_HEADING, 1)[1]
    assert "| dana@acme.example | Hi Dana, | Cheers, | 2 |" in learned
    history = history_of(env)
    assert history.counts() == {"messages": 6, "sent": 2, "notes": 1}
    assert [m.subject for m in history.sent_to("dana@acme.example")] == ["Re: Answered soon", "Re: Old budget"]
    ledger = FollowupLedger(StateDB.for_vault(env, Path(os.environ["H0_STATE_DIR"])))
    assert ledger.known(["<m4@test.example>", "<m5@test.example>", "<m6@test.example>"]) == {
        "<m4@test.example>",
        "<m5@test.example>",
        "<m6@test.example>",
    }
    assert ledger.known(["<m1@test.example>", "<m2@test.example>"]) == set()  # old mail owes nothing now
    # The thread of "Still open" began 400 days ago: its history travels with it to triage.
    (earlier,) = [m for m in history.thread("<m1@test.example>") if m.key == "<m1@test.example>"]
    assert earlier.subject == "Old budget"


def test_as_notes_files_history_in_done_and_never_in_needs_action(env: Path, tmp_path: Path, capsys):
    """Given old mail, the owner's sent mail and a recent question the owner answered, when imported with
    --as-notes, then all of that is filed in Done/ (never Needs_Action/) and only the open question is work."""
    messages = [
        raw_message(1, days_ago=100),
        raw_message(
            2, sender=f"Me <{OWNER}>", to="dana@acme.example", days_ago=90, body="Hi Dana,\n\nYes.\n\nBest,\nMe"
        ),
        raw_message(3, days_ago=1),
        raw_message(4, days_ago=3, subject="Answered"),
        raw_message(5, sender=f"Me <{OWNER}>", to="dana@acme.example", days_ago=2, reply_to="<m4@test.example>"),
    ]
    code, out = run(capsys, "--as-notes", str(mbox(tmp_path / "x.mbox", messages)))
    assert code == EXIT_OK, out
    (work,) = notes_in(env, "Needs_Action")
    assert Vault(env).read_note(work).frontmatter["rfc822_message_id"] == "<m3@test.example>"
    done = [Vault(env).read_note(p).frontmatter for p in notes_in(env, "Done")]
    sent = sorted(fm["rfc822_message_id"] for fm in done if fm["type"] == "sent_email")
    kept = sorted(fm["rfc822_message_id"] for fm in done if fm["type"] == "email")
    assert sent == ["<m2@test.example>", "<m5@test.example>"] and kept == ["<m1@test.example>", "<m4@test.example>"]
    assert all(fm["status"] == "sent" for fm in done if fm["type"] == "sent_email")
    assert all((fm["status"], fm["decision"]) == ("done", "history") for fm in done if fm["type"] == "email")


def test_the_owners_mail_is_found_by_sent_folder_and_takeout_label_never_with_two_senders(
    env: Path, tmp_path: Path, capsys
):
    takeout = raw_message(1, sender="Alias <alias@example.org>", extra="X-Gmail-Labels: Sent,Opened\n", days_ago=50)
    two = raw_message(2, sender=f"{OWNER}, mallory@evil.example", days_ago=1)
    folder = tmp_path / "export"
    folder.mkdir()
    mbox(folder / "Inbox.mbox", [takeout, two])
    mbox(folder / "Sent.mbox", [raw_message(3, sender="Me <other@example.org>", days_ago=40)])
    code, out = run(capsys, str(folder))
    assert code == EXIT_OK, out
    history = history_of(env)
    assert {m.key for m in history.sent()} == {"<m1@test.example>", "<m3@test.example>"}
    (work,) = notes_in(env, "Needs_Action")  # two From addresses: never the owner's, so it is work
    assert Vault(env).read_note(work).frontmatter["rfc822_message_id"] == "<m2@test.example>"


def test_hostile_messages_are_one_line_each_and_the_import_goes_on(env: Path, tmp_path: Path, capsys):
    """A message of 1,000 nested parts, a header of 100,000 recipients, a message larger than 25 MB and
    a truncated last message: each is a line (or read as far as it goes), the others are imported."""
    nested = b"From: a@b.example\nSubject: nest\nMessage-ID: <nest@x>\nContent-Type: multipart/mixed; boundary=b0\n\n"
    for i in range(1, 1000):
        nested += f"--b{i - 1}\nContent-Type: multipart/mixed; boundary=b{i}\n\n".encode()
    crowd = ", ".join(f"p{i}@crowd.example" for i in range(100_000))
    many = raw_message(2, to=crowd, days_ago=1, subject="To everyone")
    huge = raw_message(3, body="x" * (26 * 1024 * 1024))
    truncated = raw_message(4, days_ago=1, subject="Cut short")[:-20]
    box = mbox(tmp_path / "hostile.mbox", [raw_message(1), nested, many, huge, truncated])
    started = time.monotonic()
    code, out = run(capsys, str(box))
    assert time.monotonic() - started < 60
    assert code == EXIT_WORK_FAILED, out
    problems = [line for line in out if line.startswith("  ✗")]
    assert len(problems) == 3, out
    assert "nested MIME parts" in problems[0] and "thousands of recipients" in problems[1]
    assert "larger than 25 MB" in problems[2]
    subjects = {Vault(env).read_note(p).frontmatter["subject"] for p in notes_in(env, "Needs_Action")}
    assert subjects == {"Question 1", "Cut short"}


def test_symbolic_links_are_never_followed(env: Path, tmp_path: Path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    mbox(outside / "secret.mbox", [raw_message(1)])
    folder = tmp_path / "import"
    folder.mkdir()
    mbox(folder / "real.mbox", [raw_message(2)])
    (folder / "link.mbox").symlink_to(outside / "secret.mbox")
    (folder / "linked-dir").symlink_to(outside)
    (folder / "vault.mbox").symlink_to(env / "H0_Profile.md")
    code, out = run(capsys, str(folder))
    assert code == EXIT_WORK_FAILED
    assert sum("symbolic link: not followed" in line for line in out) == 3, out
    subjects = {Vault(env).read_note(p).frontmatter["subject"] for p in notes_in(env, "Needs_Action")}
    assert subjects == {"Question 2"}


def test_a_second_import_at_the_same_time_is_refused_and_writes_nothing(env: Path, tmp_path: Path, capsys):
    box = mbox(tmp_path / "x.mbox", [raw_message(1)])
    lock = ProcessLock(state_dir_for(env, Path(os.environ["H0_STATE_DIR"])) / "import.lock")
    assert lock.try_acquire()
    try:
        code = main(["import", str(box)])
    finally:
        lock.release()
    assert code == 3 and "another `h0 import`" in capsys.readouterr().err
    assert notes_in(env, "Needs_Action") == []


def _ctx(vault_dir: Path) -> HandlerContext:
    settings = load_settings(vault_path=vault_dir)
    return HandlerContext.local(settings, Vault(vault_dir))


class DiskFillsUp(MailHistory):
    """The state database's write edge, with the disk full from the `full_at`-th commit on."""

    def __init__(self, state: StateDB, full_at: int) -> None:
        super().__init__(state)
        self.commits = 0
        self.full_at = full_at

    def commit(
        self, messages: Sequence[HistoryMessage], *, hold: Sequence[HeldWork] = (), mark: FileMark | None = None
    ) -> int:
        self.commits += 1
        if self.commits >= self.full_at:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().commit(messages, hold=hold, mark=mark)


def test_a_full_disk_stops_with_the_reason_keeps_what_was_imported_and_the_import_resumes(
    env: Path, tmp_path: Path, capsys
):
    box = mbox(tmp_path / "big.mbox", [raw_message(n, days_ago=60 if n % 2 else 1) for n in range(600)])
    state = StateDB.for_vault(env, Path(os.environ["H0_STATE_DIR"]))
    report = MailImport(_ctx(env), history=DiskFillsUp(state, full_at=2)).run([box])
    assert report.stopped is not None and "No space left on device" in report.stopped
    kept = MailHistory(state).counts()["messages"]
    assert 0 < kept < 600 and notes_in(env, "Needs_Action") == []  # work waits for the end of the pass
    code, out = run(capsys, str(box))
    assert code == EXIT_OK, out
    assert MailHistory(state).counts()["messages"] == 600
    assert len(notes_in(env, "Needs_Action")) == 300


def test_a_file_that_changes_while_it_is_read_is_said_and_the_next_import_completes_it(env: Path, tmp_path: Path):
    box = mbox(tmp_path / "growing.mbox", [raw_message(n) for n in range(600)])
    appended = threading.Event()

    def grow(report: ImportReport) -> None:
        if report.read and not appended.is_set():
            appended.set()
            with open(box, "ab") as handle:
                handle.write(b"From x Mon Jan  1 00:00:00 2024\n" + raw_message(999) + b"\n")

    state = StateDB.for_vault(env, Path(os.environ["H0_STATE_DIR"]))
    report = MailImport(_ctx(env), progress=grow).run([box])
    assert any("changed while it was read" in p.reason for p in report.problems)
    assert MailHistory(state).counts()["messages"] == 600  # what the file held when reading began
    again = MailImport(_ctx(env)).run([box])
    assert again.problems == [] and again.duplicates == 600
    assert MailHistory(state).counts()["messages"] == 601


def test_ctrl_c_stops_after_the_message_in_hand_exits_130_and_the_same_command_resumes(env: Path, tmp_path: Path):
    """Given an import of a large mailbox running in its own process, when it gets SIGINT once its
    progress shows it started, then it exits 130 within seconds saying how far it got, and running the
    same command again imports the rest: every message once."""
    total = 2_000  # batches of 250: SIGINT arrives after the first, long before the last
    box = mbox(tmp_path / "large.mbox", [raw_message(n, days_ago=40 + n % 300) for n in range(total)])
    envs = subprocess_env(VAULT_PATH=str(env), OWNER_EMAILS=OWNER)
    child = subprocess.Popen(
        [H0_BIN, "import", str(box)], env=envs, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stderr is not None
    for line in child.stderr:
        if "messages read" in line and not line.startswith("h0 import: 0 messages"):
            break
    child.send_signal(signal.SIGINT)
    sent_at = time.monotonic()
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 130, out
    assert time.monotonic() - sent_at < 10
    assert "interrupted after" in out and "run the same command again to resume" in out
    history = history_of(env)
    assert 0 < history.counts()["messages"] < total
    done = subprocess.run([H0_BIN, "import", str(box)], env=envs, capture_output=True, text=True, timeout=300)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert history.counts()["messages"] == total


def test_after_an_import_and_a_sweep_status_lists_the_answers_you_await_in_the_recent_window(
    env: Path, tmp_path: Path, capsys
):
    """Given an export where the owner asked Dana something five days ago and got no answer, and asked Bob
    something 200 days ago, when it is imported and swept, then `h0 status` lists the answer awaited from
    Dana (the recent window), not Bob's (history owes nothing)."""
    messages = [
        raw_message(
            1,
            sender=f"Me <{OWNER}>",
            to="Dana Rivera <dana@acme.example>",
            days_ago=5,
            subject="Contract",
            body="Hi Dana,\n\nCould you send me the signed contract by Friday?\n\nThanks,\nMe",
        ),
        raw_message(
            2,
            sender=f"Me <{OWNER}>",
            to="Bob <bob@else.example>",
            days_ago=200,
            subject="Old question",
            body="Hi Bob,\n\nCould you check the old invoice?\n\nThanks,\nMe",
        ),
    ]
    inbox = [raw_message(3, sender="Lee <lee@other.example>", days_ago=6, subject="Budget question")]
    code, out = run(capsys, str(mbox(tmp_path / "Sent.mbox", messages)), str(mbox(tmp_path / "Inbox.mbox", inbox)))
    assert code == EXIT_OK, out
    assert main(["sweep"]) == EXIT_OK
    capsys.readouterr()
    assert main(["status", "--json"]) == EXIT_OK
    status = json.loads(capsys.readouterr().out)
    awaited = status["follow_ups"]["awaited"]
    assert [a["subject"] for a in awaited] == ["Contract"], status["follow_ups"]
    # The reply owed to Lee is recorded with its note (the follow-up pass lists it once triage has run on
    # it: the ordering "triage marks its thread for the next pass" is issue 30's follow-up part, not here).
    ledger = FollowupLedger(StateDB.for_vault(env, Path(os.environ["H0_STATE_DIR"])))
    (lee,) = ledger.messages(["<m3@test.example>"])["<m3@test.example>"]
    assert lee.note is not None and lee.note.startswith("Needs_Action/")


def test_triage_reads_the_thread_history_of_an_imported_email(env: Path, tmp_path: Path, capsys):
    """Given an import where a recent email continues a conversation kept only as history, when triage
    assembles its conversation, then the earlier messages — the owner's among them — are in it, in order."""
    messages = [
        raw_message(1, days_ago=400, subject="Old budget", body="Is the old budget fine?"),
        raw_message(
            2,
            sender=f"Me <{OWNER}>",
            to="dana@acme.example",
            days_ago=399,
            subject="Re: Old budget",
            body="Hi Dana,\n\nYes, it is fine.\n\nCheers,\nMe",
            reply_to="<m1@test.example>",
        ),
        raw_message(3, days_ago=2, subject="Re: Old budget", body="And the new one?", reply_to="<m1@test.example>"),
    ]
    assert run(capsys, str(mbox(tmp_path / "x.mbox", messages)))[0] == EXIT_OK
    (work,) = notes_in(env, "Needs_Action")
    note = Vault(env).read_note(work)
    kept = kept_earlier(_ctx(env), note.frontmatter["thread_id"], note.frontmatter["received"])
    entries = conversation([], note.frontmatter["received"], kept)
    assert [(e["own"], e["text"][:20]) for e in entries] == [
        (False, "Is the old budget fi"),
        (True, "Hi Dana,\n\nYes, it is"),
    ]
