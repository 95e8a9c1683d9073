"""The daemon: lock the vault, open the MCP sessions, watch, sweep, and run handlers.

    watchdog event ─┐
    sweep ──────────┼─► WorkQueue (dedupe by path) ─► worker ─► trigger signal ─► handler
    retry backoff ──┘                                              │
                                                      Outcome ─► report signal + log line

`Daemon.run()` is `h0 watch`; `Daemon.run_once()` is `h0 sweep` (one pass, then exit: with
`one_pass` set before `start()`, nothing that failed is retried in the pass — the next sweep
or `h0 watch` retries it, and the log lines say so — and `tally` counts what the pass did).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loguru import logger

from h0.drafting import service as drafting_service
from h0.drafting.revise import revision_request
from h0.errors import H0Error, ParseError
from h0.handlers.context import HandlerContext, HandlerState, NoteOps, Outcome
from h0.handlers.triage import needs_triage
from h0.mail.api import MailAPI
from h0.mcp.api import McpMail, McpVault
from h0.mcp.client import McpConnection, ServerCommand, settings_env, with_fallback
from h0.pipeline import signals
from h0.pipeline.followups import FOLLOW_UP_PASS_SECONDS, FOLLOWUP_JOB, find_followup_notes
from h0.pipeline.lock import VaultLock
from h0.pipeline.settle import STABILITY_SECONDS, SettleTracker
from h0.pipeline.sweep import reconcile
from h0.pipeline.tally import PassTally
from h0.pipeline.watcher import VaultWatcher
from h0.pipeline.wiring import connect_handlers
from h0.pipeline.workqueue import Job, WorkQueue
from h0.platform.watch import NATIVE
from h0.state import StateDB
from h0.vault import AuditLog, Vault
from h0.vault.api import LocalVault, VaultAPI
from h0.vault.draft_state import is_rejected
from h0.vault.layout import APPROVED, DRAFTS, LOGS, NEEDS_ACTION, REJECTED
from h0.vault.paths import folder_key

INGEST_JOB = "@ingest"  # not a path: the queue's key for "look for new mail"
LEARN_JOB = "@learn"  # not a path: "learn from the drafts filed in Done/ since the last look"
LEARN_DELAY = 5.0  # after a send or a rejection: a burst of them is a few looks, not one a second
TICK_SECONDS = 0.25
CONNECT_WAIT_SECONDS = 10.0
HANDLER_ERROR_RETRY = 30.0
SWEEP_WAITS_SECONDS = 2 * STABILITY_SECONDS  # `h0 sweep` waits for retries due this soon (a note still being written)

_ROUTES = {
    folder_key(APPROVED): signals.note_approved,
    folder_key(REJECTED): signals.note_rejected,
    folder_key(DRAFTS): signals.note_rejected,
}
_NEEDS_ACTION_KEY = folder_key(NEEDS_ACTION)  # triaged in batches: signals.notes_need_action
TRIAGE_BATCH = 500  # notes a worker takes at once from a burst (one thread look-up, three vault calls; the batch tools' most)


class Daemon:
    def __init__(
        self,
        settings: Any,
        *,
        workers: int = 4,
        triager: Any = None,
        connect_servers: bool = True,
        sweep_interval: float | None = None,
        ingest: bool = False,
    ) -> None:
        self.settings = settings
        self.root = Path(settings.vault_path)
        self.vault = Vault(self.root)
        self.audit = AuditLog(self.root / LOGS, "h0")
        self.queue = WorkQueue()
        self.lock = VaultLock(self.root)
        self.workers = workers
        self.sweep_interval = sweep_interval if sweep_interval is not None else settings.sweep_interval_seconds
        self.connect_servers = connect_servers
        self.triager = triager
        self.connections: dict[str, McpConnection] = {}
        self.ctx: HandlerContext | None = None
        self.settle = SettleTracker(settings.approval_settle_seconds)
        self.watcher = VaultWatcher(self.root, self._on_event, self._on_overflow, kind=settings.h0_watcher,
                                    on_note=self._on_note)
        self._feeds_drafting = False  # this daemon's watcher reports every note to drafting's index
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._overflowed = threading.Event()
        self._next_sweep = 0.0
        self._periodic: list[tuple[float, float, Callable[[], None]]] = []
        self.ingest = ingest
        self.last_ingest: Any = None
        self.one_pass = False  # `h0 sweep`: set before start()
        self.tally = PassTally()  # what the handlers did, note by note (`h0 sweep`'s summary)
        self.dashboard: Any = None  # h0.report.dashboard.DashboardWriter while running
        self.idle: Any = None  # h0.mail.imap_idle.IdleWatcher while running with MAIL_BACKEND=imap
        self.clock: Callable[[], float] = time.time  # the follow-up pass's "now" (tests move it forward)
        self.last_followup: Any = None  # h0.handlers.followup.FollowupReport of the last pass

    # ------------------------------------------------------------------ lifecycle

    def start(self, *, watch: bool = True, sweep: bool = True) -> None:
        """Lock the vault, connect, start workers; then (by default) watch and sweep."""
        self.lock.acquire()
        try:
            self._start(watch, sweep)
        except BaseException:
            self.stop()
            raise

    def _start(self, watch: bool, sweep: bool) -> None:
        connect_handlers()
        vault: VaultAPI = LocalVault(self.vault)
        mail: MailAPI | None = None
        if self.connect_servers:
            env = settings_env(self.settings)
            # These servers' stdio pipes are the daemon's alone: they may file sent drafts out
            # of Approved/ and take the daemon's word for how a note arrived there.
            env["H0_DAEMON_CHILD"] = "1"
            self.connections = {
                "vault": McpConnection(ServerCommand.h0("vault", "vault", env)).start(),
                "mail": McpConnection(ServerCommand.h0("mail", "gmail", env)).start(),
            }
            deadline = time.monotonic() + CONNECT_WAIT_SECONDS
            for name, connection in self.connections.items():
                if not connection.wait_ready(max(0.0, deadline - time.monotonic())):
                    logger.warning("mcp {}: not connected yet ({}); carrying on", name, connection.last_error or "starting")
            # The vault server first, this process's own vault when it is unreachable (ADR-0007);
            # mail has no fallback: an approved draft waits in Approved/ until the server is back.
            vault = with_fallback(McpVault(self.connections["vault"]), vault, self.audit, "vault")
            mail = with_fallback(McpMail(self.connections["mail"]), None, self.audit, "mail")
        self.ctx = HandlerContext(
            settings=self.settings,
            notes=NoteOps(vault),
            mail=mail,
            audit=self.audit,
            paths=self.vault.paths,
            state=HandlerState(),
            triager=self.triager,
            state_db=StateDB.for_vault(self.root, self.settings.h0_state_dir),
            arrival=self.settle.observed,
            one_pass=self.one_pass,
        )
        for index in range(self.workers):
            thread = threading.Thread(target=self._work, name=f"h0-worker-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)
        if watch:
            self.watcher.start()
            if self.settings.h0_watcher == NATIVE:
                drafting_service.watching(self.root, True)
                self._feeds_drafting = True
        self.audit.write("daemon_started", pid=os.getpid(), vault=str(self.root), backend=self.settings.mail_backend)
        from h0.report.dashboard import start_dashboard

        self.dashboard = start_dashboard(self)  # H0_Dashboard.md and the briefing, on their own thread
        if sweep:
            self._finish_interrupted()
            self.sweep("start")
            self.request_followup()  # deadlines and snoozes that passed while H0 was off
        self.add_periodic(FOLLOW_UP_PASS_SECONDS, self.request_followup, first_in=FOLLOW_UP_PASS_SECONDS)
        if self.ingest:
            self.add_periodic(self.settings.gmail_poll_seconds, self.request_ingest)
            if self.settings.mail_backend == "imap" and self.settings.imap_idle:
                from h0.mail.imap_idle import IdleWatcher

                # IMAP IDLE: new mail wakes ingest within moments; the poll above stays the safety net.
                self.idle = IdleWatcher(self.settings, self.request_ingest).start()

    def _finish_interrupted(self) -> None:
        from h0.handlers.send import finish_interrupted_filings

        try:
            finish_interrupted_filings(self.started_context())
        except Exception:  # noqa: BLE001 - recovery must not keep the daemon from starting
            logger.exception("could not finish interrupted filings; they stay as they are")

    def started_context(self) -> HandlerContext:
        """The handlers' context, which start() builds: a job run before it is a bug, said as one."""
        if self.ctx is None:
            raise RuntimeError("the daemon has not started: call start() first")
        return self.ctx

    def request_ingest(self) -> None:
        """Queue a look for new mail (at most one runs at a time; extra requests merge)."""
        self.queue.put(INGEST_JOB)

    def request_followup(self) -> None:
        """Queue a follow-up pass (h0.handlers.followup; at most one runs at a time, extra requests merge)."""
        self.queue.put(FOLLOWUP_JOB)

    def run_followup(self) -> None:
        from h0.handlers.followup import follow_up

        report = follow_up(self.started_context(), find_followup_notes(self.vault), now=self.clock())
        self.last_followup = report
        if report.changed:
            logger.debug("follow-ups: {} owed, {} awaited, {} answered, {} withdrawn, {} woken", len(report.owed),
                         len(report.awaited), len(report.answered), len(report.withdrawn), len(report.woke))

    def add_periodic(self, interval: float, task: Callable[[], None], *, first_in: float = 0.0) -> None:
        """Run `task` every `interval` seconds from the maintenance loop (e.g. mail ingest)."""
        self._periodic.append((time.monotonic() + first_in, interval, task))

    def run(self, stop: threading.Event | None = None) -> None:
        """Maintenance loop until `stop` (or `self.stop()`) is set: sweeps, watcher health."""
        stop = stop or self._stop
        self._next_sweep = time.monotonic() + self.sweep_interval
        while not stop.is_set() and not self._stop.is_set():
            stop.wait(TICK_SECONDS)
            self.maintain()

    def maintain(self) -> None:
        now = time.monotonic()
        ok, reason = self.watcher.healthy()
        if not ok:
            self._restart_watcher(reason)
        if self._overflowed.is_set():
            self._overflowed.clear()
            self.sweep("inotify queue overflow")
        if now >= self._next_sweep:
            self.sweep("interval")
            self.settle.forget_old()
        for index, (due, interval, task) in enumerate(self._periodic):
            if now >= due:
                self._periodic[index] = (now + interval, interval, task)
                try:
                    task()
                except Exception:  # noqa: BLE001 - a periodic task must not stop the daemon
                    logger.exception("periodic task {} failed", getattr(task, "__name__", task))

    def run_once(self, timeout: float = 600.0) -> bool:
        """Process everything the sweep finds (and what that produces), then return. A note written
        a moment ago waits out its short stability window within the pass; an approved note settling
        for APPROVAL_SETTLE_SECONDS is left for the next pass."""
        return self.queue.wait_idle(timeout, horizon=SWEEP_WAITS_SECONDS)

    def run_ingest(self) -> None:
        from h0.handlers.ingest import ingest_new_mail

        report = ingest_new_mail(self.started_context())
        if report.unsupported:
            if self.ingest:
                logger.info("ingest is off: MAIL_BACKEND={} cannot read mail", self.settings.mail_backend)
            self.ingest = False
            self._periodic = [p for p in self._periodic if p[2] != self.request_ingest]
        elif report.written or report.failed:
            logger.info("ingest: {} new, {} duplicate, {} failed", len(report.written), report.duplicates, report.failed)
        if report.written or report.sent:
            self.request_followup()  # an answer, a reply sent elsewhere, a snoozed thread's new message
        self.last_ingest = report

    def stop(self, timeout: float = 30.0) -> None:
        """Finish in-flight jobs (an in-flight send completes), close sessions, release the lock."""
        self._stop.set()
        if self.idle is not None:
            self.idle.stop()
            self.idle = None
        self.watcher.stop()
        if self._feeds_drafting:
            self._feeds_drafting = False
            drafting_service.watching(self.root, False)
        self.queue.close()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for connection in self.connections.values():
            connection.close()
        try:
            if self.ctx is not None:
                self.audit.write("daemon_stopped", pid=os.getpid())
        except H0Error:
            pass
        if self.dashboard is not None:
            self.dashboard.stop()  # its last word, while the vault is still ours: "not running"
            self.dashboard = None
        self.lock.release()

    # ------------------------------------------------------------------ events and sweep

    def _on_event(self, path: str, kind: str, delay: float, source: str | None = None) -> None:
        if kind == "moved":
            self.settle.moved_in(path, source)
        elif kind == "closed":
            self.settle.completed(path)
        else:
            self.settle.wrote(path)
        if not self.queue.put(path, delay=delay, settled=kind != "written"):
            self._overflowed.set()  # our own queue is full: the sweep will catch up

    def _on_note(self, path: str | None) -> None:
        drafting_service.vault_changed(self.root, path)

    def _on_overflow(self) -> None:
        logger.warning("the inotify queue overflowed: events were lost; sweeping")
        drafting_service.vault_changed(self.root, None)
        self._overflowed.set()

    def sweep(self, reason: str) -> int:
        self._next_sweep = time.monotonic() + self.sweep_interval
        try:
            paths = reconcile(self.vault, triage=self.triager is not None)
        except Exception:  # noqa: BLE001 - a failed sweep is retried at the next interval
            logger.exception("sweep failed")
            return 0
        for path in paths:
            if not self.queue.put(path, settled=False):
                break
        if reason == "start":
            self.queue.put(LEARN_JOB)  # drafts sent or rejected while no daemon ran
        if reason != "interval" or paths:
            logger.debug("sweep ({}): {} note(s) queued", reason, len(paths))
        signals.sweep_completed.send(self, queued=len(paths), reason=reason)
        return len(paths)

    def _restart_watcher(self, reason: str) -> None:
        self.watcher.stop()
        if self.watcher.current_identity() is None:
            return  # the vault folder is gone; look again at the next tick
        logger.warning("restarting the vault watcher: {}", reason)
        if reason == "the vault folder was replaced":
            try:
                self.lock.reacquire()
            except Exception as exc:  # noqa: BLE001
                # Another daemon took the new folder: two daemons must never share a vault.
                logger.error("the vault folder was replaced and {}; stopping", exc)
                self._stop.set()
                return
        try:
            self.watcher.start()
        except OSError as exc:
            logger.error("could not watch {}: {}", self.root, exc)
            return
        drafting_service.vault_changed(self.root, None)  # what changed while nobody watched
        self.audit.write("watcher_restarted", "warning", reason=reason)
        signals.watcher_restarted.send(self, reason=reason)
        self.sweep(f"watcher restarted: {reason}")

    # ------------------------------------------------------------------ workers

    def _work(self) -> None:
        while True:
            job = self.queue.get(timeout=0.5)
            if job is None:
                if self._stop.is_set():
                    return
                continue
            if self._triage_job(job.path):
                self._work_triage([job, *self.queue.take(self._triage_job, TRIAGE_BATCH - 1)])
                continue
            retry_in: float | None = None
            try:
                retry_in = self._dispatch(job)
            except Exception as exc:  # noqa: BLE001 - one bad note must not stop the worker
                retry_in = self._failure_retry()
                self._handler_failed(job.path, exc, retry_in)
            finally:
                self.queue.done(job, retry_in=retry_in)

    def _failure_retry(self) -> float | None:
        return None if self.one_pass else HANDLER_ERROR_RETRY

    @staticmethod
    def _triage_job(path: str) -> bool:
        return folder_key(path.split("/", 1)[0]) == _NEEDS_ACTION_KEY

    def _work_triage(self, jobs: list[Job]) -> None:
        """Triage a batch of Needs_Action/ notes: each job finished with its own retry."""
        retries: dict[str, float | None] = {}
        try:
            retries = self._dispatch_triage(jobs)
        except Exception as exc:  # noqa: BLE001 - the batch failed as a whole (e.g. the vault unreadable)
            for job in jobs:
                retries[job.path] = self._failure_retry()
                self._handler_failed(job.path, exc, retries[job.path])
        finally:
            for job in jobs:
                self.queue.done(job, retry_in=retries.get(job.path))

    def _handler_failed(self, path: str, exc: Exception, retry_in: float | None) -> None:
        """A typed error is one line, said once per message (e.g. ingest while the Gmail token is
        missing, every poll); anything else is a bug, with its traceback."""
        self.tally.crashed(path)
        again = "the next `h0 sweep` or `h0 watch` retries" if retry_in is None else f"retry in {retry_in:.0f}s"
        if isinstance(exc, H0Error):
            if self.ctx is None or self.ctx.state.first_report(path, f"handler_{exc.code}", exc.message):
                what = "looking for new mail" if path == INGEST_JOB else path
                logger.error("{} failed: {} ({}; {})", what, exc.message, exc.code, again)
        else:
            logger.opt(exception=exc).error("handler failed for {} ({})", path, again)
        try:
            self.audit.write("handler_error", "error", path=path, error=f"{type(exc).__name__}: {exc}", retry_in=retry_in)
        except H0Error:
            pass

    def _dispatch(self, job: Job) -> float | None:
        if job.path == INGEST_JOB:
            self.run_ingest()
            return None
        if job.path == FOLLOWUP_JOB:
            self.run_followup()
            return None
        if job.path == LEARN_JOB:
            signals.drafts_filed.send(self, path=job.path, ctx=self.ctx)
            return None
        folder = job.path.split("/", 1)[0]
        key = folder_key(folder)
        signal = _ROUTES.get(key)
        if signal is None:
            return None
        wait = self.settle.wait_for(job.path, self.root / job.path, approval=key == folder_key(APPROVED))
        if wait > 0:
            if key == folder_key(APPROVED):
                self.tally.settling(job.path)
            return wait  # still being written: look again shortly
        if key == folder_key(DRAFTS):
            if self._revision_requested(job.path):
                signal = signals.draft_revision_requested
            elif not self._draft_rejected(job.path):
                return None
        results = signal.send(self, path=job.path, ctx=self.ctx)
        outcome = results[0][1] if results else None
        return self._finish(job.path, outcome) if isinstance(outcome, Outcome) else None

    def _dispatch_triage(self, jobs: list[Job]) -> dict[str, float | None]:
        """The notes of the batch still being written wait; those not pending triage end here
        (H0's own updates); the rest go to triage together. Returns each path's retry."""
        retries: dict[str, float | None] = {}
        if self.triager is None:
            return retries
        ready = []
        for job in jobs:
            wait = self.settle.wait_for(job.path, self.root / job.path, approval=False)
            if wait > 0:
                retries[job.path] = wait  # still being written: look again shortly
            elif self._untriaged(job.path):
                ready.append(job.path)
        if not ready:
            return retries
        results = signals.notes_need_action.send(self, paths=ready, ctx=self.ctx)
        outcomes = results[0][1] if results else {}
        for path in ready:
            outcome = outcomes.get(path)
            if isinstance(outcome, Exception):
                retries[path] = self._failure_retry()
                self._handler_failed(path, outcome, retries[path])
            elif isinstance(outcome, Outcome):
                retries[path] = self._finish(path, outcome)
        return retries

    def _finish(self, path: str, outcome: Outcome) -> float | None:
        """Count and announce what a handler did; the retry it asks for."""
        self.tally.record(path, outcome.action, outcome.detail, outcome.data)
        self._announce(path, outcome)
        if outcome.action in ("sent", "rejected"):
            self.queue.put(LEARN_JOB, delay=LEARN_DELAY)  # compare what was sent with what H0 wrote
        if self.one_pass and outcome.action in ("failed", "paused"):
            return None  # this process exits after the pass: the next sweep or `h0 watch` retries
        return outcome.retry_in

    # The two checks below read the note locally, cheaply, so that the events H0's own writes
    # cause (a draft written, an email note updated) end here instead of costing MCP calls;
    # the handler then re-reads through the vault server before it acts.

    def _draft_rejected(self, path: str) -> bool:
        try:
            return is_rejected(self.vault.read_note(path).frontmatter)
        except H0Error:
            return False

    def _revision_requested(self, path: str) -> bool:
        try:
            note = self.vault.read_note(path)
        except H0Error:
            return False
        return not is_rejected(note.frontmatter) and revision_request(note.frontmatter, note.body) is not None

    def _untriaged(self, path: str) -> bool:
        try:
            return needs_triage(self.vault.read_note(path).frontmatter)
        except ParseError:
            return True  # the handler reports read_error once
        except H0Error:
            return False

    def _announce(self, path: str, outcome: Outcome) -> None:
        report = {
            "sent": signals.email_sent,
            "failed": signals.send_failed,
            "bounced": signals.send_failed,
            "rejected": signals.note_archived,
            "archived": signals.note_archived,
            "triaged": signals.triage_decided,
        }.get(outcome.action)
        if report is not None:
            report.send(self, path=path, **outcome.data)

