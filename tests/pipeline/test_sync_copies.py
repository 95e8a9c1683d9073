"""Exactly once in a synced vault, under a running daemon on a real directory (outbox backend: every send
is one .eml in Outbox/).

Sync tools copy notes: Syncthing keeps `note.sync-conflict-<date>-<time>-<device>.md`, iCloud `note 2.md`,
Dropbox `note (conflicted copy <date>).md` and `note (Mara's iPhone).md`, others `note (1).md`; they write
a hidden temp file and rename it into place with the note's old modification time, or re-create a note
seconds after H0 moved it away. A copy of an approved draft is never a second send — before, with or
after the send, for H0's drafts (`draft_id`) and the owner's own (no `draft_id`) — and only `send_anyway`
makes two notes with the same words two messages."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from h0.cli import main
from h0.config import load_settings
from h0.mail.compose.drafts import NEXT_STEP
from h0.report.collect import collect_status
from h0.report.text import render_status
from h0.vault.sendable import CUTOFF
from tests.pipeline.harness import counting_sweeps, events, frontmatter, running_daemon, wait_until

# The names the sync tools give a copy of `{stem}.md`, as they write them.
SYNC_NAMES = {
    "syncthing": "{stem}.sync-conflict-20261128-101010-ABCDEFG.md",
    "icloud": "{stem} 2.md",
    "dropbox": "{stem} (conflicted copy 2026-11-28).md",
    "device": "{stem} (Mara's iPhone).md",
    "numbered": "{stem} (1).md",
}


@dataclass(frozen=True)
class Case:
    original: str  # the draft's name
    copy: str  # the sync tool's copy of it
    text: str  # the draft as approved (and as copied)


def cases(vault_dir: Path, tag: str) -> list[Case]:
    """One H0 draft and one hand-written draft for each sync tool's naming, each a message of its own;
    H0's drafts answer an email waiting in Needs_Action/."""
    made = []
    for n, (tool, pattern) in enumerate(SYNC_NAMES.items()):
        email = f"EMAIL_{tag}{n}"
        (vault_dir / "Needs_Action" / f"{email}.md").write_text(
            f"---\ntype: email\nstatus: awaiting_approval\nmessage_id: msg-{tag}{n}\nfrom: Dana <dana{n}@example.com>\n"
            f"subject: Plan {n}\nthread_id: t-{tag}{n}\n---\nCan we meet?\n"
        )
        h0_draft = (
            f"---\nto: dana{n}@example.com\nsubject: 'Re: Plan {n}'\nstatus: pending_approval\ndraft_id: REPLY_{email}\n"
            f"source: Needs_Action/{email}.md\nreply_to_message_id: msg-{tag}{n}\nthread_id: t-{tag}{n}\n---\n"
            f"Friday works ({tool}).\n\n{CUTOFF}\nReplying to [[{email}]].\n{NEXT_STEP}\n"
        )
        mine = f"---\nto: friend{n}@example.org\nsubject: Lunch {tag} {n}\n---\nThursday? ({tool})\n"
        for stem, text in ((f"REPLY_{email}", h0_draft), (f"lunch-{tag}{n}", mine)):
            made.append(Case(f"{stem}.md", pattern.format(stem=stem), text))
    return made


def sync_temp(folder: Path, name: str, text: str, *, age: float = 120.0) -> Path:
    """What a sync tool writes first: a hidden temp file beside the target, with the note's old time."""
    temp = folder / f".syncthing.{name}.tmp"
    temp.write_text(text)
    then = time.time() - age
    os.utime(temp, (then, then))
    return temp


def sync_write(folder: Path, name: str, text: str, *, age: float = 120.0) -> None:
    """A sync tool bringing a note: the temp file renamed into place, its time kept."""
    os.rename(sync_temp(folder, name, text, age=age), folder / name)


def sent_count(vault_dir: Path) -> int:
    return len(list((vault_dir / "Outbox").glob("*.eml")))


def filed_as(vault_dir: Path, name: str) -> str | None:
    path = vault_dir / "Done" / name
    return frontmatter(vault_dir, f"Done/{name}").get("status") if path.exists() else None


