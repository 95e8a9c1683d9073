"""The workers (h0.pipeline.workers): a job goes through the routing table to its handler, and how
it ended goes back to the queue — a failure is retried on the queue's backoff, never a fixed wait."""

from __future__ import annotations

from pathlib import Path

from h0.handlers.context import HandlerContext
from h0.pipeline.pass_summary import FAILED, PassTally
from h0.pipeline.settle import SettleTracker
from h0.pipeline.workers import Workers
from h0.pipeline.workqueue import WorkQueue
from h0.retry import Backoff
from h0.vault import Vault
from tests.pipeline.harness import events, settings_for, write_draft


class FakeClock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def workers_for(vault_dir: Path, queue: WorkQueue, *, one_pass: bool = False) -> tuple[Workers, PassTally]:
    vault = Vault(vault_dir)
    ctx = HandlerContext.local(settings_for(vault_dir), vault, retries=queue, one_pass=one_pass)  # no mail server
    tally = PassTally()
    return Workers(
        queue,
        vault,
        SettleTracker(1.0),
        tally,
        ctx,
        ctx.audit,
        sender=object(),
        jobs={},
        triage=False,
        one_pass=one_pass,
    ), tally


def test_given_no_mail_server_when_an_approved_draft_fails_then_the_queue_retries_it_after_its_backoff(
    vault_dir: Path, caplog_loguru: list[str]
):
    clock = FakeClock()
    queue = WorkQueue(clock=clock, backoff=Backoff(base=4.0, multiplier=2.0, jitter="none"))
    workers, tally = workers_for(vault_dir, queue)
    write_draft(vault_dir, "Approved", "wait.md")
    queue.put("Approved/wait.md")

    for delay in (4.0, 8.0):
        job = queue.get(timeout=0)
        assert job is not None
        workers.run_job(job)
        assert queue.get(timeout=0) is None  # not at once
        clock.now += delay
    again = queue.get(timeout=0)
    assert again is not None and again.path == "Approved/wait.md" and again.attempt == 2
    assert [e["retry_in"] for e in events(vault_dir, event="handler_error")] == [4.0, 8.0]
    (said,) = [m for m in caplog_loguru if m.startswith("Approved/wait.md failed")]  # said once, as retry_words says
    assert said.endswith("; retry in 4s)")
    assert tally.counts()[FAILED] == 1 and (vault_dir / "Approved/wait.md").exists()


def test_given_one_pass_when_a_handler_fails_then_nothing_retries_it_in_the_pass(
    vault_dir: Path, caplog_loguru: list[str]
):
    clock = FakeClock()
    queue = WorkQueue(clock=clock)
    workers, _ = workers_for(vault_dir, queue, one_pass=True)
    write_draft(vault_dir, "Approved", "wait.md")
    queue.put("Approved/wait.md")
    workers.run_job(queue.get(timeout=0))
    clock.now += 3600
    assert queue.get(timeout=0) is None and queue.pending() == 0
    assert [e.get("retry_in") for e in events(vault_dir, event="handler_error")] == [None]  # None: not written
    (said,) = [m for m in caplog_loguru if m.startswith("Approved/wait.md failed")]
    assert said.endswith("; the next `h0 sweep` or `h0 watch` retries)")
