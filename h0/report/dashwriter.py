"""Keeping H0_Dashboard.md and the daily briefing current while the daemon runs: one debounced thread.

Both are rendered from `h0.report.collect.collect_status` and written atomically, asking the disclosure
gate through the vault index once per refresh (h0.report.privacy: a private email is counted, never named).
The daemon's report signals (email-sent, send-failed, note-archived, triage-decided, sweep-completed)
only mark them stale; one background thread rewrites them, at most once per MIN_INTERVAL (longer
when collecting is slow: at most 1/LOAD_FACTOR of its time), so no handler ever waits for it.
While the daemon's work queue has a backlog (a burst of notes, running or due), it yields the CPU to the work: it
refreshes when the backlog is gone, or BUSY_STALENESS after its last refresh (longer if refreshing
is slow), whichever comes first, so the human still sees the burst's progress.
Between signals the thread stats a few paths each second (the trigger folders, today's audit
files) and refreshes when they changed: a draft given back to Drafts/, a pause, a note the
human moved. A file is rewritten only when its content changed, and neither file is in a
folder the watcher routes (only Approved/, Rejected/, Drafts/ and Needs_Action/ are), so
writing them can never trigger more work.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loguru import logger

from h0.config import Settings
from h0.mail.deception.lookalike import Correspondents
from h0.pipeline import signals
from h0.platform.fileio import atomic_write
from h0.report.audittail import AuditTail
from h0.report.briefing import BRIEFINGS, collect_day, render_briefing
from h0.report.collect import collect_status
from h0.report.dashboard import DASHBOARD_NOTE, render_dashboard
from h0.report.mailbox import mailbox_marks
from h0.report.privacy import report_view
from h0.state import StateDB
from h0.vault import Vault
from h0.vault.audit import iso
from h0.vault.index import VaultIndex
from h0.vault.layout import APPROVED, DRAFTS, LOGS, NEEDS_ACTION

if TYPE_CHECKING:  # the daemon imports this module when it starts the writer
    from h0.pipeline.daemon import Daemon

MIN_INTERVAL = 1.0  # seconds between two rewrites, at the most
POLL_INTERVAL = 1.0  # how often the idle thread looks for changes no signal reported
LOAD_FACTOR = 20  # collecting may take at most 1/LOAD_FACTOR of the thread's time
# While work is queued, the dashboard is this many seconds behind at least, and a refresh may take at most
# 1/BUSY_LOAD_FACTOR of the time: a refresh during a burst re-reads every note the burst changed (1-2 s
# of the daemon's one interpreter with thousands of them), which every 5 s was ~8 % of the burst's CPU.
BUSY_STALENESS = 30.0
BUSY_LOAD_FACTOR = 40
BUSY_CHECK = 0.25  # how often a writer waiting out a backlog looks whether it is gone
# (mtime_ns, size) of each path the idle thread watches, None where there is none.
Fingerprint = tuple[tuple[int, int] | None, ...]

REPORT_SIGNALS = (
    signals.email_sent,
    signals.send_failed,
    signals.note_archived,
    signals.triage_decided,
    signals.sweep_completed,
)


class DashboardWriter:
    """Keeps H0_Dashboard.md and today's briefing current, on its own thread, debounced."""

    def __init__(
        self,
        settings: Settings,
        *,
        vault: Vault | None = None,
        state_db: StateDB | None = None,
        live: Callable[[], dict[str, Any]] | None = None,
        dashboard: bool = True,
        briefing: bool = True,
        min_interval: float = MIN_INTERVAL,
        poll_interval: float = POLL_INTERVAL,
        clock: Callable[[], float] = time.time,
        backlog: Callable[[], int] | None = None,
    ) -> None:
        self.clock = clock  # "now" for snoozes (the daemon's clock)
        self.backlog = backlog  # jobs running or due in the daemon's work queue (None: no queue to yield to)
        self.settings = settings
        self.root = Path(settings.vault_path)
        self.vault = vault or Vault(self.root)
        self.state_db = state_db
        self._correspondents: Correspondents | None = None  # kept: each refresh reads only what is new
        self._index: VaultIndex | None = None  # the vault index the last refresh asked (kept open)
        self.live = live
        self.dashboard = dashboard
        self.briefing = briefing
        self.min_interval = min_interval
        self.poll_interval = poll_interval
        self.audit = AuditTail(self.root / LOGS)
        self.writes = 0  # how many times H0_Dashboard.md was rewritten (tests and benchmarks)
        self.refreshes = 0  # how many times the state was collected and compared (rewritten or not)
        self.writers: set[str] = set()  # the threads that rewrote the dashboard: its own, never a poker's
        self._interval = min_interval
        self._busy_interval = BUSY_STALENESS
        self._dirty = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._last: dict[Path, str] = {}
        self._seen: Fingerprint | None = None
        self._failed: str | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    def start(self, sender: Any = None) -> None:
        """Listen to `sender`'s report signals (any sender's if None) and start the thread."""
        for signal in REPORT_SIGNALS:
            if sender is None:
                signal.connect(self.poke, weak=False)
            else:
                signal.connect(self.poke, sender=sender, weak=False)
        self._thread = threading.Thread(target=self._run, name="h0-dashboard", daemon=True)
        self._thread.start()
        self.poke()

    def poke(self, *_sender: Any, **_facts: Any) -> None:
        """Something changed: rewrite soon. Cheap, any thread."""
        self._dirty.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop listening, let the thread finish, and write the final "not running" state."""
        if self._stopped:
            return
        self._stopped = True
        for signal in REPORT_SIGNALS:
            signal.disconnect(self.poke)
        self._stopping.set()
        self._dirty.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.refresh(running=False)

    def _run(self) -> None:
        last = 0.0
        while not self._stopping.is_set():
            if not self._dirty.wait(self.poll_interval):
                seen = self._fingerprint()
                if seen == self._seen:
                    continue
            while (wait := self.due_in(time.monotonic(), last)) > 0:
                if self._stopping.wait(min(wait, BUSY_CHECK)):
                    return
            if self._stopping.is_set():
                return
            self._dirty.clear()
            self._seen = self._fingerprint()  # taken first: a change during the refresh is seen next time
            started = time.monotonic()
            self.refresh(running=True)
            elapsed = time.monotonic() - started
            self._interval = max(self.min_interval, LOAD_FACTOR * elapsed)
            self._busy_interval = max(BUSY_STALENESS, BUSY_LOAD_FACTOR * elapsed)
            last = time.monotonic()

    def due_in(self, now: float, last: float) -> float:
        """Seconds from `now` (monotonic) until the next refresh may run, the last one having run at
        `last`: its interval after it; while the work queue has a backlog, BUSY_STALENESS after it at
        least, longer when the last refresh was slow (BUSY_LOAD_FACTOR)."""
        interval = self._interval
        if self.backlog is not None and self.backlog() > 0:
            interval = max(interval, self._busy_interval)
        return last + interval - now

    def _fingerprint(self) -> Fingerprint:
        """Cheap signs of change: the trigger folders' and today's audit files' mtime and size, and the mailbox's
        sign-in (the token file; the sync's record of it, h0.report.mailbox), which no signal announces."""
        day = dt.datetime.now(dt.UTC).date().isoformat()
        paths = [self.root / DRAFTS, self.root / APPROVED, self.root / NEEDS_ACTION]
        paths += [self.root / LOGS / f"{stream}_{day}.jsonl" for stream in ("h0", "gmail_mcp", "vault_mcp")]
        marks: list[tuple[int, int] | None] = []
        for path in paths:
            try:
                st = os.stat(path)
                marks.append((st.st_mtime_ns, st.st_size))
            except OSError:
                marks.append(None)
        return (*marks, *mailbox_marks(self.settings, self.state_db))

    def refresh(self, *, running: bool = True) -> None:
        """Collect and rewrite now (the files whose content changed). Never raises."""
        with self._lock:
            try:
                live = (self.live() if self.live is not None else None) if running else {"running": False}
                if self._correspondents is None:
                    self._correspondents = Correspondents(self.vault.root, self.state_db)
                private = report_view(self.settings, self.vault)  # one gate for the dashboard and the briefing
                self._index = private.index  # this process's index stays open between refreshes (VaultIndex.shared)
                status = collect_status(
                    self.settings,
                    vault=self.vault,
                    audit=self.audit,
                    state_db=self.state_db,
                    live=live,
                    correspondents=self._correspondents,
                    now=self.clock(),
                    private=private,
                )
                stamp = dt.datetime.now().astimezone()
                footer = (
                    f"\n---\n*Last change {stamp:%Y-%m-%d %H:%M:%S}. H0 rewrites this note as things happen: "
                    "edits made here are lost.*\n"
                )
                if self.dashboard and self._write(self.root / DASHBOARD_NOTE, render_dashboard(status), footer):
                    self.writes += 1
                    self.writers.add(threading.current_thread().name)
                if self.briefing:
                    day = stamp.date()
                    body = render_briefing(collect_day(day, self.audit.refresh(), private), status)
                    self._write(self.root / BRIEFINGS / f"{day.isoformat()}.md", body, footer)
                self._failed = None
            except Exception as exc:  # noqa: BLE001 - the dashboard must never stop the daemon
                message = f"{type(exc).__name__}: {exc}"
                if message != self._failed:
                    logger.opt(exception=exc).warning("could not update {}: {}", DASHBOARD_NOTE, message)
                self._failed = message
            finally:
                self.refreshes += 1

    def _write(self, path: Path, body: str, footer: str) -> bool:
        if self._last.get(path) == body or not self.root.is_dir():
            return False  # unchanged, or the vault is gone (deleted or unmounted): never recreate it
        path.parent.mkdir(exist_ok=True)
        atomic_write(path, (body + footer).encode("utf-8"), durable=False)
        self._last[path] = body
        return True


def start_dashboard(daemon: Daemon) -> DashboardWriter | None:
    """The daemon's writer (None when DASHBOARD_ENABLED and BRIEFINGS_ENABLED are both off)."""
    settings = daemon.settings
    dashboard = settings.dashboard_enabled
    briefing = settings.briefings_enabled
    if not (dashboard or briefing):
        return None
    started = iso(dt.datetime.now(dt.UTC))

    def live() -> dict[str, Any]:
        state = daemon.ctx.state if daemon.ctx is not None else None
        return {
            "running": True,
            "pid": os.getpid(),
            "started": started,
            "paused_for": state.sends_paused_for() if state is not None else 0.0,
            "pause_reason": state.pause_reason if state is not None else "",
        }

    writer = DashboardWriter(
        settings,
        vault=daemon.vault,
        live=live,
        dashboard=dashboard,
        briefing=briefing,
        state_db=daemon.ctx.state_db if daemon.ctx is not None else None,
        clock=lambda: daemon.clock(),
        backlog=daemon.queue.busy,
    )
    writer.start(sender=daemon)
    return writer
