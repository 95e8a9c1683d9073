"""The facts `h0 status` reports: what waits for the human and why, the send caps, what H0 did lately.

One collector, several renderers: `collect_status` gathers the facts as plain, JSON-ready data;
`h0.report.text.render_status` prints them for a terminal, `h0.report.dashboard` writes them into the
vault as H0_Dashboard.md. Totals are counted in full, the lists beside them hold at most
SHOWN items (the renderers say "37 (showing 10)").

It stays cheap on a vault of 10,000 notes: folders are read with `Vault.list_notes` (the
frontmatter is cached by mtime and size; Needs_Action/ only through value filters, so only
matching notes are decoded), and the audit log through an `AuditTail`, which the daemon's
dashboard keeps between calls so that each refresh parses only the lines appended since.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any

from h0.errors import H0Error
from h0.followup.report import collect_followups
from h0.mail.lookalike import Correspondents, new_domains
from h0.mail.recipients import FIELDS, count, recipient_lists
from h0.pipeline.lock import daemon_holder
from h0.state import DB_FILE, StateDB, state_dir_for
from h0.vault import Vault
from h0.vault.audit import iso, utcnow
from h0.vault.layout import APPROVED, DRAFTS, LOGS, NEEDS_ACTION
from h0.vault.seen import last_change, name_key

SHOWN = 10
STREAMS = ("h0", "gmail_mcp", "vault_mcp")
KEEP_DAYS = 7
# A pause (auth required, SMTP not configured) lasts 60 s and is renewed, and logged again,
# by the next attempt: one older than this without a newer one has ended.
PAUSE_MEMORY_SECONDS = 150.0
# Events of H0's own stream the status needs besides errors.
_KEPT = frozenset({
    "email_sent", "email_filed", "sends_paused", "send_deferred", "send_failed", "mcp_unavailable",
    "send_outcome_unknown", "handler_error", "read_error", "send_refused", "send_held", "email_delivery_failed",
    "email_ingested", "triage_decision", "draft_rejected", "daemon_started", "daemon_stopped",
    "note_unsnoozed",  # the briefing's "back from snooze"
})
# The last of these about an approved note says why it is still in Approved/.
_WAIT_EVENTS = frozenset({"sends_paused", "send_deferred", "send_failed", "mcp_unavailable",
                          "send_outcome_unknown", "handler_error", "read_error"})
_ERRORS = frozenset({"error", "critical"})
_HEAD = 64  # a log file's first bytes (its first record's timestamp): with the inode, who it is
NEEDS_YOU = (("decision:urgent", "urgent"), ("status:needs_info", "needs_info"), ("status:delegated", "delegate"),
             ("status:rejected_reply", "rejected_reply"))  # its drafted reply was rejected: no answer is pending
REJECTED_REPLY_REASON = "you rejected the reply"


class AuditTail:
    """The records of the last KEEP_DAYS days of the audit streams that the status uses,
    read incrementally: each `refresh` parses only what was appended since the last one."""

    def __init__(self, logs_dir: Path, days: int = KEEP_DAYS, per_file: int = 20_000) -> None:
        self.logs_dir = Path(logs_dir)
        self.days = days
        self.per_file = per_file
        # file name → (identity: inode and first bytes, offset read to, mtime then, records kept)
        self._files: dict[str, tuple[tuple[int, bytes], int, int, list[dict[str, Any]]]] = {}
        self._merged: list[dict[str, Any]] | None = None

    def refresh(self) -> list[dict[str, Any]]:
        """Every kept record, oldest first (timestamps are UTC ISO strings: they sort as text)."""
        first = (utcnow() - dt.timedelta(days=self.days)).date().isoformat()
        seen = set()
        for stream in STREAMS:
            try:
                paths = list(self.logs_dir.glob(f"{stream}_*.jsonl"))
            except OSError:
                paths = []
            for path in paths:
                if path.stem[len(stream) + 1:] >= first:
                    seen.add(path.name)
                    self._read(path, stream)
        for name in set(self._files) - seen:
            del self._files[name]
            self._merged = None
        if self._merged is None:
            merged = [r for *_, records in self._files.values() for r in records]
            merged.sort(key=lambda r: str(r.get("timestamp", "")))
            self._merged = merged
        return self._merged

    def _read(self, path: Path, stream: str) -> None:
        try:
            st = os.stat(path)
        except OSError:
            return
        known = self._files.get(path.name)
        if known is not None and known[1] == st.st_size and known[2] == st.st_mtime_ns:
            return  # unchanged: the common case costs one stat
        try:
            with open(path, "rb") as handle:
                identity = (st.st_ino, handle.read(_HEAD))
                _, offset, _, records = known if known is not None and known[0] == identity else (None, 0, 0, [])
                if st.st_size < offset:  # truncated: read it again
                    offset, records = 0, []
                handle.seek(offset)
                chunk = handle.read(max(0, st.st_size - offset))
        except OSError:
            return
        end = chunk.rfind(b"\n") + 1  # a line being written is read next time, whole
        for line in chunk[:end].splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and (record.get("severity") in _ERRORS
                                             or (stream == "h0" and record.get("event") in _KEPT)):
                record["stream"] = stream
                records.append(record)
        del records[: max(0, len(records) - self.per_file)]
        self._files[path.name] = (identity, offset + end, st.st_mtime_ns if end == len(chunk) else 0, records)
        self._merged = None


def collect_status(
    settings: Any,
    *,
    vault: Vault | None = None,
    audit: AuditTail | None = None,
    state_db: StateDB | None = None,
    live: dict[str, Any] | None = None,
    correspondents: Correspondents | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """Everything `h0 status` and the dashboard show. `vault`, `audit` and `state_db` may be
    kept by a long-lived caller (the daemon); `live` is the daemon's own view of itself
    (pid, started, paused_for, pause_reason) where it has one, else the lock file is asked.
    `now` (epoch; default the clock) decides which snoozes still hide a note."""
    vault = vault or Vault(settings.vault_path)
    audit = audit or AuditTail(vault.root / LOGS)
    now = time.time() if now is None else now
    follow_ups = collect_followups(vault, now)
    records = audit.refresh()
    day_ago = iso(utcnow() - dt.timedelta(days=1))
    daemon = _daemon(vault, live)
    sending = _sending(settings, vault, records, state_db, daemon, live, now)
    drafts = _drafts(vault, follow_ups.hidden)
    approved, approved_total = _approved(settings, vault, records, daemon, sending, now)
    needs_you, needs_you_total = _needs_you(vault, follow_ups.hidden)
    _mark_new_domains(settings, vault, state_db, correspondents, drafts, approved)
    _mark_changes(settings, vault, state_db, drafts["waiting_items"])
    filed = {(r.get("path"), r.get("idempotency_key")): r.get("done_path") for r in records if r.get("event") == "email_filed"}
    sends = [r for r in records if r.get("event") == "email_sent"]
    errors = current_errors(records, day_ago)
    return {
        "vault": str(vault.root),
        "mail_backend": settings.mail_backend,
        "generated_at": iso(utcnow()),
        "daemon": daemon,
        "sending": sending,
        "folders": vault.counts(),
        "totals": {
            "needs_you": needs_you_total,
            "waiting_for_approval": drafts["waiting_total"],
            "approved_not_yet_sent": approved_total,
            "returned_to_drafts": drafts["returned_total"],
            "sends_24h": sum(1 for r in sends if str(r.get("timestamp", "")) >= day_ago),
            "errors_24h": len(errors),
            "replies_owed": follow_ups.owed_total,
            "replies_awaited": follow_ups.awaited_total,
            "snoozed": follow_ups.snoozed_total,
        },
        "follow_ups": follow_ups.as_dict(),
        # How good H0's drafts are: the send-ready and rejected rates over 30 days (h0.drafting.learning).
        "drafts": _draft_quality(vault),
        "shown": SHOWN,
        "needs_you": needs_you,
        "waiting_for_approval": drafts["waiting"],
        # The same drafts with their recipients and the domains each would be the first message to.
        "waiting_for_approval_details": drafts["waiting_items"],
        "approved_not_yet_sent": approved,
        "returned_to_drafts": drafts["returned"],
        "recent_sends": [
            {**{k: r.get(k) for k in ("timestamp", "path", "to", "subject", "already_sent")},
             "recipients": sent_recipients(r), "done_path": filed.get((r.get("path"), r.get("idempotency_key")))}
            for r in reversed(sends[-SHOWN:])
        ],
        "recent_errors": [
            {k: r.get(k) for k in ("timestamp", "stream", "event", "path", "returned_to", "message", "error")}
            for r in reversed(errors[-SHOWN:])
        ],
    }


# What resolves an earlier error about the same note: it went out, was filed, or was triaged after all.
_RESOLVED_BY = frozenset({"email_sent", "email_filed", "triage_decision", "draft_rejected", "note_rejected"})


def current_errors(records: list[dict[str, Any]], since: str, events: frozenset[str] | None = None
                   ) -> list[dict[str, Any]]:
    """The errors (or, with `events`, the records of those events) since `since` that still hold: one
    about a note that later went out (or was filed, triaged, rejected) is fixed and drops out of the
    current lists — it stays in the log (`h0 log`)."""
    fixed_at: dict[str, str] = {}
    for record in records:
        if record.get("event") in _RESOLVED_BY:
            for key in ("path", "note", "done_path"):
                if record.get(key):
                    fixed_at[str(record[key])] = max(fixed_at.get(str(record[key]), ""), str(record.get("timestamp", "")))
    current = []
    for record in records:
        wanted = record.get("event") in events if events is not None else record.get("severity") in _ERRORS
        if not wanted or str(record.get("timestamp", "")) < since:
            continue
        paths = [str(record[k]) for k in ("path", "returned_to") if record.get(k)]
        if any(fixed_at.get(p, "") > str(record.get("timestamp", "")) for p in paths):
            continue
        current.append(record)
    return current


def _draft_quality(vault: Vault) -> dict[str, Any]:
    from h0.drafting.learning import quality

    try:
        return quality(vault.root)
    except (H0Error, OSError) as error:
        return {"resolved": 0, "send_ready_rate": None, "rejected_rate": None,
                "problem": getattr(error, "message", str(error))}


def sent_recipients(record: dict[str, Any]) -> dict[str, list[str]]:
    """Every recipient of an `email_sent` record by real address (records before the field: from `to`)."""
    lists = record.get("recipients")
    if isinstance(lists, dict):
        return {field: [str(a) for a in lists.get(field) or []] for field in FIELDS}
    return recipient_lists(record.get("to"), record.get("cc"), record.get("bcc"))


def _note_recipients(fm: dict[str, Any]) -> dict[str, list[str]]:
    return recipient_lists(fm.get("to"), fm.get("cc"), fm.get("bcc"))


def _mark_new_domains(settings: Any, vault: Vault, state_db: StateDB | None, correspondents: Correspondents | None,
                      drafts: dict[str, Any], approved: list[dict[str, Any]]) -> None:
    """`new_domains` on each listed draft: the domains it would be the first message to (h0.mail.lookalike)."""
    items = [*drafts["waiting_items"], *approved, *drafts["returned"]]
    if not any(count(item.get("recipients") or {}) for item in items):
        return
    if correspondents is None:
        if state_db is None and (state_dir_for(vault.root, settings.h0_state_dir) / DB_FILE).exists():
            try:
                state_db = StateDB.for_vault(vault.root, settings.h0_state_dir)
            except H0Error:
                state_db = None
        correspondents = Correspondents(vault.root, state_db)
    for item in items:
        lists = item.get("recipients") or {}
        item["new_domains"] = new_domains([a for field in FIELDS for a in lists.get(field, [])], correspondents)


def _mark_changes(settings: Any, vault: Vault, state_db: StateDB | None, items: list[dict[str, Any]]) -> None:
    """`last_change` on each waiting draft: who made its current content — H0, an agent through H0's
    vault server (tool and client), or something outside H0's tools (Obsidian, an editor) — and when
    (h0.vault.seen, from the note writes H0's servers record). Left out when there is no record to ask."""
    if not items:
        return
    if state_db is None:
        if not (state_dir_for(vault.root, settings.h0_state_dir) / DB_FILE).exists():
            return
        try:
            state_db = StateDB.for_vault(vault.root, settings.h0_state_dir)
        except H0Error:
            return
    for item in items:
        try:
            note = vault.read_note(item["path"])
            mtime = os.stat(vault.root / item["path"]).st_mtime
            change = last_change(note.hash, mtime, state_db.note_writes(name_key(item["path"])))
        except (H0Error, OSError):
            continue
        who = "H0" if change.tool is not None and not change.by_agent else change.describe()
        item["last_change"] = {"by": who, "agent": change.by_agent, "outside": change.tool is None,
                               "tool": change.tool, "client": change.client, "at": _iso_epoch(change.at)}


def _daemon(vault: Vault, live: dict[str, Any] | None) -> dict[str, Any] | None:
    if live is not None:
        return {k: live.get(k) for k in ("pid", "started")} if live.get("running", True) else None
    return daemon_holder(vault.root)


def _sending(settings: Any, vault: Vault, records: list[dict[str, Any]], state_db: StateDB | None,
             daemon: dict[str, Any] | None, live: dict[str, Any] | None, now: float) -> dict[str, Any]:
    """Paused or not and why; each send cap's use and when its next slot frees."""
    paused_reason = None
    paused_since = None
    if live is not None and live.get("paused_for", 0) > 0:
        paused_reason = live.get("pause_reason") or "sending is paused"
    last_pause = next((r for r in reversed(records) if r.get("event") == "sends_paused"), None)
    last_send = next((r for r in reversed(records) if r.get("event") == "email_sent"), None)
    if last_pause is not None and daemon is not None:
        ts = str(last_pause.get("timestamp", ""))
        recent = ts >= iso(dt.datetime.fromtimestamp(now - PAUSE_MEMORY_SECONDS, dt.UTC))
        if recent and (last_send is None or str(last_send.get("timestamp", "")) < ts):
            paused_reason = paused_reason or str(last_pause.get("reason") or last_pause.get("message") or "")
            paused_since = ts
    times = _send_times(settings, vault, state_db, now)
    caps = []
    for window, seconds, limit in (("hour", 3600.0, settings.rate_limit_per_hour),
                                   ("day", 86400.0, settings.rate_limit_per_day)):
        used = [t for t in times if t >= now - seconds]
        # When the cap is reached, the next slot frees as the send that filled it leaves the window
        # (a cap of 0 has none: sending is off).
        next_slot = used[len(used) - limit] + seconds if limit and len(used) >= limit else None
        caps.append({
            "window": window, "limit": limit, "used": len(used), "left": max(0, limit - len(used)),
            "next_slot_at": _iso_epoch(next_slot),
            "oldest_leaves_at": _iso_epoch(used[0] + seconds) if used else None,
        })
    return {"paused": paused_reason is not None, "pause_reason": paused_reason, "paused_since": paused_since,
            "cap_reached": [c["window"] for c in caps if c["left"] == 0], "caps": caps}


def _send_times(settings: Any, vault: Vault, state_db: StateDB | None, now: float) -> list[float]:
    """Epoch times of the sends of the last day, from H0's state database (shared by every
    process that sends). A vault that never sent has none: then nothing is created."""
    try:
        if state_db is None:
            if not (state_dir_for(vault.root, settings.h0_state_dir) / DB_FILE).exists():
                return []
            state_db = StateDB.for_vault(vault.root, settings.h0_state_dir)
        return state_db.sends_within(86400.0, now)
    except H0Error:
        return []


def _drafts(vault: Vault, hidden: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Drafts waiting for approval (urgent first), and approved ones H0 gave back with a reason
    (snoozed ones, `hidden`, left out)."""
    try:
        listing = vault.list_notes(DRAFTS, with_frontmatter=True)
    except H0Error:
        return {"waiting": [], "waiting_items": [], "waiting_total": 0, "returned": [], "returned_total": 0}
    waiting: list[tuple[bool, str, dict[str, list[str]]]] = []
    returned: list[dict[str, Any]] = []
    for note in listing.notes:
        if note.path in hidden:
            continue
        fm = note.frontmatter or {}
        status = _lower(fm.get("status"))
        if status == "pending_approval" and "h0_error" not in fm:
            waiting.append((_lower(fm.get("priority")) != "urgent", note.path, _note_recipients(fm)))
        elif status in ("held", "not_sent") or "h0_error" in fm:
            returned.append({"path": note.path, "status": status, "subject": _text(fm.get("subject")),
                             "to": _text(fm.get("to")), "recipients": _note_recipients(fm),
                             "code": _text(fm.get("h0_error_code")),
                             "reason": _text(fm.get("h0_error")), "at": _text(fm.get("h0_error_at"))})
    returned += [{"path": s["path"], "status": "unreadable", "subject": None, "to": None,
                  "recipients": recipient_lists(), "code": s.get("error"), "reason": s.get("message"), "at": None}
                 for s in listing.skipped]
    waiting.sort(key=lambda item: item[:2])
    items = [{"path": path, "recipients": lists} for _, path, lists in waiting[:SHOWN]]
    return {"waiting": [item["path"] for item in items], "waiting_items": items, "waiting_total": len(waiting),
            "returned": returned[:SHOWN], "returned_total": len(returned)}


def _approved(settings: Any, vault: Vault, records: list[dict[str, Any]], daemon: dict[str, Any] | None,
              sending: dict[str, Any], now: float) -> tuple[list[dict[str, Any]], int]:
    """Notes in Approved/ and why each is still there."""
    try:
        listing = vault.list_notes(APPROVED, with_frontmatter=True)
    except H0Error:
        return [], 0
    last: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.get("event") in _WAIT_EVENTS and record.get("stream") == "h0" and isinstance(record.get("path"), str):
            last[record["path"]] = record
    items = []
    for note in listing.notes[:SHOWN]:
        fm = note.frontmatter or {}
        code, reason, retry_at = _why_waiting(settings, vault, note.path, fm, last.get(note.path), daemon, sending, now)
        items.append({"path": note.path, "to": _text(fm.get("to")), "recipients": _note_recipients(fm),
                      "subject": _text(fm.get("subject")), "code": code, "reason": reason, "retry_at": retry_at})
    for skipped in listing.skipped[: max(0, SHOWN - len(items))]:
        items.append({"path": skipped["path"], "to": None, "recipients": recipient_lists(), "subject": None,
                      "code": "unreadable",
                      "reason": f"H0 cannot read it ({skipped.get('message')}); it goes back to Drafts/ unchanged",
                      "retry_at": None})
    return items, listing.total + len(listing.skipped)


def _why_waiting(settings: Any, vault: Vault, path: str, fm: dict[str, Any], event: dict[str, Any] | None,
                 daemon: dict[str, Any] | None, sending: dict[str, Any], now: float) -> tuple[str, str, str | None]:
    """(code, reason, retry_at) for one approved note, from what is knowable outside the daemon."""
    if _lower(fm.get("status")) == "rejected":
        return "rejected", "marked rejected: H0 files it in Done/ and never sends it", None
    try:
        mtime = os.stat(vault.root / path).st_mtime
    except OSError:
        mtime = now
    if daemon is None:
        return "not_running", "H0 is not running: start it with `h0 watch` (or run `h0 sweep`)", None
    if event is not None and str(event.get("timestamp", "")) >= iso(dt.datetime.fromtimestamp(mtime - 1, dt.UTC)):
        name = event.get("event")
        message = str(event.get("message") or event.get("reason") or event.get("error") or "")
        retry_at = _retry_at(event)
        if name == "sends_paused" or (sending["paused"] and name in ("send_failed", "handler_error")):
            return "paused", f"sending is paused: {sending['pause_reason'] or message}", None
        if name == "send_deferred":
            return "rate_limited", f"a send cap is reached ({message})", retry_at
        if name == "send_outcome_unknown":
            return "outcome_unknown", f"the send's outcome is unknown ({message}); H0 will not send it again by itself", None
        if name == "read_error":
            return "unreadable", message, None
        return "retrying", f"{str(name or 'retry').replace('_', ' ')}: {message}", retry_at
    if sending["paused"]:
        return "paused", f"sending is paused: {sending['pause_reason']}", None
    if sending["cap_reached"]:
        cap = next(c for c in sending["caps"] if c["left"] == 0)
        return "rate_limited", f"the per-{cap['window']} send cap ({cap['limit']}) is reached", cap["next_slot_at"]
    settle = float(settings.approval_settle_seconds)
    if now - mtime < settle:
        return ("settling", f"changed in place {now - mtime:.0f} s ago: sent once unchanged for {settle:g} s",
                _iso_epoch(mtime + settle))
    return "queued", "being sent now", None


def _needs_you(vault: Vault, hidden: frozenset[str] = frozenset()) -> tuple[list[dict[str, Any]], int]:
    """Emails in Needs_Action/ (any depth) triaged urgent, needs_info or delegate, or whose reply
    the human rejected; urgent first (snoozed ones, `hidden`, left out)."""
    found: dict[str, str] = {}
    for flt, kind in NEEDS_YOU:
        try:
            listing = vault.list_notes(NEEDS_ACTION, flt, recursive=True)
        except H0Error:
            continue
        for note in listing.notes:
            if note.path in hidden:
                continue
            if kind == "rejected_reply":
                found[note.path] = kind  # an urgent email whose reply was rejected: say the rejection
            else:
                found.setdefault(note.path, kind)
    order = {kind: index for index, (_, kind) in enumerate(NEEDS_YOU)}
    ranked = sorted(found.items(), key=lambda item: (order[item[1]], item[0]))
    items = []
    for path, kind in ranked[:SHOWN]:
        try:
            fm = vault.read_note(path).frontmatter
        except H0Error:
            fm = {}
        reason = _text(fm.get("problem")) or _text(fm.get("reasoning"))
        if kind == "rejected_reply":
            draft = _text(fm.get("draft"))
            reason = f"{REJECTED_REPLY_REASON} ({draft})" if draft else REJECTED_REPLY_REASON
        items.append({"path": path, "decision": kind, "status": _text(fm.get("status")), "reason": reason,
                      "subject": _text(fm.get("subject")), "from": _text(fm.get("from")),
                      "delegate_to": _text(fm.get("delegate_to")), "draft": _text(fm.get("draft"))})
    return items, len(found)


def _retry_at(record: dict[str, Any]) -> str | None:
    retry_in = record.get("retry_in")
    try:
        stamp = dt.datetime.fromisoformat(str(record.get("timestamp")))
        return iso(stamp + dt.timedelta(seconds=float(retry_in))) if retry_in is not None else None
    except (TypeError, ValueError):
        return None


def _iso_epoch(epoch: float | None) -> str | None:
    return iso(dt.datetime.fromtimestamp(epoch, dt.UTC)) if epoch is not None else None


def _lower(value: object) -> str:
    return str(value or "").strip().lower()


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
