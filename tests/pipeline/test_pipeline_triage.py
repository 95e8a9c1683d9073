"""Triage end to end: notes dropped into Needs_Action/ get a decision and, when needed, a draft."""

from __future__ import annotations

from pathlib import Path

from h0.config import load_settings
from h0.triage import Triager, ensure_rules_file
from tests.pipeline.harness import approve, edit_template, events, frontmatter, outbox, running_daemon, wait_until


def email(vault_dir: Path, name: str, *, sender: str, subject: str, body: str, status: str = "pending") -> Path:
    path = vault_dir / "Needs_Action" / name
    path.write_text(
        f"---\ntype: email\nstatus: {status}\nmessage_id: {name[6:-3]}\nthread_id: t-{name[6:-3]}\n"
        f"from: {sender!r}\nto: me@example.com\nsubject: {subject!r}\nreceived: 2026-11-21T09:00:00Z\n---\n{body}\n"
    )
    return path


def triager(vault_dir: Path) -> Triager:
    ensure_rules_file(vault_dir)
    return Triager.from_settings(load_settings(vault_path=vault_dir), vault_dir)


def test_a_question_gets_a_draft_reply_linked_both_ways(vault_dir: Path):
    with running_daemon(vault_dir, triager=triager(vault_dir)):
        email(
            vault_dir,
            "EMAIL_q1.md",
            sender="Dana Rivera <dana@example.com>",
            subject="Re: Friday?",
            body="Could we move the review to Friday?",
        )
        assert wait_until(lambda: (vault_dir / "Drafts/REPLY_EMAIL_q1.md").exists())
        assert wait_until(
            lambda: frontmatter(vault_dir, "Needs_Action/EMAIL_q1.md").get("status") == "awaiting_approval"
        )
    draft = frontmatter(vault_dir, "Drafts/REPLY_EMAIL_q1.md")
    assert draft["to"] == "dana@example.com" and draft["subject"] == "Re: Friday?"  # no "Re: Re:"
    assert (
        draft["status"] == "pending_approval" and draft["reply_to_message_id"] == "q1" and draft["thread_id"] == "t-q1"
    )
    assert draft["source"] == "Needs_Action/EMAIL_q1.md"
    assert "[[EMAIL_q1]]" in (vault_dir / "Drafts/REPLY_EMAIL_q1.md").read_text()
    note = frontmatter(vault_dir, "Needs_Action/EMAIL_q1.md")
    assert (
        note["decision"] == "draft_reply"
        and note["draft"] == "Drafts/REPLY_EMAIL_q1.md"
        and 0 <= note["confidence"] <= 1
    )
    (decision,) = events(vault_dir, event="triage_decision")
    assert (
        decision["note"] == "Needs_Action/EMAIL_q1.md" and decision["provider"] == "rules" and "latency_ms" in decision
    )


def test_a_newsletter_is_archived_to_done(vault_dir: Path):
    with running_daemon(vault_dir, triager=triager(vault_dir)):
        email(
            vault_dir,
            "EMAIL_n1.md",
            sender="Weekly Digest <newsletter@news.example.com>",
            subject="This week's top stories",
            body="Unsubscribe at any time.",
        )
        assert wait_until(lambda: (vault_dir / "Done/EMAIL_n1.md").exists())
    fm = frontmatter(vault_dir, "Done/EMAIL_n1.md")
    assert fm["status"] == "done" and fm["decision"] == "archive"


def test_an_invoice_from_a_no_reply_sender_is_never_auto_archived(vault_dir: Path):
    with running_daemon(vault_dir, triager=triager(vault_dir)):
        email(
            vault_dir,
            "EMAIL_i1.md",
            sender="Billing <no-reply@vendor.example>",
            subject="Invoice #4411 overdue",
            body="Your invoice is attached. Unsubscribe here.",
        )
        assert wait_until(lambda: frontmatter(vault_dir, "Needs_Action/EMAIL_i1.md").get("decision"))
    assert frontmatter(vault_dir, "Needs_Action/EMAIL_i1.md")["decision"] in ("needs_info", "urgent")
    assert not (vault_dir / "Done/EMAIL_i1.md").exists()


def test_only_pending_notes_are_triaged_and_writes_never_loop(vault_dir: Path):
    with running_daemon(vault_dir, triager=triager(vault_dir), sweep_interval_seconds=0.3) as daemon:
        email(vault_dir, "EMAIL_done.md", sender="a@example.com", subject="Old", body="Handled?", status="needs_info")
        email(vault_dir, "EMAIL_new.md", sender="b@example.com", subject="New", body="What time works?")
        assert wait_until(lambda: events(vault_dir, event="triage_decision"))
        daemon.sweep("again")
        wait_until(lambda: False, timeout=1.0)
    assert [e["note"] for e in events(vault_dir, event="triage_decision")] == ["Needs_Action/EMAIL_new.md"]


def test_seeded_question_to_sent_threaded_reply_and_both_notes_in_done(vault_dir: Path):
    with running_daemon(vault_dir, triager=triager(vault_dir)):
        email(vault_dir, "EMAIL_q2.md", sender="Sam <sam@example.org>", subject="Dinner?", body="Free on Sunday?")
        assert wait_until(lambda: (vault_dir / "Drafts/REPLY_EMAIL_q2.md").exists())
        edit_template(vault_dir, "REPLY_EMAIL_q2.md")
        approve(vault_dir, "REPLY_EMAIL_q2.md")
        assert wait_until(
            lambda: (vault_dir / "Done/REPLY_EMAIL_q2.md").exists() and (vault_dir / "Done/EMAIL_q2.md").exists()
        )
    (message,) = outbox(vault_dir)
    assert message["Subject"] == "Re: Dinner?" and message["To"] == "sam@example.org"
    assert "%% h0" not in message.get_content() and "[[EMAIL_q2]]" not in message.get_content()
    assert frontmatter(vault_dir, "Done/EMAIL_q2.md")["status"] == "done"
