"""Suspected attacks for `h0 status` and the dashboard: each email triage flagged (h0.vault.suspicion), with the
domain it passes for, listed apart from the other emails that need the owner so that none is lost in a long list."""

from __future__ import annotations

from typing import Any

from h0.errors import H0Error
from h0.report.privacy import ReportGate
from h0.vault import Vault
from h0.vault.layout import NEEDS_ACTION
from h0.vault.model import note_facts

SHOWN = 20
FLAGGED = "suspected_phishing:true"


def collect_attacks(vault: Vault, view: ReportGate, hidden: frozenset[str] = frozenset()) -> dict[str, Any]:
    """{"items": [...], "total": n, "private": n}: the flagged emails in Needs_Action/ (snoozed ones, `hidden`,
    left out), impostors first; a private one is counted, never named (h0.report.privacy)."""
    try:
        listing = vault.list_notes(NEEDS_ACTION, FLAGGED, recursive=True, with_frontmatter=True)
    except H0Error:
        return {"items": [], "total": 0, "private": 0}
    found, private = [], 0
    for note in listing.notes:
        if note.path in hidden:
            continue
        facts = note_facts(note.path, note.frontmatter or {})
        suspicion = facts.suspicion
        if suspicion is None:
            continue
        if view.private(note.path):
            private += 1
            continue
        found.append(
            {
                "path": note.path,
                "kind": suspicion.kind.value,
                "resembles": suspicion.resembles,
                "headline": suspicion.headline,
                "reason": suspicion.reason,
                "from": facts.sender or None,
                "subject": facts.subject,
            }
        )
    found.sort(key=lambda item: (item["kind"] == "payment_change", item["path"]))
    return {"items": found[:SHOWN], "total": len(found) + private, "private": private}
