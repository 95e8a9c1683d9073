"""The reconciliation sweep: list the trigger folders and return every note that needs work.

It runs at start, every SWEEP_INTERVAL_SECONDS, after an inotify overflow and whenever
the watcher had to be restarted, so correctness never depends on an event arriving. It
reads the vault directly (listing is cached by mtime and size, so a sweep of a large
vault costs a stat per note).
"""

from __future__ import annotations

from h0.errors import H0Error
from h0.vault import Vault
from h0.vault.layout import APPROVED, DRAFTS, NEEDS_ACTION, REJECTED

TRIAGE_STATUSES = {"", "pending"}


def needs_triage(frontmatter: dict) -> bool:
    return str(frontmatter.get("status") or "").strip().lower() in TRIAGE_STATUSES


def reconcile(vault: Vault, *, triage: bool = True) -> list[str]:
    """Paths that need a handler now: everything in Approved/ and Rejected/, drafts marked
    rejected, and (when triage runs) untriaged notes in Needs_Action/."""
    paths: list[str] = []
    paths += _list(vault, APPROVED)
    paths += _list(vault, REJECTED)
    paths += _list(vault, DRAFTS, "status:rejected")
    if triage:
        try:
            listing = vault.list_notes(NEEDS_ACTION, with_frontmatter=True)
        except H0Error:
            listing = None
        if listing is not None:
            paths += [n.path for n in listing.notes if n.frontmatter is not None and needs_triage(n.frontmatter)]
            paths += [s["path"] for s in listing.skipped]  # unreadable: the handler logs read_error once
    return paths


def _list(vault: Vault, folder: str, flt: str | None = None) -> list[str]:
    try:
        listing = vault.list_notes(folder, flt)
    except H0Error:
        return []  # a missing folder has nothing to do
    return [n.path for n in listing.notes] + ([s["path"] for s in listing.skipped] if folder != DRAFTS else [])
