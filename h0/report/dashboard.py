"""The human's cockpit in the vault: H0_Dashboard.md and the daily briefing, kept current by the daemon.

Both are rendered from `h0.report.collect.collect_status` (the data `h0 status` prints) and written
atomically. The daemon's report signals (email-sent, send-failed, note-archived,
triage-decided, sweep-completed) only mark them stale; one background thread rewrites them,
at most once per MIN_INTERVAL (longer when collecting is slow: at most 1/LOAD_FACTOR of its
time), so no handler ever waits for it. Between signals the thread stats a few paths each
second (the trigger folders, today's audit files) and refreshes when they changed: a draft
given back to Drafts/, a pause, a note the human moved. A file is rewritten only when its
content changed, and neither file is in a folder the watcher routes (only Approved/,
Rejected/, Drafts/ and Needs_Action/ are), so writing them can never trigger more work.

Everything that comes from an email or a note is escaped (`h0.report.markdown`); the briefing's
content is `h0.report.briefing`.
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
from h0.followup.report import age
from h0.mail.lookalike import Correspondents
from h0.pipeline import signals
from h0.platform.fileio import atomic_write
from h0.report.audittail import AuditTail
from h0.report.briefing import BRIEFINGS, render_briefing
from h0.report.collect import collect_status
from h0.report.markdown import heading, md_link, md_new, md_recipients, md_text, more, table, why_needed
from h0.report.text import changed_by, draft_quality_line, local_time
from h0.state import StateDB
from h0.vault import Vault
from h0.vault.audit import iso
from h0.vault.layout import APPROVED, DRAFTS, LOGS, NEEDS_ACTION

if TYPE_CHECKING:  # the daemon imports this module when it starts the writer
    from h0.pipeline.daemon import Daemon

DASHBOARD_NOTE = "H0_Dashboard.md"
MIN_INTERVAL = 1.0  # seconds between two rewrites, at the most
POLL_INTERVAL = 1.0  # how often the idle thread looks for changes no signal reported
LOAD_FACTOR = 20  # collecting may take at most 1/LOAD_FACTOR of the thread's time
# (mtime_ns, size) of each path the idle thread watches, None where there is none.
Fingerprint = tuple[tuple[int, int] | None, ...]
# The renderers and the folder too: the dashboard module is where callers find them.
__all__ = [
    "BRIEFINGS",
    "DASHBOARD_NOTE",
    "DashboardWriter",
    "md_link",
    "md_text",
    "render_briefing",
    "render_dashboard",
    "start_dashboard",
]

REPORT_SIGNALS = (
    signals.email_sent,
    signals.send_failed,
    signals.note_archived,
    signals.triage_decided,
    signals.sweep_completed,
)


def render_dashboard(status: dict[str, Any]) -> str:
    """H0_Dashboard.md's content (without its "last change" line)."""
    daemon, sending, totals = status["daemon"], status["sending"], status["totals"]
    lines = ["# H0 dashboard", ""]
    if daemon is None:
        lines += [
            "> [!failure] H0 is not running",
            "> Nothing is sent or triaged until it runs again: start it with `h0 watch`.",
            "",
        ]
    else:
        lines += [
            "> [!success] H0 is running",
            (
                f"> Since {local_time(daemon.get('started'))} (pid {daemon.get('pid')}) · mail: "
                f"{md_text(status['mail_backend'])}"
            ),
            "",
        ]
    if sending["paused"]:
        lines += ["> [!warning] Sending is paused", f"> {md_text(sending['pause_reason'], 300)}", ""]
    for cap in sending["caps"]:
        if cap["left"] == 0:
            slot = f"next slot at {local_time(cap['next_slot_at'])}" if cap["next_slot_at"] else "sending is off"
            lines += [f"> [!warning] The per-{cap['window']} send cap ({cap['limit']}) is reached", f"> {slot}.", ""]
    lines += table(
        ("send cap", "used", "left", "next slot", "oldest send leaves the window"),
        [
            (
                f"per {c['window']}",
                f"{c['used']} of {c['limit']}",
                str(c["left"]),
                local_time(c["next_slot_at"]) if c["next_slot_at"] else ("now" if c["left"] else "—"),
                local_time(c["oldest_leaves_at"]) if c["oldest_leaves_at"] else "—",
            )
            for c in sending["caps"]
        ],
    ) + [""]

    needs = status["needs_you"]
    lines.append(heading("Emails that need you", totals["needs_you"], len(needs)))
    lines += (
        table(
            ("email", "from", "subject", "why"),
            [(md_link(n["path"]), md_text(n["from"], 60), md_text(n["subject"], 80), why_needed(n)) for n in needs],
        )
        if needs
        else ["Nothing needs you."]
    )
    lines += more(totals["needs_you"], len(needs), f"{NEEDS_ACTION}/") + [""]

    waiting = status["waiting_for_approval"]
    lines.append(heading("Drafts waiting for your approval", totals["waiting_for_approval"], len(waiting)))
    if waiting:
        lines += [f"Move a draft into {APPROVED}/ to send it, or into Rejected/ to drop it.", ""]
        details = {item["path"]: item for item in status.get("waiting_for_approval_details", [])}
        lines += [
            f"- {md_link(path)}{md_new(details.get(path, {}))}{md_text(changed_by(details.get(path, {})), 200)}"
            for path in waiting
        ]
    else:
        lines.append("No draft is waiting.")
    lines += more(totals["waiting_for_approval"], len(waiting), f"{DRAFTS}/") + [""]

    approved = status["approved_not_yet_sent"]
    lines.append(heading("Approved, not sent yet", totals["approved_not_yet_sent"], len(approved)))
    lines += (
        table(
            ("draft", "to", "subject", "why it waits"),
            [
                (
                    md_link(a["path"]),
                    md_recipients(a["recipients"]) + md_new(a),
                    md_text(a["subject"], 80),
                    md_text(a["reason"], 200)
                    + (f" (next try {local_time(a['retry_at'], seconds=True)})" if a["retry_at"] else ""),
                )
                for a in approved
            ],
        )
        if approved
        else ["Nothing approved is waiting."]
    )
    lines.append("")

    lines += _followup_sections(status.get("follow_ups") or {})
    quality = draft_quality_line(status.get("drafts") or {})
    if quality:
        lines += [quality, ""]

    returned = status["returned_to_drafts"]
    if returned:
        lines.append(
            heading(f"Not sent — back in {DRAFTS}/ for you to fix", totals["returned_to_drafts"], len(returned))
        )
        lines += table(
            ("draft", "to", "subject", "reason"),
            [
                (
                    md_link(r["path"]),
                    md_recipients(r["recipients"]) + md_new(r),
                    md_text(r["subject"], 80),
                    f"{md_text(r['code'], 40)}: {md_text(r['reason'], 200)}",
                )
                for r in returned
            ],
        ) + ["", f"Fix the draft, then move it into {APPROVED}/ again.", ""]

    sends = status["recent_sends"]
    lines.append(f"## Last sends ({totals['sends_24h']} in the last 24 h)")
    lines += (
        table(
            ("sent", "note", "to", "subject"),
            [
                (
                    local_time(s["timestamp"]),
                    md_link(s.get("done_path") or s.get("path")),
                    md_recipients(s["recipients"]),
                    md_text(s.get("subject"), 80),
                )
                for s in sends
            ],
        )
        if sends
        else ["Nothing sent lately."]
    )
    lines.append("")

    errors = status["recent_errors"]
    shown = f", showing {len(errors)}" if totals["errors_24h"] > len(errors) else ""
    lines.append(f"## Last errors ({totals['errors_24h']} in the last 24 h{shown})")
    lines += (
        table(
            ("time", "what", "note", "message"),
            [
                (
                    local_time(e["timestamp"]),
                    md_text(e.get("event"), 40),
                    md_link(e.get("returned_to") or e["path"]) if e.get("path") else "—",
                    md_text(e.get("message") or e.get("error"), 200),
                )
                for e in errors
            ],
        )
        if errors
        else ["No errors."]
    )
    return "\n".join(lines) + "\n"