def assert_one_send_each(vault_dir: Path, made: list[Case]) -> None:
    assert sent_count(vault_dir) == len(made), "one .eml per draft, none for a copy"
    for case in made:
        assert filed_as(vault_dir, case.original) == "sent", case.original
        copy = frontmatter(vault_dir, f"Done/{case.copy}")
        assert copy["status"] == "copy" and copy["copy_of"] == f"Done/{case.original}", case.copy
        assert "already sent on" in copy["h0_error"] and "send_anyway" in copy["h0_error"]
    assert not list((vault_dir / "Approved").glob("*.md"))


def test_given_sent_drafts_when_sync_tools_bring_copies_minutes_later_then_each_is_filed_as_a_copy_once(
    vault_dir: Path,
):
    """Given H0's drafts and hand-written ones approved and sent, when — with a new daemon, nothing in its
    memory — each sync tool's copy of each arrives in Approved/ (temp file renamed in, old time), then no
    copy is sent: each is filed in Done/ as a copy of the sent one, the audit says it once, and `h0 status`
    shows one line per copy however many sweeps pass."""
    made = cases(vault_dir, "a")
    for case in made:
        (vault_dir / "Drafts" / case.original).write_text(case.text)
    with running_daemon(vault_dir):
        for case in made:
            (vault_dir / "Drafts" / case.original).rename(vault_dir / "Approved" / case.original)
        assert wait_until(lambda: all(filed_as(vault_dir, c.original) == "sent" for c in made), timeout=30)
    assert sent_count(vault_dir) == len(made)
    with running_daemon(vault_dir, sweep_interval_seconds=0.3) as daemon, counting_sweeps(daemon) as sweeps:
        for case in made:
            sync_write(vault_dir / "Approved", case.copy, case.text)
        assert wait_until(lambda: len(events(vault_dir, event="copy_filed")) == len(made), timeout=30)
        said = render_status(collect_status(load_settings(vault_path=vault_dir)))
        assert sweeps(3)
        said_later = render_status(collect_status(load_settings(vault_path=vault_dir)))
    assert_one_send_each(vault_dir, made)
    assert len(events(vault_dir, event="copy_filed")) == len(made)
    for text in (said, said_later):
        assert f"Copies filed in Done/, not sent (24 h): {len(made)}\n" in text
    copy_lines = [line for line in said_later.splitlines() if "a copy of Done/" in line]
    assert len(copy_lines) == 10 and len(set(copy_lines)) == 10


def test_given_an_approved_draft_still_waiting_when_its_copy_arrives_then_the_original_goes_and_the_copy_waits(
    vault_dir: Path,
):
    """Given approvals arriving by sync — each copy a moment before its original, both written in place in
    Approved/, so both wait the settle period and the copy's ends first — then the copy waits while its
    original is in Approved/: the original is the one sent, and the copy is filed as its copy."""
    made = cases(vault_dir, "b")
    with running_daemon(vault_dir, approval_settle_seconds=1.5):
        for case in made:
            sync_write(vault_dir / "Approved", case.copy, case.text)
        for case in made:
            sync_write(vault_dir / "Approved", case.original, case.text)
        assert wait_until(lambda: len(events(vault_dir, event="copy_filed")) == len(made), timeout=30)
    assert_one_send_each(vault_dir, made)
    assert len(events(vault_dir, event="draft_approved")) == 2 * len(made)  # every copy was looked at, and waited


def test_given_a_draft_moved_into_approved_when_its_copy_lands_in_the_same_instant_then_one_send(vault_dir: Path):
    """Given drafts the owner moves into Approved/, when a sync tool renames each one's copy into Approved/
    right after it (both events in one burst), then each message goes once and the original is the one sent."""
    made = cases(vault_dir, "c")
    for case in made:
        (vault_dir / "Drafts" / case.original).write_text(case.text)
    temps = [(sync_temp(vault_dir / "Approved", c.copy, c.text), c) for c in made]
    with running_daemon(vault_dir):
        for temp, case in temps:
            (vault_dir / "Drafts" / case.original).rename(vault_dir / "Approved" / case.original)
            os.rename(temp, vault_dir / "Approved" / case.copy)
        assert wait_until(lambda: len(events(vault_dir, event="copy_filed")) == len(made), timeout=30)
    assert_one_send_each(vault_dir, made)


