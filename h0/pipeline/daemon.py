"""The daemon: lock the vault, open the MCP sessions, watch, sweep, and run the workers.

    watchdog event ─┐
    sweep ──────────┴─► WorkQueue ─► worker ─► routing table ─► trigger signal, then handler(path, ctx)
                        (dedupe by path;     (h0.pipeline.workers,                  │
                         retry backoff)       h0.pipeline.routes)   Outcome ─► tally, report signal

`Daemon.run()` is `h0 watch`; `Daemon.run_once()` is `h0 sweep` (one pass, then exit: with
`one_pass` set before `start()`, nothing that failed is retried in the pass — the next sweep
or `h0 watch` retries it, and the log lines say so — and `pass_summary` counts what the pass did).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from loguru import logger

from h0.config import Settings
from h0.errors import H0Error
from h0.handlers.context import EmailTriager, HandlerContext, HandlerState, NoteOps
from h0.handlers.followup.find import FOLLOW_UP_PASS_SECONDS, FOLLOWUP_JOB, find_followup_notes
from h0.mail.api import MailAPI
from h0.mcp.api import McpMail, McpVault
from h0.mcp.client import InProcessServer, McpConnection, ServerCommand, settings_env, with_fallback
from h0.pipeline import signals
from h0.pipeline.lock import VaultLock
from h0.pipeline.pass_summary import PassTally
from h0.pipeline.routes import LEARN_JOB, reconcile
from h0.pipeline.sending_claim import CHECK_SECONDS, SendingClaim
from h0.pipeline.settle import MACHINE_CLOCKS, STABILITY_SECONDS, Clocks, SettleTracker
from h0.pipeline.watcher import VaultWatcher
from h0.pipeline.workers import INGEST_JOB, Workers
from h0.pipeline.workqueue import WorkQueue, failure_backoff
from h0.platform.machine import Machine
from h0.platform.watch import NATIVE
from h0.state import StateDB
from h0.vault import AuditLog, Vault
from h0.vault.api import LocalVault, VaultAPI
from h0.vault.control_watch import ControlWatch
from h0.vault.layout import LOGS

if TYPE_CHECKING:
    from h0.handlers.followup.pass_report import FollowupReport
    from h0.handlers.ingest import IngestReport
    from h0.mail.providers.imap_idle import IdleWatcher

TICK_SECONDS = 0.25
CONNECT_WAIT_SECONDS = 10.0
CONTROL_CHECK_SECONDS = 2.0  # how soon a proposal the owner confirmed takes effect (a few stats a look)
SWEEP_WAITS_SECONDS = 2 * STABILITY_SECONDS  # `h0 sweep` waits for retries due this soon (a note still being written)


class Companion(Protocol):
    """Something that runs beside the daemon (the dashboard writer) and has its last word on stop,
    while the daemon still holds the vault."""

    def stop(self) -> None: ...


# The daemon's two MCP servers ("vault", "mail"), from its settings and the environment they run with.
ServerTargets = Callable[[Settings, Mapping[str, str]], Mapping[str, ServerCommand | InProcessServer]]


def spawned_servers(settings: Settings, env: Mapping[str, str]) -> dict[str, ServerCommand | InProcessServer]:
    """`h0 mcp vault` and `h0 mcp gmail` as child processes: what the daemon always runs outside tests."""
    return {"vault": ServerCommand.h0("vault", "vault", env), "mail": ServerCommand.h0("mail", "gmail", env)}


# Starts a companion for a started daemon (None: nothing to run, e.g. switched off by a setting).
CompanionStart = Callable[["Daemon"], Companion | None]


class Daemon:
    def __init__(
        self,
        settings: Settings,
        *,
        workers: int = 4,
        triager: EmailTriager | None = None,
        connect_servers: bool = True,
        sweep_interval: float | None = None,
        ingest: bool = False,
        companions: Sequence[CompanionStart] = (),
        servers: ServerTargets | None = None,
        clocks: Clocks = MACHINE_CLOCKS,  # what every wait runs on; a test passes clocks it moves
        machine: Machine | None = None,  # the computer the vault's sending claim names (a test passes another)
    ) -> None:
        self.settings = settings
        self.root = Path(settings.vault_path)
        self.vault = Vault(self.root)
        self.audit = AuditLog(self.root / LOGS, "h0")
        backoff, tick = failure_backoff(settings.retry_delay_ms, settings.retry_backoff_multiplier), clocks.monotonic
        self.queue = WorkQueue(backoff=backoff, clock=tick)
        self.lock = VaultLock(self.root)
        self.machine = machine or Machine.this(settings.h0_machine)
        self.wall = clocks.wall
        self.sending: SendingClaim | None = None  # while running: this computer's part in the sending claim
        self.workers = workers
        self.sweep_interval = sweep_interval if sweep_interval is not None else settings.sweep_interval_seconds
        self.connect_servers = connect_servers
        # None: `spawned_servers`, looked up when the daemon is made, so a test can serve the servers of
        # every daemon it starts (the CLI's too) in process (tests/conftest.py, tests/pipeline/harness.py).
        self.servers = servers or spawned_servers
        self.triager = triager
        self.connections: dict[str, McpConnection] = {}
        self.ctx: HandlerContext | None = None
        self.settle = SettleTracker(settings.approval_settle_seconds, clock=tick, wall=clocks.wall)
        self.watcher = VaultWatcher(
            self.root, self._on_event, self._on_overflow, kind=settings.h0_watcher, on_note=self._on_note, clock=tick
        )
        self._feeds_drafting = False  # this daemon's watcher reports every note to its drafting state (`_on_note`)
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._overflowed = threading.Event()
        self._next_sweep = 0.0
        self._periodic: list[tuple[float, float, Callable[[], object]]] = []
        self.ingest = ingest
        self.last_ingest: IngestReport | None = None
        self.one_pass = False  # `h0 sweep`: set before start()
        self.tally = PassTally()  # what the handlers did, note by note (`h0 sweep`'s summary)
        # Handed in by the caller (the CLI starts H0_Dashboard.md's writer), so the pipeline never
        # imports the rooms above it; started after the workers, stopped before the lock goes.
        self.companion_starts = tuple(companions)
        self.companions: list[Companion] = []  # while running
        self.idle: IdleWatcher | None = None  # while running with MAIL_BACKEND=imap
        self.clock: Callable[[], float] = time.time  # the follow-up pass's "now" (tests move it forward)
        self.last_followup: FollowupReport | None = None  # the last pass's
        self.control: ControlWatch | None = None  # H0_Rules/Profile/Memory: confirmed proposals, outside changes

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
        vault: VaultAPI = LocalVault(self.vault)
        mail: MailAPI | None = None
        if self.connect_servers:
            env = settings_env(self.settings)
            # These servers' stdio pipes are the daemon's alone: they may file sent drafts out
            # of Approved/ and take the daemon's word for how a note arrived there.
            env["H0_DAEMON_CHILD"] = "1"
            self.connections = {
                name: McpConnection(target).start() for name, target in self.servers(self.settings, env).items()
            }
            deadline = time.monotonic() + CONNECT_WAIT_SECONDS
            for name, connection in self.connections.items():
                if not connection.wait_ready(max(0.0, deadline - time.monotonic())):
                    logger.warning(
                        "mcp {}: not connected yet ({}); carrying on", name, connection.last_error or "starting"
                    )
            # The vault server first, this process's own vault when it is unreachable (the fallback protocol: docs/decisions.md);
            # mail has no fallback, so no wrapper: an approved draft waits in Approved/ until the server is back.
            vault = with_fallback(McpVault(self.connections["vault"]), vault, self.audit, "vault")
            mail = McpMail(self.connections["mail"])
        self.ctx = HandlerContext(
            settings=self.settings,
            notes=NoteOps(vault),
            mail=mail,
            audit=self.audit,
            paths=self.vault.paths,
            state=HandlerState(clock=self.queue.clock),
            triager=self.triager,
            state_db=StateDB.for_vault(self.root, self.settings.h0_state_dir),
            arrival=self.settle.observed,
            one_pass=self.one_pass,
            retries=self.queue,
            stopping=self._stop,
            vault_watched=lambda: self._feeds_drafting,  # its drafting state hears of every change (`_on_note`)
        )
        workers = Workers(
            self.queue,
            self.vault,
            self.settle,
            self.tally,
            self.ctx,
            self.audit,
            sender=self,
            jobs={INGEST_JOB: self.run_ingest, FOLLOWUP_JOB: self.run_followup},
            triage=self.triager is not None,
            one_pass=self.one_pass,
        )
        for index in range(self.workers):
            thread = threading.Thread(target=workers.work, args=(self._stop,), name=f"h0-worker-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)
        if watch:
            self.watcher.start()
            self._feeds_drafting = self.settings.h0_watcher == NATIVE
        self.audit.write("daemon_started", pid=os.getpid(), vault=str(self.root), backend=self.settings.mail_backend)
        self.companions = [c for start in self.companion_starts if (c := start(self)) is not None]
        # One computer sends (h0.vault.sending_computer): looked at before the first sweep can send anything.
        self.sending = SendingClaim(self.vault, self.machine, self.ctx.state.sending, self.audit, wall=self.wall)
        self.sending.settle_for(self.settings.sending_claim_settle_seconds, lambda: self.sweep("sending resumes"))
        self.sending.look()
        self.add_periodic(CHECK_SECONDS, self.sending.look, first_in=CHECK_SECONDS)
        self.control = ControlWatch(self.vault, self.audit, self.ctx.state_db, self.settings.approval_settle_seconds)
        self.control.check()  # a proposal confirmed while H0 was off takes effect before any email is triaged
        self.add_periodic(CONTROL_CHECK_SECONDS, self.control.check, first_in=CONTROL_CHECK_SECONDS)
        if sweep:
            self._finish_interrupted()
            self.sweep("start")
            if not self.one_pass:  # `h0 sweep`: after its triage (run_once)
                self.request_followup()  # deadlines and snoozes that passed while H0 was off
        self.add_periodic(FOLLOW_UP_PASS_SECONDS, self.request_followup, first_in=FOLLOW_UP_PASS_SECONDS)
        if self.ingest:
            self.add_periodic(self.settings.mail_poll_seconds, self.request_ingest)
            if self.settings.mail_backend == "imap" and self.settings.imap_idle:
                from h0.mail.providers.imap_idle import IdleWatcher

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
        """Queue a follow-up pass (h0.handlers.followup.follow_up; at most one runs at a time, extra requests merge)."""
        self.queue.put(FOLLOWUP_JOB)

    def run_followup(self) -> None:
        from h0.handlers.followup.follow_up import follow_up

        report = follow_up(self.started_context(), find_followup_notes(self.vault), now=self.clock())
        self.last_followup = report
        if report.changed:
            logger.debug(
                "follow-ups: {} owed, {} awaited, {} answered, {} withdrawn, {} woken",
                len(report.owed),
                len(report.awaited),
                len(report.answered),
                len(report.withdrawn),
                len(report.woke),
            )

    def add_periodic(self, interval: float, task: Callable[[], object], *, first_in: float = 0.0) -> None:
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
        """Process everything the sweep finds (and what it produces; an approved note settling is the next pass's),
        then one follow-up pass, after the triage whose decisions it reads: the lists `h0 watch` settles on."""
        end = time.monotonic() + timeout
        if not self.queue.wait_idle(timeout, horizon=SWEEP_WAITS_SECONDS):
            return False
        self.request_followup()
        return self.queue.wait_idle(max(0.0, end - time.monotonic()), horizon=SWEEP_WAITS_SECONDS)

    def run_ingest(self) -> None:
        from h0.handlers.ingest import ingest_new_mail

        report = ingest_new_mail(self.started_context())
        if report.unsupported:
            if self.ingest:
                logger.info("ingest is off: MAIL_BACKEND={} cannot read mail", self.settings.mail_backend)
            self.ingest = False
            self._periodic = [p for p in self._periodic if p[2] != self.request_ingest]
        elif report.written or report.failed:
            logger.info(
                "ingest: {} new, {} duplicate, {} failed", len(report.written), report.duplicates, report.failed
            )
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
        self._feeds_drafting = False
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
        for companion in self.companions:
            companion.stop()  # its last word, while the vault is still ours: "not running"
        self.companions = []
        self.lock.release()

    # ------------------------------------------------------------------ events and sweep

    def _on_event(self, path: str, kind: str, delay: float, source: str | None = None) -> None:
        self.settle.saw(path, kind, source)
        if not self.queue.put(path, delay=delay, settled=kind != "written"):
            self._overflowed.set()  # our own queue is full: the sweep will catch up

    def _on_note(self, path: str | None) -> None:
        """The watcher saw this note (absolute path) change, or any (None): the drafting state, once built, hears it."""
        drafting = self.ctx.drafting if self.ctx is not None else None
        if drafting is not None:
            drafting.note_changed(path)

    def _on_overflow(self) -> None:
        logger.warning("the inotify queue overflowed: events were lost; sweeping")
        self._on_note(None)
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
        self._on_note(None)  # what changed while nobody watched
        self.audit.write("watcher_restarted", "warning", reason=reason)
        signals.watcher_restarted.send(self, reason=reason)
        self.sweep(f"watcher restarted: {reason}")
