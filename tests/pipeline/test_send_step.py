"""The daemon's send step (h0.handlers.send): sending paused? → one tool call → an Outcome. Its pause
runs on the work queue's clock, so a test moves a fake clock instead of sleeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import load_settings
from h0.errors import AuthRequired, McpUnavailable
from h0.handlers.context import Action, HandlerContext, HandlerState
from h0.handlers.send import send_approved_draft
from h0.handlers.send_failed import not_sent
from h0.pipeline.workqueue import WorkQueue
from h0.retry import Again, Waits
from h0.vault import Vault
from tests.pipeline.harness import write_draft


def paused_context(vault_dir: Path, now: list[float]) -> HandlerContext:
    """A send step's context on a fake clock (`now`), whose queue pauses 45 s for missing credentials."""
    queue = WorkQueue(clock=lambda: now[0], waits=Waits(credentials_s=45.0))
    return HandlerContext.local(
        load_settings(vault_path=vault_dir, mail_backend="outbox"),
        Vault(vault_dir),
        state=HandlerState(clock=queue.clock),
        retries=queue,
    )


def test_given_missing_credentials_then_sending_pauses_for_the_queues_wait_and_resumes_on_its_clock(
    vault_dir: Path,
):
    now = [1000.0]
    ctx = paused_context(vault_dir, now)

    failed = not_sent("Approved/a.md", AuthRequired("The Gmail token is missing."), ctx)

    assert failed.action is Action.FAILED and failed.again is Again.CREDENTIALS and failed.retry_in == 45.0
    write_draft(vault_dir, "Approved", "b.md", status="pending_approval")
    now[0] += 44.5
    waiting = send_approved_draft("Approved/b.md", ctx)  # no tool call while paused (there is no mail server)
    assert waiting.action is Action.PAUSED and waiting.retry_in == pytest.approx(0.5)
    now[0] += 0.5
    with pytest.raises(McpUnavailable):  # the pause is over: the step asks the mail server again
        send_approved_draft("Approved/b.md", ctx)


def test_a_draft_rejected_in_approved_while_sending_is_paused_is_filed_at_once(vault_dir: Path):
    now = [1000.0]
    ctx = paused_context(vault_dir, now)
    not_sent("Approved/a.md", AuthRequired("The Gmail token is missing."), ctx)
    write_draft(vault_dir, "Approved", "no.md", status="Rejected")
    write_draft(vault_dir, "Approved", "yes.md", status="pending_approval")

    assert send_approved_draft("Approved/yes.md", ctx).action is Action.PAUSED  # waits: nothing is sent now
    filed = send_approved_draft("Approved/no.md", ctx)

    assert filed.action is Action.REJECTED and filed.detail == "Done/no.md"
    assert (vault_dir / "Approved/yes.md").exists() and not (vault_dir / "Approved/no.md").exists()
    assert "decision: rejected" in (vault_dir / "Done/no.md").read_text()