def test_given_a_move_that_arrives_as_delete_then_create_with_an_old_time_then_it_is_sent_once(vault_dir: Path, capsys):
    """Given the owner approved on the phone — the sync tool deletes Drafts/x.md and creates Approved/x.md
    with the note's old time — then it is sent once; when the sync tool later re-creates Approved/x.md
    (the phone had not yet seen H0 file it), the re-created note is filed as a copy, not sent, and
    `h0 log` of the copy tells its way; a conflict copy that kept other text is held in Drafts/."""
    text = "---\nto: amy@example.org\nsubject: From the phone\n---\nApproved on the train.\n"
    (vault_dir / "Drafts/x.md").write_text(text)
    with running_daemon(vault_dir):
        (vault_dir / "Drafts/x.md").unlink()
        note = vault_dir / "Approved/x.md"
        note.write_text(text)
        os.utime(note, (time.time() - 600, time.time() - 600))
        assert wait_until(lambda: filed_as(vault_dir, "x.md") == "sent")
        note.write_text(text)  # re-created seconds after it was moved away
        os.utime(note, (time.time() - 600, time.time() - 600))
        assert wait_until(lambda: events(vault_dir, event="copy_filed"))
        sync_write(vault_dir / "Approved", "x (Mara's iPhone).md", text.replace("train", "bus"))  # another version
        assert wait_until(lambda: events(vault_dir, event="send_held"))
    assert sent_count(vault_dir) == 1
    held = frontmatter(vault_dir, "Drafts/x (Mara's iPhone).md")
    assert held["status"] == "held" and held["h0_error_code"] == "reappeared_after_send"
    copy = frontmatter(vault_dir, "Done/x (2).md")
    assert copy["status"] == "copy" and copy["copy_of"] == "Done/x.md"
    capsys.readouterr()
    assert main(["log", "--vault", str(vault_dir), "Done/x (2).md"]) == 0
    trail = capsys.readouterr().out
    assert "copy" in trail and "a copy of a message already sent on" in trail, trail


def test_given_two_notes_with_the_same_words_and_send_anyway_then_both_go_and_a_copy_of_one_does_not(
    vault_dir: Path,
):
    """Given the owner's two notes with the same recipient, subject and text (hand-written ones, and two H0
    drafts of one email), each with `send_anyway: true`, then both of each pair are sent; a sync tool's copy of
    one of them, send_anyway and all, is filed as a copy; and without send_anyway the second is a copy."""
    (vault_dir / "Needs_Action/EMAIL_p.md").write_text(
        "---\ntype: email\nstatus: awaiting_approval\nmessage_id: msg-p\nfrom: dana@example.com\nsubject: P\n---\nQ?\n"
    )
    mine = "---\nto: ann@example.org\nsubject: Invitation\nsend_anyway: true\n---\nCome on Friday.\n"
    h0 = (
        "---\nto: dana@example.com\nsubject: 'Re: P'\nstatus: pending_approval\ndraft_id: {id}\n"
        "source: Needs_Action/EMAIL_p.md\nreply_to_message_id: msg-p\nsend_anyway: true\n---\nYes.\n"
    )
    plain = "---\nto: bo@example.org\nsubject: Twice?\n---\nSame words.\n"
    notes = {
        "invite-ann.md": mine,
        "invite-ann-again.md": mine,
        "REPLY_p.md": h0.format(id="REPLY_p"),
        "REPLY_p_second.md": h0.format(id="REPLY_p_second"),
        "once.md": plain,
        "once-more.md": plain,
    }
    for name, text in notes.items():
        (vault_dir / "Drafts" / name).write_text(text)
    with running_daemon(vault_dir):
        for name in notes:
            (vault_dir / "Drafts" / name).rename(vault_dir / "Approved" / name)
        assert wait_until(lambda: sent_count(vault_dir) == 5 and events(vault_dir, event="copy_filed"))
        sync_write(vault_dir / "Approved", "invite-ann 2.md", mine)
        assert wait_until(lambda: len(events(vault_dir, event="copy_filed")) == 2)
    assert sent_count(vault_dir) == 5
    for name in ("invite-ann.md", "invite-ann-again.md", "REPLY_p.md", "REPLY_p_second.md"):
        assert filed_as(vault_dir, name) == "sent", name
    assert {filed_as(vault_dir, "once.md"), filed_as(vault_dir, "once-more.md")} == {"sent", "copy"}
    assert frontmatter(vault_dir, "Done/invite-ann 2.md")["copy_of"] == "Done/invite-ann.md"
