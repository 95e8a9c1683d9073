"""The workers: take a job from the queue, run its handler through the routing table, count and
announce what it did, and tell the queue when to look again.

    job ─► routes (folder → signal + handler) ─► settle? ─► signal.send ─► handler(path, ctx)
                                                                  │
               queue.done(retry_in) ◄── tally + report signal ◄── Outcome
               queue.failed(...)    ◄── log line + handler_error ◄── exception

A handler's Outcome comes back as its return value; the report signal for it (email-sent,
send-failed, note-archived, triage-decided) is sent with the Outcome's data, for observers.
With `one_pass` (`h0 sweep`) nothing that failed is retried in the pass: the next sweep or
`h0 watch` retries it, and the log lines say so.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from blinker import NamedSignal
from loguru import logger

from h0.errors import H0Error, RateLimited
from h0.handlers.context import HandlerContext
from h0.handlers.outcome import Action, Outcome
from h0.pipeline import routes, signals
from h0.pipeline.pass_summary import PassTally
from h0.pipeline.settle import SettleTracker
from h0.pipeline.workqueue import Job, WorkQueue
from h0.retry import retry_words
from h0.vault import AuditLog, Note, Vault

INGEST_JOB = "@ingest"  # not a path: the queue's key for "look for new mail"
GET_TIMEOUT = 0.5  # how often an idle worker looks whether it should stop

# Outcomes that are a failed try: the queue counts an attempt and its backoff grows. "deferred": the
# model could not triage an email now (h0.handlers.llmwait).
RETRIED_FAILURES = (Action.FAILED, Action.DEFERRED)
# The report signal each kind of Outcome is announced on (the others are announced by nothing).
REPORTS: dict[Action, NamedSignal] = {
    Action.SENT: signals.email_sent,
    Action.FAILED: signals.send_failed,
    Action.BOUNCED: signals.send_failed,
    Action.REJECTED: signals.note_archived,
    Action.TRIAGED: signals.triage_decided,
}


class Workers:
    """What every worker thread runs (`work`): thread-safe, one instance per daemon.

    `jobs` maps the queue's non-path keys (new mail, the follow-up pass) to what runs them;
    `sender` is who the signals say sent them (the daemon: observers filter on it)."""

    def __init__(
        self,
        queue: WorkQueue,
        vault: Vault,
        settle: SettleTracker,
        tally: PassTally,
        ctx: HandlerContext,
        audit: AuditLog,
        *,
        sender: object,
        jobs: Mapping[str, Callable[[], None]],
        triage: bool,
        one_pass: bool = False,
    ) -> None:
        self.queue = queue
        self.vault = vault
        self.root = Path(vault.root)
        self.settle = settle
        self.tally = tally
        self.ctx = ctx
        self.audit = audit
        self.sender = sender
        self.jobs = dict(jobs)
        self.triage = triage
        self.one_pass = one_pass

    def work(self, stop: threading.Event) -> None:
        """One worker's loop, until `stop` is set and the queue has nothing due."""
        while True:
            job = self.queue.get(timeout=GET_TIMEOUT)
            if job is None:
                if stop.is_set():
                    return
                continue
            if self.triage and routes.batched(job.path):
                self.run_batch([job, *self.queue.take(routes.batched, routes.TRIAGE.limit - 1)])
            else:
                self.run_job(job)

    def run_job(self, job: Job) -> None:
        """Run one job and finish it in the queue, whatever happens (one bad note never stops a worker)."""
        try:
            self._dispatch(job)
        except Exception as exc:  # noqa: BLE001 - one bad note must not stop the worker
            self._failed(job, exc)

    def _dispatch(self, job: Job) -> None:
        keyed = self.jobs.get(job.path)
        if keyed is not None:
            keyed()
            self.queue.done(job)
            return
        if job.path == routes.LEARN_JOB:
            self._handle(job, routes.LEARN)
            return
        if not routes.routes_for(job.path):
            self.queue.done(job)
            return
        approval = routes.is_approval(job.path)
        wait = self.settle.wait_for(job.path, self.root / job.path, approval=approval)
        if wait > 0:
            if approval:
                self.tally.settling(job.path)
            self.queue.done(job, retry_in=wait)  # still being written: look again shortly
            return
        route = routes.route_for(job.path, self.vault)
        if route is None:
            self.queue.done(job)
        else:
            self._handle(job, route)

    def _handle(self, job: Job, route: routes.Route) -> None:
        route.signal.send(self.sender, path=job.path)
        self._close(job, route.handler(job.path, self.ctx))

    def _close(self, job: Job, outcome: Outcome) -> None:
        """Finish a job with its handler's Outcome: a failure that asks for a retry counts an attempt
        (the queue's backoff grows with them); any other wait it asks for does not."""
        retry_in = self.finish(job.path, outcome)
        if outcome.action in RETRIED_FAILURES and retry_in is not None:
            self.queue.failed(job, retry_after=retry_in)
        else:
            self.queue.done(job, retry_in=retry_in)

    def run_batch(self, jobs: list[Job]) -> None:
        """Triage a batch of Needs_Action/ notes: those still being written wait, those not pending
        triage end here (H0's own updates), the rest go to the handler together; each job is
        finished with its own retry."""
        left = {job.path: job for job in jobs}
        try:
            ready = []
            seen: dict[str, Note] = {}  # the notes read for the look: the handler reads them no second time
            for job in jobs:
                wait = self.settle.wait_for(job.path, self.root / job.path, approval=False)
                read = routes.reader(self.vault, job.path)
                if wait > 0 or not routes.TRIAGE.wanted(read):
                    self.queue.done(left.pop(job.path), retry_in=wait if wait > 0 else None)
                    continue
                ready.append(job.path)
                with contextlib.suppress(H0Error):  # unreadable: the handler reads it and reports why
                    seen[job.path] = read()
            if not ready:
                return
            routes.TRIAGE.signal.send(self.sender, paths=ready)
            results = routes.TRIAGE.handler(ready, self.ctx, seen)
            for path in ready:
                result = results.get(path)
                if isinstance(result, Exception):
                    self._failed(left.pop(path), result)
                elif result is None:
                    self.queue.done(left.pop(path))
                else:
                    self._close(left[path], result)
                    del left[path]
        except Exception as exc:  # noqa: BLE001 - the batch failed as a whole (e.g. the vault unreadable)
            for job in list(left.values()):
                self._failed(job, exc)

    def finish(self, path: str, outcome: Outcome) -> float | None:
        """Count and announce what a handler did; the retry it asks for."""
        self.tally.record(path, outcome.action, outcome.detail, outcome.data)
        report = REPORTS.get(outcome.action)
        if report is not None:
            report.send(self.sender, path=path, **outcome.data)
        if outcome.action in (Action.SENT, Action.REJECTED):
            # Compare what was sent with what H0 wrote: a burst of sends is a few looks (the queue's wait).
            self.queue.put(routes.LEARN_JOB, delay=self.queue.waits.learn_s)
        if self.one_pass and outcome.action in (*RETRIED_FAILURES, Action.PAUSED):
            return None  # this process exits after the pass: the next sweep or `h0 watch` retries
        if outcome.retry_in is None and outcome.again is not None:
            return self.queue.wait(path, outcome.again)  # the handler said why; the queue says when
        return outcome.retry_in

    def _failed(self, job: Job, exc: Exception) -> None:
        """The queue schedules the retry (its backoff, or the Retry-After the error named); then
        the failure is said: a typed error in one line, once per message (e.g. ingest while the
        Gmail token is missing, every poll); anything else is a bug, with its traceback."""
        retry_after = exc.retry_after if isinstance(exc, RateLimited) and exc.retry_after > 0 else None
        retry_in = self.queue.failed(job, retryable=not self.one_pass, retry_after=retry_after)
        path = job.path
        self.tally.crashed(path)
        again = retry_words(retry_in, self.one_pass)  # retry_in is None exactly when one_pass: not retryable
        if isinstance(exc, H0Error):
            if self.ctx.state.first_report(path, f"handler_{exc.code}", exc.message):
                what = "looking for new mail" if path == INGEST_JOB else path
                logger.error("{} failed: {} ({}; {})", what, exc.message, exc.code, again)
        else:
            logger.opt(exception=exc).error("handler failed for {} ({})", path, again)
        try:
            self.audit.write(
                "handler_error", "error", path=path, error=f"{type(exc).__name__}: {exc}", retry_in=retry_in
            )
        except H0Error:
            pass