def _followup_sections(fu: dict[str, Any]) -> list[str]:
    """Replies owed and awaited with their age, snoozed notes, notes back from a snooze (h0.followup.report)."""
    if not fu:
        return []
    lines = [heading("Replies you owe", fu["owed_total"], len(fu["owed"]))]
    lines += (
        table(
            ("email", "from", "subject", "waiting"),
            [
                (md_link(o["path"]), md_text(o["sender"], 60), md_text(o["subject"], 80), age(o["working_days"]))
                for o in fu["owed"]
            ],
        )
        if fu["owed"]
        else ["No reply owed."]
    )
    lines += more(fu["owed_total"], len(fu["owed"]), f"{NEEDS_ACTION}/ (`follow_up: reply_owed`)") + [""]
    lines.append(heading("Replies you are waiting for", fu["awaited_total"], len(fu["awaited"])))
    lines += (
        table(
            ("follow-up", "from", "subject", "waiting", "draft"),
            [
                (
                    md_link(a["path"]),
                    md_text(a["waiting_on"], 60),
                    md_text(a["subject"], 80),
                    age(a["working_days"]),
                    md_link(a["draft"]) if a["draft"] else "—",
                )
                for a in fu["awaited"]
            ],
        )
        if fu["awaited"]
        else ["No answer is overdue."]
    )
    lines += more(fu["awaited_total"], len(fu["awaited"]), f"{NEEDS_ACTION}/ (`follow_up: reply_awaited`)") + [""]
    if fu["back"] or fu["snoozed_total"]:
        lines.append(f"## Snoozed ({fu['snoozed_total']} hidden until their time)")
        lines += [f"- back: {md_link(b['path'])} — {md_text(b['reason'], 120)}" for b in fu["back"]] or [
            "Nothing came back in the last day."
        ]
        lines.append("")
    return lines


