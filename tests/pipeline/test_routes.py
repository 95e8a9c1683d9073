"""The routing table (h0.pipeline.routes): one row per folder and kind of note says which handler
runs and which signal announces it; the workers call the handler and take its Outcome as a
return value, so a receiver on a signal is only an observer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from h0.handlers.reject import archive_rejected
from h0.handlers.revise import revise_draft
from h0.handlers.send import send_approved_draft
from h0.handlers.triage import triage_emails
from h0.pipeline import routes, signals
from h0.pipeline.watcher import TRIGGER_FOLDERS
from h0.vault import Vault
from tests.pipeline.harness import outbox, running_daemon, wait_until, write_draft


def test_each_trigger_folder_has_its_handler_and_its_signal_in_one_table(vault_dir: Path):
    vault = Vault(vault_dir)
    write_draft(vault_dir, "Drafts", "plain.md")
    write_draft(vault_dir, "Drafts", "no.md", status="rejected")
    write_draft(vault_dir, "Drafts", "again.md", body="h0: shorter please\n\nHi Bob,\n")

    approved = routes.route_for("Approved/x.md", vault)
    assert approved is not None and (approved.handler, approved.signal) == (send_approved_draft, signals.note_approved)
    rejected = routes.route_for("Rejected/x.md", vault)
    assert rejected is not None and (rejected.handler, rejected.signal) == (archive_rejected, signals.note_rejected)
    no = routes.route_for("Drafts/no.md", vault)
    assert no is not None and (no.handler, no.signal) == (archive_rejected, signals.note_rejected)
    again = routes.route_for("Drafts/again.md", vault)
    assert again is not None and (again.handler, again.signal) == (revise_draft, signals.draft_revision_requested)
    assert routes.route_for("Drafts/plain.md", vault) is None  # a draft waiting for the human: nothing to do
    assert routes.route_for("Done/x.md", vault) is None and routes.routes_for("Notes/x.md") == ()
    assert (routes.TRIAGE.handler, routes.TRIAGE.signal) == (triage_emails, signals.notes_need_action)
    assert routes.batched("Needs_Action/EMAIL_1.md") and not routes.batched("Approved/x.md")
    # The watcher watches exactly the folders the table has work in.
    assert set(TRIGGER_FOLDERS.values()) == {"Approved", "Rejected", "Drafts", "Needs_Action"}


def test_the_sweep_finds_what_the_table_routes(vault_dir: Path):
    write_draft(vault_dir, "Approved", "go.md")
    write_draft(vault_dir, "Rejected", "drop.md")
    write_draft(vault_dir, "Drafts", "plain.md")
    write_draft(vault_dir, "Drafts", "no.md", status="rejected")
    (vault_dir / "Needs_Action/EMAIL_1.md").write_text("---\nfrom: a@example.com\nstatus: pending\n---\nHello\n")
    (vault_dir / "Needs_Action/EMAIL_2.md").write_text("---\nfrom: a@example.com\nstatus: needs_info\n---\nHello\n")
    vault = Vault(vault_dir)
    found = routes.reconcile(vault, triage=True)
    assert sorted(found) == ["Approved/go.md", "Drafts/no.md", "Needs_Action/EMAIL_1.md", "Rejected/drop.md"]
    assert "Needs_Action/EMAIL_1.md" not in routes.reconcile(vault, triage=False)
    assert all(routes.route_for(path, vault) is not None for path in routes.reconcile(vault, triage=False))


def test_given_an_observer_on_note_approved_that_returns_something_then_the_draft_is_sent_once_all_the_same(
    vault_dir: Path,
):
    """No code reads a signal's return list: a receiver that answers (as the old wiring's handlers
    did) changes nothing; it hears the path, before the report signal for what the handler did."""
    heard: list[tuple[str, str]] = []

    def observer(sender: Any, **facts: Any) -> str:
        heard.append(("approved", facts["path"]))
        return "not an Outcome"

    def on_sent(sender: Any, **facts: Any) -> None:
        heard.append(("sent", facts["path"]))

    signals.note_approved.connect(observer, weak=False)
    signals.email_sent.connect(on_sent, weak=False)
    try:
        with running_daemon(vault_dir):
            write_draft(vault_dir, "Approved", "hello.md")
            assert wait_until(lambda: ("sent", "Approved/hello.md") in heard)
    finally:
        signals.note_approved.disconnect(observer)
        signals.email_sent.disconnect(on_sent)
    assert (vault_dir / "Done/hello.md").is_file() and len(outbox(vault_dir)) == 1
    assert heard.index(("approved", "Approved/hello.md")) < heard.index(("sent", "Approved/hello.md"))
