"""Why approved notes have not gone yet, as the reports tell it (the sending itself is h0.mail.sending's):
whether sending is paused and why, each send cap's use and when its next slot frees, and per note in
Approved/ what is knowable outside the daemon."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from h0.config import Settings
from h0.errors import H0Error
from h0.mail.compose.recipients import recipient_lists
from h0.platform.machine import Machine
from h0.report.fields import SHOWN, iso_epoch
from h0.state import DB_FILE, StateDB, state_dir_for
from h0.vault import Vault
from h0.vault.audit import iso
from h0.vault.last_change import settle_left
from h0.vault.layout import APPROVED
from h0.vault.model import NoteFacts, note_facts
from h0.vault.sending_computer import not_sent_here

# A pause (auth required, SMTP not configured) lasts 60 s and is renewed, and logged again,
# by the next attempt: one older than this without a newer one has ended.
PAUSE_MEMORY_SECONDS = 150.0
# The last of these about an approved note says why it is still in Approved/.
_WAIT_EVENTS = frozenset(
    {
        "sends_paused",
        "send_deferred",
        "send_failed",
        "mcp_unavailable",
        "send_outcome_unknown",
        "handler_error",
        "read_error",
    }
)


def sending_state(
    settings: Settings,
    vault: Vault,
    records: list[dict[str, Any]],
    state_db: StateDB | None,
    daemon: dict[str, Any] | None,
    live: dict[str, Any] | None,
    now: float,
) -> dict[str, Any]:
    """Paused or not and why; each send cap's use and when its next slot frees."""
    paused_reason = None
    paused_since = None
    if live is not None and live.get("paused_for", 0) > 0:
        paused_reason = live.get("pause_reason") or "sending is paused"
    # Another computer sends this vault's drafts (h0.vault.sending_computer): that says why they wait here.
    here = not_sent_here(vault, Machine.this(settings.h0_machine), dt.datetime.fromtimestamp(now, dt.UTC))
    paused_reason = here or paused_reason
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
    for window, seconds, limit in (
        ("hour", 3600.0, settings.rate_limit_per_hour),
        ("day", 86400.0, settings.rate_limit_per_day),
    ):
        used = [t for t in times if t >= now - seconds]
        # When the cap is reached, the next slot frees as the send that filled it leaves the window
        # (a cap of 0 has none: sending is off).
        next_slot = used[len(used) - limit] + seconds if limit and len(used) >= limit else None
        caps.append(
            {
                "window": window,
                "limit": limit,
                "used": len(used),
                "left": max(0, limit - len(used)),
                "next_slot_at": iso_epoch(next_slot),
                "oldest_leaves_at": iso_epoch(used[0] + seconds) if used else None,
            }
        )
    return {
        "paused": paused_reason is not None,
        "pause_reason": paused_reason,
        "paused_since": paused_since,
        "cap_reached": [c["window"] for c in caps if c["left"] == 0],
        "caps": caps,
    }


def _send_times(settings: Settings, vault: Vault, state_db: StateDB | None, now: float) -> list[float]:
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


def approved_notes(
    settings: Settings,
    vault: Vault,
    records: list[dict[str, Any]],
    daemon: dict[str, Any] | None,
    sending: dict[str, Any],
    now: float,
) -> tuple[list[dict[str, Any]], int]:
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
        facts = note_facts(note.path, note.frontmatter or {})
        code, reason, retry_at = _why_waiting(settings, vault, facts, last.get(note.path), daemon, sending, now)
        items.append(
            {
                "path": note.path,
                "to": ", ".join(facts.to) or None,
                "recipients": facts.recipients,
                "subject": facts.subject,
                "code": code,
                "reason": reason,
                "retry_at": retry_at,
            }
        )
    for skipped in listing.skipped[: max(0, SHOWN - len(items))]:
        items.append(
            {
                "path": skipped["path"],
                "to": None,
                "recipients": recipient_lists(),
                "subject": None,
                "code": "unreadable",
                "reason": f"H0 cannot read it ({skipped.get('message')}); it goes back to Drafts/ unchanged",
                "retry_at": None,
            }
        )
    return items, listing.total + len(listing.skipped)


def _why_waiting(
    settings: Settings,
    vault: Vault,
    facts: NoteFacts,
    event: dict[str, Any] | None,
    daemon: dict[str, Any] | None,
    sending: dict[str, Any],
    now: float,
) -> tuple[str, str, str | None]:
    """(code, reason, retry_at) for one approved note, from what is knowable outside the daemon."""
    if facts.rejected:
        return "rejected", "marked rejected: H0 files it in Done/ and never sends it", None
    try:
        mtime = os.stat(vault.root / facts.path).st_mtime
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
            return (
                "outcome_unknown",
                f"the send's outcome is unknown ({message}); H0 will not send it again by itself",
                None,
            )
        if name == "read_error":
            return "unreadable", message, None
        return "retrying", f"{str(name or 'retry').replace('_', ' ')}: {message}", retry_at
    if sending["paused"]:
        return "paused", f"sending is paused: {sending['pause_reason']}", None
    if sending["cap_reached"]:
        cap = next(c for c in sending["caps"] if c["left"] == 0)
        return "rate_limited", f"the per-{cap['window']} send cap ({cap['limit']}) is reached", cap["next_slot_at"]
    settle = settings.approval_settle_seconds
    left = settle_left(moved=False, quiet_for=now - mtime, settle_s=settle)  # a report sees no drag: the mtime rules
    if left > 0:
        return (
            "settling",
            f"changed in place {now - mtime:.0f} s ago: sent once unchanged for {settle:g} s",
            iso_epoch(now + left),
        )
    return "queued", "being sent now", None


def _retry_at(record: dict[str, Any]) -> str | None:
    retry_in = record.get("retry_in")
    try:
        stamp = dt.datetime.fromisoformat(str(record.get("timestamp")))
        return iso(stamp + dt.timedelta(seconds=float(retry_in))) if retry_in is not None else None
    except (TypeError, ValueError):
        return None


def copies_filed(records: list[dict[str, Any]], since: str) -> list[dict[str, Any]]:
    """The copies H0 filed in Done/ instead of sending them (a sync tool's copy, the same message approved
    twice: h0.mail.copies) since `since`, newest first: one per `copy_filed` record, which is written once,
    as the copy leaves Approved/."""
    return [
        {k: r.get(k) for k in ("timestamp", "path", "done_path", "copy_of", "sent_at", "outcome")}
        for r in reversed(records)
        if r.get("event") == "copy_filed" and r.get("stream") == "h0" and str(r.get("timestamp", "")) >= since
    ]
