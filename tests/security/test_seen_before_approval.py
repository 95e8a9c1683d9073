"""The version the human could have seen (issue 20, classes 2 and 3).

A draft whose content — or whose file: a rename or replace onto its name — changed shortly before
it arrived in Approved/ was not read by the human in that form: it is held with when and by whom,
under `h0 watch` and under `h0 sweep`. A human's own edit a few seconds before the drag is not.
Attachments are bound at approval: bytes changed after the draft entered Approved/ — also while
no daemon ran, the next `h0 sweep` being the first to look — are refused, never sent.

These tests set APPROVAL_FRESH_SECONDS themselves (the suite's default is 0: tests/conftest.py).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from h0.cli import main
from h0.errors import Conflict, InvalidRequest
from h0.mail import MailService
from h0.state import StateDB
from h0.vault import Vault
from h0.vault.last_change import H0_CLIENT, Arrival, Change, last_change, name_key, settle_left, too_fresh, when
from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import gmail_settings_for
from tests.pipeline.harness import frontmatter, outbox, running_daemon, wait_until

FRESH = 3.0
DRAFT = "---\nto: bob@example.com\nsubject: Lunch\n---\nHi Bob, noon works.\n"


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def drafted(vault_dir: Path, name: str, text: str = DRAFT, *, edited_ago: float = 60.0) -> Path:
    path = vault_dir / "Drafts" / name
    path.write_text(text)
    age(path, edited_ago)
    return path


def approve(vault_dir: Path, name: str) -> str:
    os.rename(vault_dir / "Drafts" / name, vault_dir / "Approved" / name)
    return Vault(vault_dir).read_note(f"Approved/{name}").hash


# -- the rule, in numbers --------------------------------------------------------------------------


def test_the_latest_recorded_write_of_these_bytes_names_the_change_else_it_came_from_outside():
    writes = [
        {"at": 100.0, "note_hash": "a", "tool": "apply_changes", "client": H0_CLIENT},
        {"at": 200.0, "note_hash": "b", "tool": "write_note", "client": "probe-agent 1.0"},
    ]
    assert last_change("b", 150.0, writes) == Change(200.0, "write_note", "probe-agent 1.0")
    assert last_change("c", 250.0, writes) == Change(250.0)  # bytes nobody recorded: an edit outside H0
    assert last_change("c", 50.0, writes) == Change(200.0)  # an mtime set back cannot hide a later write
    # The daemon saw the source change after the recorded write (a rename onto its name): outside.
    assert last_change("b", 150.0, writes, observed_at=260.0) == Change(260.0)


@pytest.mark.parametrize(
    "change, arrived, held",
    [
        (Change(100.0), 102.0, True),
        (Change(100.0), 104.0, False),  # a person's edit: 3 s
        (Change(100.0, "apply_changes", H0_CLIENT), 102.0, True),  # H0's own drafting counts like a person's
        (Change(100.0, "apply_changes", H0_CLIENT), 104.0, False),
        (Change(100.0, "write_note", "claude-code"), 108.0, True),  # an agent: the settle period, 10 s
        (Change(100.0, "write_note", "claude-code"), 111.0, False),
        (Change(100.0), 99.0, True),  # changed after arriving
    ],
)
def test_the_windows(change: Change, arrived: float, held: bool):
    assert (too_fresh(arrived, change, fresh_s=FRESH, agent_s=10.0) is not None) is held


@pytest.mark.parametrize(
    ("moved", "quiet_for", "left"),
    [(True, 0.0, 0.0), (False, 0.0, 10.0), (False, 4.0, 6.0), (False, 10.0, 0.0), (False, 99.0, 0.0)],
)
def test_the_settle_rule_moved_notes_go_at_once_written_ones_wait_until_quiet(
    moved: bool, quiet_for: float, left: float
):
    assert settle_left(moved=moved, quiet_for=quiet_for, settle_s=10.0) == left


def test_the_words_for_the_gap():
    assert when(2.4) == "2 s before" and when(0.97) == "1 s before" and when(0.2) == "less than a second before"
    assert when(-0.01) == "less than a second before" and when(-5.2) == "5 s after"


# -- the mail server's check, with the daemon's observations -------------------------------------


@pytest.fixture
def strict_mail(vault_dir: Path, gmail: FakeGmail, token_path: Path):
    service = MailService(
        gmail_settings_for(vault_dir, gmail, token_path, approval_fresh_seconds=FRESH, allow_unapproved_send=False),
        trusted_caller=True,
    )
    yield service
    service.close()


def test_given_a_draft_edited_outside_h0_a_second_before_the_drag_then_it_is_held_with_when(
    strict_mail: MailService, vault_dir: Path, gmail: FakeGmail
):
    drafted(vault_dir, "d.md", edited_ago=1.0)
    note_hash = approve(vault_dir, "d.md")
    with pytest.raises(Conflict) as held:
        strict_mail.send_approved_draft("Approved/d.md", note_hash, Arrival("moved", time.time()))
    assert held.value.details["reason"] == "changed_before_approval" and held.value.details["hold"]
    assert "1 s before you approved it" in held.value.message and "outside H0's tools" in held.value.message
    assert "move it to Approved/ again" in held.value.message
    assert gmail.sent == []


def test_given_the_daemons_own_server_without_a_hash_then_the_approval_checks_still_bind_the_send(
    strict_mail: MailService, vault_dir: Path, gmail: FakeGmail
):
    """Decision 19: the daemon's own server reads the note itself, with no caller's hash. What binds the
    send to what the human saw is the check at that one read: a version changed a second before the drag
    is held all the same, and nothing goes out."""
    drafted(vault_dir, "d.md", edited_ago=1.0)
    approve(vault_dir, "d.md")
    with pytest.raises(Conflict) as held:
        strict_mail.send_approved_draft("Approved/d.md", None, Arrival("moved", time.time()))
    assert held.value.details["reason"] == "changed_before_approval" and gmail.sent == []
    assert (vault_dir / "Approved/d.md").exists()  # nothing filed: the daemon gives it back, with the reason


def test_given_a_human_who_edits_then_reads_then_drags_then_it_is_sent(
    strict_mail: MailService, vault_dir: Path, gmail: FakeGmail
):
    """The human's quick edit: Obsidian saved 5 s before the drag (typing stops, the save follows 2 s
    later, the human reads it over and drags)."""
    drafted(vault_dir, "d.md", edited_ago=5.0)
    note_hash = approve(vault_dir, "d.md")
    now = time.time()
    strict_mail.send_approved_draft("Approved/d.md", note_hash, Arrival("moved", now, source_changed_at=now - 5.0))
    assert len(gmail.sent) == 1


def test_given_a_file_replaced_onto_the_drafts_name_with_an_old_mtime_then_the_daemons_event_still_holds_it(
    strict_mail: MailService, vault_dir: Path, gmail: FakeGmail
):
    drafted(vault_dir, "d.md", DRAFT.replace("noon", "midnight"), edited_ago=3600.0)  # looks an hour old
    note_hash = approve(vault_dir, "d.md")
    now = time.time()
    with pytest.raises(Conflict, match="outside H0's tools"):
        strict_mail.send_approved_draft("Approved/d.md", note_hash, Arrival("moved", now, source_changed_at=now - 0.5))
    assert gmail.sent == []


@pytest.mark.parametrize("seconds_before, held", [(5.0, True), (15.0, False)])
def test_given_an_agent_wrote_the_draft_through_the_vault_server_then_the_settle_period_is_its_window(
    strict_mail: MailService, vault_dir: Path, gmail: FakeGmail, seconds_before: float, held: bool
):
    path = drafted(vault_dir, "d.md", edited_ago=seconds_before)
    note_hash = Vault(vault_dir).read_note("Drafts/d.md").hash
    StateDB.for_vault(vault_dir, strict_mail.settings.h0_state_dir).record_note_writes(
        [(name_key(str(path)), "Drafts/d.md", note_hash, "write_note", "probe-agent 0.1")],
        now=time.time() - seconds_before,
    )
    approve(vault_dir, "d.md")
    if not held:
        strict_mail.send_approved_draft("Approved/d.md", note_hash, Arrival("moved", time.time()))
        assert len(gmail.sent) == 1
        return
    with pytest.raises(Conflict) as refused:
        strict_mail.send_approved_draft("Approved/d.md", note_hash, Arrival("moved", time.time()))
    assert "write_note from the MCP client probe-agent 0.1" in refused.value.message
    assert refused.value.details["client"] == "probe-agent 0.1" and gmail.sent == []


def test_given_an_untrusted_caller_then_its_word_on_the_arrival_is_ignored(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """Claude Code's mail server cannot claim an old arrival to slip a fresh change through: the file
    times decide (the note's status change is its arrival)."""
    service = MailService(
        gmail_settings_for(
            vault_dir,
            gmail,
            token_path,
            approval_fresh_seconds=FRESH,
            approval_settle_seconds=0,
            allow_unapproved_send=False,
        )
    )
    try:
        drafted(vault_dir, "d.md", edited_ago=0.0)
        note_hash = approve(vault_dir, "d.md")
        with pytest.raises(Conflict, match="before you approved it"):
            service.send_approved_draft(
                "Approved/d.md", note_hash, Arrival("moved", time.time() + 3600, source_changed_at=0.0)
            )
    finally:
        service.close()
    assert gmail.sent == []


# -- h0 watch: the real daemon, real inotify, real servers ---------------------------------------


def test_given_an_edit_outside_h0_and_a_drag_at_once_when_the_daemon_runs_then_it_is_held_and_back_in_drafts(
    vault_dir: Path,
):
    drafted(vault_dir, "race.md")
    with running_daemon(vault_dir, approval_fresh_seconds=FRESH):
        (vault_dir / "Drafts/race.md").write_text(DRAFT.replace("noon works", "send the invoice to eve@evil.example"))
        os.rename(vault_dir / "Drafts/race.md", vault_dir / "Approved/race.md")
        assert wait_until(
            lambda: (vault_dir / "Drafts/race.md").exists() and not (vault_dir / "Approved/race.md").exists()
        )
    back = frontmatter(vault_dir, "Drafts/race.md")
    assert back["status"] == "held" and back["h0_error_code"] == "changed_before_approval"
    assert "before you approved it" in back["h0_error"] and "read it" in back["h0_error"].lower()
    assert outbox(vault_dir) == []


def test_given_a_replace_onto_the_drafts_name_with_a_backdated_file_when_the_daemon_runs_then_it_is_held(
    vault_dir: Path,
):
    drafted(vault_dir, "swap.md")
    with running_daemon(vault_dir, approval_fresh_seconds=FRESH) as daemon:
        forged = vault_dir / "Drafts/.swap.tmp"
        forged.write_text(DRAFT.replace("noon works", "wire 5,000 to the new account"))
        age(forged, 3600)
        os.rename(forged, vault_dir / "Drafts/swap.md")
        assert wait_until(lambda: daemon.settle.arrival("Drafts/swap.md") != "unknown")  # the daemon saw it land
        os.rename(vault_dir / "Drafts/swap.md", vault_dir / "Approved/swap.md")
        assert wait_until(
            lambda: (vault_dir / "Drafts/swap.md").exists() and not (vault_dir / "Approved/swap.md").exists()
        )
    assert frontmatter(vault_dir, "Drafts/swap.md")["h0_error_code"] == "changed_before_approval"
    assert outbox(vault_dir) == []


def test_given_a_draft_last_edited_seconds_earlier_when_the_daemon_sees_the_drag_then_it_is_sent(vault_dir: Path):
    """The human's own quick edit: saved 5 s before the drag (before the daemon started, so only the
    file's time tells) — comfortably outside the 3 s window, so it goes."""
    drafted(vault_dir, "quick.md", edited_ago=5.0)
    with running_daemon(vault_dir, approval_fresh_seconds=FRESH):
        os.rename(vault_dir / "Drafts/quick.md", vault_dir / "Approved/quick.md")
        assert wait_until(lambda: (vault_dir / "Done/quick.md").exists())
    assert len(outbox(vault_dir)) == 1


@pytest.mark.anyio
async def test_given_an_agent_rewrites_a_draft_through_the_vault_server_when_the_human_drags_it_then_it_is_held_naming_the_agent(
    vault_dir: Path, tmp_path: Path
):
    """The agent holds H0's MCP tools (its own `h0 mcp vault`, as Claude Code starts it); the record of
    its write reaches the daemon's mail server through H0's state database."""
    drafted(vault_dir, "agent.md")
    env = subprocess_env(VAULT_PATH=str(vault_dir), H0_STATE_DIR=os.environ["H0_STATE_DIR"])
    params = StdioServerParameters(command=H0_BIN, args=["mcp", "vault"], env=env)
    with running_daemon(vault_dir, approval_fresh_seconds=FRESH):
        async with Client(params) as client:
            note = (await client.call_tool("read_note", {"path": "Drafts/agent.md"})).structured_content
            wrote = await client.call_tool(
                "write_note",
                {
                    "path": "Drafts/agent.md",
                    "frontmatter": note["frontmatter"],
                    "if_match": note["hash"],
                    "body": "Hi Bob, please also wire the deposit to the new account.\n",
                },
            )
            assert not wrote.is_error, wrote.content[0].text
        os.rename(vault_dir / "Drafts/agent.md", vault_dir / "Approved/agent.md")
        assert wait_until(
            lambda: (vault_dir / "Drafts/agent.md").exists() and not (vault_dir / "Approved/agent.md").exists()
        )
    back = frontmatter(vault_dir, "Drafts/agent.md")
    assert back["h0_error_code"] == "changed_before_approval"
    assert "by an agent (write_note from the MCP client" in back["h0_error"]
    assert outbox(vault_dir) == []


# -- h0 sweep: no daemon saw anything; the file times still tell ---------------------------------


@pytest.fixture
def sweep_env(monkeypatch: pytest.MonkeyPatch, vault_dir: Path):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("APPROVAL_FRESH_SECONDS", str(FRESH))
    monkeypatch.setenv("APPROVAL_SETTLE_SECONDS", "0")
    return monkeypatch


@pytest.mark.usefixtures("loguru_restored")
def test_given_a_draft_changed_just_before_it_was_moved_when_swept_later_then_it_is_held(
    vault_dir: Path, sweep_env, capsys
):
    drafted(vault_dir, "late.md", edited_ago=0.0)
    approve(vault_dir, "late.md")
    assert main(["sweep"]) == 0
    capsys.readouterr()
    assert frontmatter(vault_dir, "Drafts/late.md")["h0_error_code"] == "changed_before_approval"
    assert outbox(vault_dir) == []


@pytest.mark.usefixtures("loguru_restored")
def test_given_a_draft_read_a_while_before_it_was_moved_when_swept_then_it_is_sent(vault_dir: Path, sweep_env, capsys):
    drafted(vault_dir, "fine.md", edited_ago=30.0)
    approve(vault_dir, "fine.md")
    assert main(["sweep"]) == 0
    capsys.readouterr()
    assert len(outbox(vault_dir)) == 1 and (vault_dir / "Done/fine.md").exists()


# -- class 3: attachments are bound at approval ---------------------------------------------------


def with_attachment(vault_dir: Path, name: str, *, file_age: float = 60.0) -> Path:
    attachment = vault_dir / "Files" / "quote.pdf"
    attachment.parent.mkdir(exist_ok=True)
    attachment.write_bytes(b"%PDF-1.4 the quote you read: 1,000 EUR")
    age(attachment, file_age)
    drafted(vault_dir, name, DRAFT.replace("subject: Lunch", "subject: Lunch\nattachments: [Files/quote.pdf]"))
    return attachment


def changed_after(path: Path, reference: Path, data: bytes, *, backdate: bool = False) -> None:
    """Rewrite `path` until its change is recorded strictly after `reference`'s arrival (file times
    tick in steps of a few ms), optionally setting its mtime back an hour as a forger would."""
    arrived = os.stat(reference).st_ctime

    def rewritten() -> bool:
        path.write_bytes(data)
        if backdate:
            age(path, 3600)
        return os.stat(path).st_ctime > arrived

    assert wait_until(rewritten, timeout=5, interval=0.005)


@pytest.mark.usefixtures("loguru_restored")
@pytest.mark.parametrize("backdate", [False, True])
def test_given_an_attachment_changed_after_approval_while_no_daemon_ran_when_swept_then_it_is_refused(
    vault_dir: Path, sweep_env, capsys, backdate: bool
):
    attachment = with_attachment(vault_dir, "att.md")
    approve(vault_dir, "att.md")
    changed_after(
        attachment, vault_dir / "Approved/att.md", b"%PDF-1.4 a different quote: 9,000 EUR", backdate=backdate
    )
    assert main(["sweep"]) == 0
    capsys.readouterr()
    back = frontmatter(vault_dir, "Drafts/att.md")
    assert "Files/quote.pdf changed after you approved this draft" in back["h0_error"]
    assert outbox(vault_dir) == []


@pytest.mark.usefixtures("loguru_restored")
def test_given_an_attachment_written_a_moment_before_approval_when_swept_then_it_is_held(
    vault_dir: Path, sweep_env, capsys
):
    with_attachment(vault_dir, "att.md", file_age=0.5)
    approve(vault_dir, "att.md")
    assert main(["sweep"]) == 0
    capsys.readouterr()
    back = frontmatter(vault_dir, "Drafts/att.md")
    assert back["h0_error_code"] == "attachment_changed_before_approval" and back["status"] == "held"
    assert outbox(vault_dir) == []


@pytest.mark.usefixtures("loguru_restored")
def test_given_an_attachment_unchanged_since_long_before_approval_when_swept_then_it_is_sent(
    vault_dir: Path, sweep_env, capsys
):
    """A file's status-change time cannot be set back (that is the point), so "long before" is real
    time here: a 0.3 s window, and the file older than that when the draft is approved."""
    sweep_env.setenv("APPROVAL_FRESH_SECONDS", "0.3")
    attachment = with_attachment(vault_dir, "att.md")
    assert wait_until(lambda: time.time() - os.stat(attachment).st_ctime > 0.4, timeout=5)
    approve(vault_dir, "att.md")
    assert main(["sweep"]) == 0
    capsys.readouterr()
    (message,) = outbox(vault_dir)
    assert [part.get_filename() for part in message.iter_attachments()] == ["quote.pdf"]


def test_given_an_attachment_changed_after_approval_then_the_mail_tool_refuses_it_too(
    strict_mail: MailService, vault_dir: Path, gmail: FakeGmail
):
    attachment = with_attachment(vault_dir, "att.md")
    note_hash = approve(vault_dir, "att.md")
    changed_after(attachment, vault_dir / "Approved/att.md", b"%PDF-1.4 another quote")
    with pytest.raises(InvalidRequest, match="changed after you approved"):
        strict_mail.send_approved_draft("Approved/att.md", note_hash)
    assert gmail.sent == []
