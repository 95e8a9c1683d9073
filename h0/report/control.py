"""What `h0 status` and the dashboard say about the control notes (h0.vault.control): the changes
an agent proposed, waiting for the owner's confirmation, and the changes of the last day that H0
did not see the owner make (on disk, outside H0's tools), confirmed, or refused to apply.

Nothing is said while there is nothing to say: a vault whose control notes only the owner and
H0 touched shows no line. `h0.report.text` and `h0.report.dashboard` render these facts and phrases.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from h0.report.fields import SHOWN
from h0.vault import Vault
from h0.vault.audit import iso, utcnow
from h0.vault.control import CONFIRM
from h0.vault.control_watch import proposals

EVENTS = ("control_note_changed", "control_note_confirmed", "control_note_not_confirmed")


def collect_control(vault: Vault, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The proposals waiting now and the control-note events of the last 24 hours (newest first)."""
    day_ago = iso(utcnow() - dt.timedelta(days=1))
    events = [r for r in records if r.get("event") in EVENTS and str(r.get("timestamp", "")) >= day_ago]
    return {
        "proposals": [
            {"note": p.note, "path": p.path, "proposed_by": p.proposed_by, "confirmed": p.confirmed, "error": p.error}
            for p in proposals(vault)
        ],
        "recent": [
            {k: r.get(k) for k in ("timestamp", "event", "note", "by", "proposed_by", "reason")}
            for r in reversed(events[-SHOWN:])
        ],
    }


def said(event: dict[str, Any]) -> str:
    if event["event"] == "control_note_changed":
        return f"changed {event.get('by') or 'outside H0'}; the change is in effect"
    if event["event"] == "control_note_confirmed":
        return f"you confirmed the change proposed by {event.get('proposed_by') or 'an agent'}; it is in effect"
    return f"a confirmed proposal was not applied: {event.get('reason') or ''}"


def waiting(p: dict[str, Any]) -> str:
    then = f" — not applied: {p['error']}" if p.get("error") else ""
    return (
        f"a change proposed by {p['proposed_by']} waits in {p['path']}: read it, then set {CONFIRM}: true "
        f"there to apply it, or delete it{then}"
    )