# ---------------------------------------------------------------------------------- writer


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
    ) -> None:
        self.clock = clock  # "now" for snoozes (the daemon's clock)
        self.settings = settings
        self.root = Path(settings.vault_path)
        self.vault = vault or Vault(self.root)
        self.state_db = state_db
        self._correspondents: Correspondents | None = None  # kept: each refresh reads only what is new
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
            wait = last + self._interval - time.monotonic()
            if wait > 0 and self._stopping.wait(wait):
                return
            if self._stopping.is_set():
                return
            self._dirty.clear()
            self._seen = self._fingerprint()  # taken first: a change during the refresh is seen next time
            started = time.monotonic()
            self.refresh(running=True)
            elapsed = time.monotonic() - started
            self._interval = max(self.min_interval, LOAD_FACTOR * elapsed)
            last = time.monotonic()

    def _fingerprint(self) -> Fingerprint:
        """Cheap signs of change: the trigger folders' and today's audit files' mtime and size."""
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
        return tuple(marks)

    def refresh(self, *, running: bool = True) -> None:
        """Collect and rewrite now (the files whose content changed). Never raises."""
        with self._lock:
            try:
                live = (self.live() if self.live is not None else None) if running else {"running": False}
                if self._correspondents is None:
                    self._correspondents = Correspondents(self.vault.root, self.state_db)
                status = collect_status(
                    self.settings,
                    vault=self.vault,
                    audit=self.audit,
                    state_db=self.state_db,
                    live=live,
                    correspondents=self._correspondents,
                    now=self.clock(),
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
                    body = render_briefing(day, self.audit.refresh(), status)
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
    dashboard = bool(getattr(settings, "dashboard_enabled", True))
    briefing = bool(getattr(settings, "briefings_enabled", True))
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
    )
    writer.start(sender=daemon)
    return writer
