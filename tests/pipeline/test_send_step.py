"""The daemon's send step (h0.handlers.send): sending paused? → one tool call → an Outcome. Its pause
runs on the work queue's clock, so a test moves a fake clock instead of sleeping."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.errors import (
    AuthRequired,
    H0Error,
    InvalidRequest,
    McpUnavailable,
    ParseError,
    RateLimited,
    Refusal,
    SendFailed,
    Then,
    refuse,
    then_of,
)
from h0.handlers import send
from h0.handlers.context import HandlerContext, HandlerState
from h0.handlers.outcome import Action, Outcome
from h0.handlers.send import ACTIONS, send_approved_draft
from h0.pipeline.workqueue import WorkQueue
from h0.retry import Again, Waits
from h0.vault import Vault
from tests.pipeline.harness import write_draft
from tests.pipeline.send_path_trace import trace_ways

WORDS = ("shown", "shown_like", "others", "domain_as_written", "domain")


def paused_context(vault_dir: Path, now: list[float]) -> HandlerContext:
    """A send step's context on a fake clock (`now`), whose queue pauses 45 s for missing credentials."""
    queue = WorkQueue(clock=lambda: now[0], waits=Waits(credentials_s=45.0))
    return HandlerContext.local(
        load_settings(vault_path=vault_dir, mail_backend="outbox"),
        Vault(vault_dir),
        state=HandlerState(clock=queue.clock),
        retries=queue,
    )


def not_sent(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """What the send step does with the mail server's answer `error` (the action its `then` names)."""
    return ACTIONS[error.then](path, error, ctx)


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


@pytest.mark.parametrize(
    ("error", "then"),
    [
        (refuse(Refusal.NOT_SETTLED, {"settle_s": 10}, path="Approved/a.md"), Then.LOOK_AGAIN),
        (refuse(Refusal.STILL_SENDING), Then.LOOK_AGAIN),
        (refuse(Refusal.LOOKALIKE_DOMAIN, {k: "x" for k in WORDS}), Then.BACK_HELD),
        (refuse(Refusal.INVISIBLE_TEXT, {"problems_text": "a comment"}), Then.BACK_NOT_SENT),
        (refuse(Refusal.NOT_SENDABLE_STATUS, {"since": ""}, state="sent"), Then.BACK_AS_IS),
        (refuse(Refusal.NOT_SENDABLE_STATUS, state="rejected"), Then.ARCHIVE),
        (refuse(Refusal.COPY_OF_SENT, {"what": "sent", "original": "Done/a.md"}), Then.FILE_COPY),
        (ParseError("not YAML"), Then.BACK_UNREAD),
        (InvalidRequest("bad address"), Then.BACK_NOT_SENT),
        (RateLimited("cap", retry_after=60), Then.PAUSE_FOR_CAP),
        (AuthRequired("token"), Then.PAUSE_FOR_CREDENTIALS),
        (SendFailed("550", bounce=True), Then.FILE_BOUNCE),
        (SendFailed("silent", outcome="unknown"), Then.FILE_UNKNOWN),
        (SendFailed("503", retryable=True), Then.RETRY),
        (McpUnavailable("gone"), Then.RETRY),
    ],
)
def test_what_becomes_of_an_unsent_note_is_decided_once_and_carried_on_the_answer(error: H0Error, then: Then):
    """Every answer of a send that did not go names what becomes of the note (h0.errors.then_of, the one
    place); a refusal carries it on the wire from the start."""
    assert then_of(error) is then and error.then is then
    if error.refusal is not None:
        assert error.details["then"] == then.value


def test_the_send_step_does_what_the_answer_says_not_what_the_errors_class_suggests(vault_dir: Path):
    """Given the mail server's answer is an invalid_request that says `then: look_again`, when the send step
    gets it, then it looks again and the note stays in Approved/: the step acts on the answer and decides nothing."""
    now = [1000.0]
    ctx = paused_context(vault_dir, now)
    write_draft(vault_dir, "Approved", "a.md")
    outcome = not_sent("Approved/a.md", InvalidRequest("changed meanwhile", then="look_again", retry_after=3), ctx)
    assert outcome.action is Action.WAITING and outcome.retry_in == 3 and (vault_dir / "Approved/a.md").exists()


def _step_source() -> ast.Module:
    return ast.parse(Path(send.__file__).read_text(encoding="utf-8"))


def test_the_send_step_reads_as_its_way_three_ways_out_and_one_hand_off():
    """The send step's shape, read from its source (as tests/test_layers.py reads imports): the handler returns
    at most three times (paused, not sent, sent), what becomes of a note it did not send is in its own module,
    and of the handlers' room it uses only the context, the outcome it answers with and, for a note the human
    rejected, the reject step — no ping-pong between the room's modules."""
    tree = _step_source()
    step = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "send_approved_draft")
    assert len([n for n in ast.walk(step) if isinstance(n, ast.Return)]) <= 3
    from_handlers = {
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("h0.handlers.")
    }
    assert from_handlers == {"h0.handlers.context", "h0.handlers.outcome", "h0.handlers.reject"}


def test_every_answer_of_the_mail_server_has_one_action_and_nothing_else_does():
    """What becomes of an unsent note is the answer's (`Then`, decided by the mail server next to the refusal):
    the daemon has exactly one action for each, and no action for anything else."""
    assert set(ACTIONS) == set(Then)


def test_the_steps_path_stays_short_on_every_way(vault_dir: Path):
    """Traced (tests/pipeline/send_path_trace.py): on every way — sent, refused, rejected, a copy, try again, outcome
    unknown, bounced, both pauses, while paused — the step visits at most 10 places and returns at most three
    times (docs/architecture.md, "One approved note's way out"); a note the mail server read is not read again."""
    ways = {way.name: way for way in trace_ways(vault_dir)}
    assert ways["sent"].action == "sent" and ways["rejected in Approved/"].action == "rejected"
    assert {way.action for way in ways.values()} >= {"sent", "refused", "rejected", "skipped", "failed", "paused"}
    too_long = {n: (len(w.places), w.returns, w.places) for n, w in ways.items() if len(w.places) > 10 or w.returns > 3}
    assert not too_long
    read_again = [
        n for n, w in ways.items() if "vault/api.py:Notes.read" in w.places and n != "while sending is paused"
    ]
    assert not read_again  # only a paused step reads the note (nothing asked the mail server): the reject step's read
