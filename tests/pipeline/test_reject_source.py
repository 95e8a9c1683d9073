"""A rejected draft's email says so: `status: rejected_reply`, a `draft:` link to the filed draft
that resolves, and it is back on the human's list (`h0 status`, the dashboard) — with a real
daemon (real inotify, real MCP servers) and through `h0 sweep`."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.report.collect import collect_status
from tests.pipeline.harness import events, frontmatter, running_daemon, wait_until, write_draft
from tests.pipeline.test_pipeline_triage import email, triager

pytestmark = pytest.mark.usefixtures("loguru_restored")


def wikilink_target(vault_dir: Path, link: str) -> Path:
    return vault_dir / (link if link.endswith(".md") else f"{link}.md")


def test_given_a_triaged_email_when_its_draft_is_moved_to_rejected_then_the_email_says_rejected_reply(vault_dir: Path):
    with running_daemon(vault_dir, triager=triager(vault_dir)) as daemon:
        email(
            vault_dir,
            "EMAIL_r1.md",
            sender="Dana Rivera <dana@example.com>",
            subject="Friday?",
            body="Could we move the review to Friday?",
        )
        assert wait_until(
            lambda: frontmatter(vault_dir, "Needs_Action/EMAIL_r1.md").get("status") == "awaiting_approval"
        )
        (vault_dir / "Drafts/REPLY_EMAIL_r1.md").rename(vault_dir / "Rejected/REPLY_EMAIL_r1.md")
        assert wait_until(lambda: frontmatter(vault_dir, "Needs_Action/EMAIL_r1.md").get("status") == "rejected_reply")
        # The dashboard puts it back on the human's list, linked to the filed draft.
        if daemon.settings.dashboard_enabled:
            assert wait_until(
                lambda: (
                    "you rejected the reply: [[Done/REPLY_EMAIL_r1]]"
                    in (vault_dir / "H0_Dashboard.md").read_text(errors="replace")
                ),
                timeout=20,
            )
    note = frontmatter(vault_dir, "Needs_Action/EMAIL_r1.md")
    assert note["draft"] == "Done/REPLY_EMAIL_r1.md" and wikilink_target(vault_dir, note["draft"]).is_file()
    assert note["rejected_at"]
    filed = frontmatter(vault_dir, "Done/REPLY_EMAIL_r1.md")
    assert filed["decision"] == "rejected" and filed["status"] == "rejected"
    assert filed["source"] == "Needs_Action/EMAIL_r1.md"  # the link back still resolves too
    assert not list((vault_dir / "Outbox").glob("*.eml"))
    (record,) = events(vault_dir, event="draft_rejected")
    assert record["source"] == "Needs_Action/EMAIL_r1.md" and record["done_path"] == "Done/REPLY_EMAIL_r1.md"
    # Not triaged again: the human decides what happens to it now (one email, one reply at most).
    assert len(events(vault_dir, event="triage_decision")) == 1

    status = collect_status(load_settings(vault_path=vault_dir))
    (item,) = status["needs_you"]
    assert item["path"] == "Needs_Action/EMAIL_r1.md" and item["decision"] == "rejected_reply"
    assert item["reason"] == "you rejected the reply (Done/REPLY_EMAIL_r1.md)"
    assert status["totals"]["needs_you"] == 1


def test_given_status_rejected_on_a_draft_in_drafts_when_swept_then_the_email_is_back_on_the_list(
    vault_dir: Path, monkeypatch, capsys
):
    """The other way to reject: `status: rejected` on the draft where it is; `h0 sweep` files it."""
    email(
        vault_dir,
        "EMAIL_r2.md",
        sender="Sam <sam@example.com>",
        subject="Lunch?",
        body="Lunch on Tuesday?",
        status="awaiting_approval",
    )
    note = vault_dir / "Needs_Action/EMAIL_r2.md"
    note.write_text(
        note.read_text().replace(
            "status: awaiting_approval", "status: awaiting_approval\ndraft: Drafts/REPLY_EMAIL_r2.md"
        )
    )
    write_draft(
        vault_dir,
        "Drafts",
        "REPLY_EMAIL_r2.md",
        to="sam@example.com",
        status="rejected",
        source="Needs_Action/EMAIL_r2.md",
    )
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert main(["sweep"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == "h0 sweep: 1 rejected (filed in Done/)"
    fm = frontmatter(vault_dir, "Needs_Action/EMAIL_r2.md")
    assert fm["status"] == "rejected_reply" and fm["draft"] == "Done/REPLY_EMAIL_r2.md"
    assert (vault_dir / fm["draft"]).is_file()
    assert main(["status"]) == 0
    text = capsys.readouterr().out
    assert "Emails that need you: 1" in text
    assert "Needs_Action/EMAIL_r2.md  rejected_reply — you rejected the reply (Done/REPLY_EMAIL_r2.md)" in text


@pytest.mark.parametrize(
    "email_status, draft_field, marked",
    [
        ("awaiting_approval", "Drafts/other-reply.md", False),  # it waits for another draft, which still answers it
        ("done", None, False),  # already answered another way
        ("needs_info", None, False),  # the human moved on
        ("awaiting_approval", None, True),
    ],
)
def test_only_an_email_waiting_for_this_very_draft_is_marked(
    vault_dir: Path, monkeypatch, capsys, email_status: str, draft_field: str | None, marked: bool
):
    email(vault_dir, "EMAIL_r3.md", sender="Lee <lee@example.com>", subject="Hi", body="Hello?", status=email_status)
    if draft_field:
        note = vault_dir / "Needs_Action/EMAIL_r3.md"
        note.write_text(note.read_text().replace("type: email", f"type: email\ndraft: {draft_field}"))
    write_draft(vault_dir, "Rejected", "mine.md", to="lee@example.com", source="'[[EMAIL_r3]]'")
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert main(["sweep"]) == 0
    capsys.readouterr()
    fm = frontmatter(vault_dir, "Needs_Action/EMAIL_r3.md")
    assert (fm["status"] == "rejected_reply") is marked
    assert (fm.get("draft") == "Done/mine.md") is marked
    assert frontmatter(vault_dir, "Done/mine.md")["decision"] == "rejected"


def test_given_an_unquoted_wikilink_source_when_the_draft_is_rejected_then_its_email_is_marked(
    vault_dir: Path, monkeypatch, capsys
):
    """`source: [[EMAIL_r4]]` unquoted is a list in a list to YAML: it still names the email (h0.vault.model)."""
    email(
        vault_dir,
        "EMAIL_r4.md",
        sender="Kim <kim@example.com>",
        subject="Hi",
        body="Hello?",
        status="awaiting_approval",
    )
    write_draft(vault_dir, "Rejected", "unquoted.md", to="kim@example.com", source="[[EMAIL_r4]]")
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert main(["sweep"]) == 0
    capsys.readouterr()
    fm = frontmatter(vault_dir, "Needs_Action/EMAIL_r4.md")
    assert fm["status"] == "rejected_reply" and fm["draft"] == "Done/unquoted.md"
    (record,) = events(vault_dir, event="draft_rejected")
    assert record["source"] == "Needs_Action/EMAIL_r4.md"


HOSTILE_SOURCES = [
    "H0_Rules.md",
    "../H0_Rules.md",
    "Needs_Action/../H0_Rules.md",
    "[[H0_Rules]]",
    "Drafts/other.md",
    "[[other]]",
    "/etc/passwd",
    "Needs_Action/missing.md",
    "Needs_Action",
]


def test_a_hostile_source_never_marks_a_note_outside_needs_action(vault_dir: Path, monkeypatch, capsys):
    """`source:` is editable by anyone: whatever it says, rejecting the draft touches no other note."""
    from h0.triage import ensure_rules_file

    ensure_rules_file(vault_dir)
    write_draft(vault_dir, "Drafts", "other.md", status="awaiting_approval")
    before = {p: p.read_bytes() for p in vault_dir.rglob("*.md")}
    for index, source in enumerate(HOSTILE_SOURCES):
        write_draft(vault_dir, "Rejected", f"evil{index}.md", source=repr(source))
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert main(["sweep"]) == 0
    assert capsys.readouterr().out.strip() == f"h0 sweep: {len(HOSTILE_SOURCES)} rejected (filed in Done/)"
    for index in range(len(HOSTILE_SOURCES)):
        assert frontmatter(vault_dir, f"Done/evil{index}.md")["decision"] == "rejected"
    assert {p: p.read_bytes() for p in before} == before  # the rules, the other draft: byte for byte
    rejected = events(vault_dir, event="draft_rejected")
    assert len(rejected) == len(HOSTILE_SOURCES) and all(r.get("source") is None for r in rejected)


def test_an_urgent_email_whose_reply_was_rejected_is_listed_for_the_rejection_with_a_safe_link(vault_dir: Path):
    """Given triage's `decision: urgent` and the human's rejection, the list says the rejection (not
    "reply drafted"); a `draft:` someone edited into markup stays text on the dashboard."""
    from h0.report.dashboard import render_dashboard

    email(
        vault_dir,
        "EMAIL_u1.md",
        sender="Boss <boss@example.com>",
        subject="Now!",
        body="Call me.",
        status="rejected_reply",
    )
    email(vault_dir, "EMAIL_u2.md", sender="Eve <eve@example.com>", subject="Hi", body="x", status="rejected_reply")
    for name, extra in (
        ("EMAIL_u1.md", "decision: urgent\ndraft: Done/REPLY_EMAIL_u1.md"),
        ("EMAIL_u2.md", 'draft: "x]]|[[evil"'),
    ):
        path = vault_dir / "Needs_Action" / name
        path.write_text(path.read_text().replace("type: email", f"type: email\n{extra}"))
    status = collect_status(load_settings(vault_path=vault_dir))
    assert [(n["path"], n["decision"]) for n in status["needs_you"]] == [
        ("Needs_Action/EMAIL_u1.md", "rejected_reply"),
        ("Needs_Action/EMAIL_u2.md", "rejected_reply"),
    ]
    assert status["needs_you"][0]["reason"] == "you rejected the reply (Done/REPLY_EMAIL_u1.md)"
    page = render_dashboard(status)
    assert "you rejected the reply: [[Done/REPLY_EMAIL_u1]]" in page
    assert "[[evil" not in page and "reply drafted" not in page


def test_given_rejected_notes_in_approved_when_swept_then_only_the_email_one_answers_is_marked(
    vault_dir: Path, monkeypatch, capsys
):
    """Given `status: rejected` on notes in Approved/, when the sweep looks at them, then the mail server reads each
    once and refuses it, its answer naming the note's `source:`; the send step files the note from that answer
    (it does not read it again): the email one answers is back on the list, and a hostile source marks nothing."""
    from h0.triage import ensure_rules_file

    ensure_rules_file(vault_dir)
    email(
        vault_dir, "EMAIL_r5.md", sender="Ana <ana@example.com>", subject="Hi", body="Hi?", status="awaiting_approval"
    )
    write_draft(vault_dir, "Drafts", "other.md", status="awaiting_approval")
    before = {p: p.read_bytes() for p in vault_dir.rglob("*.md") if p.name != "EMAIL_r5.md"}
    write_draft(vault_dir, "Approved", "mine.md", to="ana@example.com", status="rejected", source="'[[EMAIL_r5]]'")
    for index, source in enumerate(HOSTILE_SOURCES):
        write_draft(vault_dir, "Approved", f"evil{index}.md", status="rejected", source=repr(source))
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert main(["sweep"]) == 0
    capsys.readouterr()
    fm = frontmatter(vault_dir, "Needs_Action/EMAIL_r5.md")
    assert fm["status"] == "rejected_reply" and fm["draft"] == "Done/mine.md"
    for index in range(len(HOSTILE_SOURCES)):
        assert frontmatter(vault_dir, f"Done/evil{index}.md")["decision"] == "rejected"
    assert {p: p.read_bytes() for p in before} == before  # the rules, the other draft: byte for byte
    rejected = {r["path"]: r.get("source") for r in events(vault_dir, event="draft_rejected")}
    assert rejected.pop("Approved/mine.md") == "Needs_Action/EMAIL_r5.md" and set(rejected.values()) == {None}
    assert not list((vault_dir / "Outbox").glob("*.eml"))
