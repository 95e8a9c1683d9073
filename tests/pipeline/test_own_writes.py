"""H0's own writes come back as file events, and are read like anyone else's: the human's edit right
after H0's write is acted on, and after a burst the daemon's index holds every note as the vault does."""

from __future__ import annotations

import os
from pathlib import Path

from h0.pipeline import signals
from h0.triage import Triager, ensure_rules_file
from tests.pipeline.harness import events, frontmatter, running_daemon, settings_for, wait_until
from tests.pipeline.test_pipeline_triage import email, triager

EMAIL = "Needs_Action/EMAIL_a1.md"
DRAFT = "Drafts/REPLY_EMAIL_a1.md"
MAIL = ("Needs_Action", "Drafts", "Done")


def test_given_a_running_daemon_the_human_s_edit_right_after_h0_s_draft_is_acted_on(vault_dir: Path):
    with running_daemon(vault_dir, triager=triager(vault_dir)):
        email(
            vault_dir,
            "EMAIL_a1.md",
            sender="Dana Rivera <dana@example.com>",
            subject="Friday?",
            body="Could we move the review to Friday?",
        )
        draft = vault_dir / DRAFT
        assert wait_until(draft.exists)
        assert wait_until(lambda: frontmatter(vault_dir, EMAIL).get("status") == "awaiting_approval")
        # The human rejects H0's draft at once: read as it is now, and archived.
        draft.write_text(draft.read_text().replace("status: pending_approval", "status: rejected"))
        assert wait_until(lambda: events(vault_dir, event="draft_rejected"))
        assert wait_until(lambda: not draft.exists())
    (decision,) = events(vault_dir, event="triage_decision")  # decided once
    assert decision["note"] == EMAIL


def test_after_a_burst_the_running_daemon_s_index_holds_every_note_as_the_vault_does(vault_dir: Path):
    """Given a real daemon triaging a burst, when its queue is empty, then its drafting index holds exactly
    the notes of the mail folders on disk (H0's own drafts and updates included)."""
    ensure_rules_file(vault_dir)
    staging = vault_dir.parent / "staging"
    staging.mkdir()
    count = 80
    for i in range(count):
        (staging / f"EMAIL_{i}.md").write_text(
            f"---\ntype: email\nstatus: pending\nmessage_id: m{i}\nthread_id: t{i}\n"
            f"from: 'Dana <dana{i % 7}@example.com>'\nsubject: 'Friday {i}?'\n---\nCould we meet on Friday?\n"
        )
    decided: set[str] = set()

    def on_decided(sender, path, **_):
        decided.add(path)

    def on_disk() -> set[str]:
        return {f"{folder}/{f.name}" for folder in MAIL for f in (vault_dir / folder).glob("*.md")}

    signals.triage_decided.connect(on_decided, weak=False)
    try:
        with running_daemon(vault_dir, triager=Triager.from_settings(settings_for(vault_dir), vault_dir)) as daemon:
            for path in staging.iterdir():
                os.rename(path, vault_dir / "Needs_Action" / path.name)
            assert wait_until(lambda: len(decided) >= count, timeout=60)
            assert daemon.queue.wait_idle(30)
            assert daemon.ctx is not None and daemon.ctx.drafting is not None
            index = daemon.ctx.drafting.knowledge.index

            def indexed() -> set[str]:
                index.sync()  # what any look-up does first
                return {path for (path,) in index.db.rows("SELECT path FROM docs") if path.split("/")[0] in MAIL}

            assert wait_until(lambda: indexed() == on_disk(), timeout=30)  # the watcher's last events arrive
    finally:
        signals.triage_decided.disconnect(on_decided)
    assert len(on_disk()) == 2 * count  # an email and its draft each
