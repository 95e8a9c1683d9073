"""The daemon end to end (real inotify, real MCP server processes, outbox backend): what the human
does in Obsidian, and what H0 sends or holds because of it."""

from __future__ import annotations

from pathlib import Path

from h0.pipeline.settle import CLOSED
from tests.pipeline.harness import (
    FakeClocks,
    approve,
    events,
    frontmatter,
    outbox,
    running_daemon,
    wait_until,
    write_draft,
)

SETTLE = 1.5  # the approval settle period these tests run with (default 10 s)


def test_given_a_note_typed_in_place_in_approved_then_one_email_with_the_final_text_after_it_settles(vault_dir: Path):
    """Given an editor that autosaves a new note inside Approved/ while the human types ("Hi Zo", then
    the rest), when the saves stop, then exactly one email leaves, with the final text, and none before
    the note was quiet for the settle period. The daemon's clocks are the test's: the human's pauses and
    the quiet after them are moves of it."""
    settle, clock = 600.0, FakeClocks()
    rel, head = "Approved/zoe.md", "---\nto: zoe@example.com\nsubject: Hello\n---\n"
    with running_daemon(vault_dir, approval_settle_seconds=settle, clocks=clock.clocks) as daemon:
        for text in ("Hi Zo", "Hi Zoe,\n\nLunch", "Hi Zoe,\n\nLunch on Friday?\n"):
            (vault_dir / rel).write_text(head + text)  # each autosave: open, write, close in place
            assert wait_until(lambda: daemon.settle.last_event(rel) == (CLOSED, clock.monotonic()))
            clock.advance(settle / 3)  # the human types on: a pause shorter than the settle period
            assert wait_until(lambda: daemon.queue.busy() == 0)
            assert outbox(vault_dir) == [], "sent while the human was still typing"
        clock.advance(settle - settle / 3 - 1)  # quiet for a second less than the settle period
        assert wait_until(lambda: daemon.queue.busy() == 0)
        assert outbox(vault_dir) == [], "sent before the note was quiet for the settle period"
        clock.advance(1.0)
        assert wait_until(lambda: (vault_dir / "Done/zoe.md").exists())
    (message,) = outbox(vault_dir)
    assert message.get_content().strip() == "Hi Zoe,\n\nLunch on Friday?"


def test_given_a_sent_note_when_the_editor_saves_it_again_in_approved_then_it_is_held_not_sent(vault_dir: Path):
    """Given a draft the human moved in and H0 sent, when an editor still open on it re-creates it in
    Approved/ with more text, then no second email leaves: the note is returned to Drafts/ with the
    reason, and moving it into Approved/ again sends it."""
    write_draft(vault_dir, "Drafts", "zoe.md", body="Hi Zoe\n")
    with running_daemon(vault_dir, approval_settle_seconds=SETTLE):
        approve(vault_dir, "zoe.md")
        assert wait_until(lambda: (vault_dir / "Done/zoe.md").exists())
        write_draft(vault_dir, "Approved", "zoe.md", body="Hi Zoe, one more thing.\n", settled=False)
        assert wait_until(lambda: events(vault_dir, event="send_held"), timeout=20)
        held = frontmatter(vault_dir, "Drafts/zoe.md")
        assert held["status"] == "held" and held["h0_error_code"] == "reappeared_after_send"
        assert len(outbox(vault_dir)) == 1
        approve(vault_dir, "zoe.md")  # the human's deliberate move
        assert wait_until(lambda: len(outbox(vault_dir)) == 2)


def test_given_two_drafts_answering_one_email_then_the_second_goes_back_to_drafts_with_the_reason(vault_dir: Path):
    for name in ("a.md", "b.md"):
        write_draft(
            vault_dir, "Drafts", name, subject="Re: Plan", body=f"Reply {name}\n", source="Needs_Action/EMAIL_plan.md"
        )
    with running_daemon(vault_dir, approval_settle_seconds=SETTLE):
        approve(vault_dir, "a.md")
        assert wait_until(lambda: (vault_dir / "Done/a.md").exists())
        approve(vault_dir, "b.md")
        assert wait_until(lambda: (vault_dir / "Drafts/b.md").exists() and events(vault_dir, event="send_held"))
    held = frontmatter(vault_dir, "Drafts/b.md")
    assert held["h0_error_code"] == "already_answered" and "send_anyway" in held["h0_error"]
    assert [m.get_content().strip() for m in outbox(vault_dir)] == ["Reply a.md"]


def test_given_an_attachment_changed_while_the_draft_waits_then_it_comes_back_unsent(vault_dir: Path):
    """Given an approved draft held back by the send cap, when its attachment is edited before the cap
    frees up, then the draft is never sent with the new bytes: it returns to Drafts/ and says why."""
    (vault_dir / "Files").mkdir()
    (vault_dir / "Files/terms.txt").write_text("Net 30\n")
    write_draft(vault_dir, "Drafts", "first.md", body="First\n")
    write_draft(vault_dir, "Drafts", "terms.md", body="Terms attached.\n", attachments="[Files/terms.txt]")
    with running_daemon(vault_dir, approval_settle_seconds=SETTLE, rate_limit_per_hour=1):
        approve(vault_dir, "first.md")
        assert wait_until(lambda: (vault_dir / "Done/first.md").exists())
        approve(vault_dir, "terms.md")
        assert wait_until(lambda: events(vault_dir, event="send_deferred"))
        (vault_dir / "Files/terms.txt").write_text("Net 1\n")
    assert not (vault_dir / "Done/terms.md").exists()
    # A new daemon with a higher cap picks the draft up from the sweep and refuses the changed file.
    with running_daemon(vault_dir, approval_settle_seconds=SETTLE, rate_limit_per_hour=10):
        assert wait_until(lambda: (vault_dir / "Drafts/terms.md").exists(), timeout=20)
    returned = frontmatter(vault_dir, "Drafts/terms.md")
    assert returned["h0_error_code"] == "attachment_changed" and "Files/terms.txt" in returned["h0_error"]
    assert len(outbox(vault_dir)) == 1
