"""The reconciliation sweep: list the trigger folders and return every note that needs work.

It runs at start, every SWEEP_INTERVAL_SECONDS, after an inotify overflow and whenever
the watcher had to be restarted, so correctness never depends on an event arriving. It
reads the vault directly (listing is cached by mtime and size, so a sweep of a large
vault costs a stat per note). Paths come out as the watcher names them (NFC; Approved/
notes by `ApprovalFolder.note_rel`), so an event and a sweep for one note are one job.
"""

from __future__ import annotations

from h0.drafting.revise import drafts_asking_revision
from h0.errors import H0Error
from h0.handlers.triage import needs_triage
from h0.vault import Vault
from h0.vault.approval import ApprovalFolder
from h0.vault.layout import DRAFTS, NEEDS_ACTION, REJECTED
from h0.vault.paths import nfc


def reconcile(vault: Vault, *, triage: bool = True) -> list[str]:
    """Paths that need a handler now: everything in Approved/ and Rejected/, drafts marked
    rejected or asking for a revision (`h0: …`), and (when triage runs) untriaged notes in Needs_Action/.

    Approved/ is the real `<vault>/Approved` only (`h0.vault.approval`, the watcher's
    definition too): a separate `approved/` folder on a case-sensitive file system is not it.
    """
    paths = ApprovalFolder(vault.root).notes()
    paths += _list(vault, REJECTED)
    paths += _list(vault, DRAFTS, "status:rejected")
    paths += [nfc(p) for p in drafts_asking_revision(vault.root)]
    if triage:
        try:
            listing = vault.list_notes(NEEDS_ACTION, with_frontmatter=True)
        except H0Error:
            listing = None
        if listing is not None:
            paths += [nfc(n.path) for n in listing.notes if n.frontmatter is not None and needs_triage(n.frontmatter)]
            paths += [nfc(s["path"]) for s in listing.skipped]  # unreadable: the handler logs read_error once
    return paths


def _list(vault: Vault, folder: str, flt: str | None = None) -> list[str]:
    try:
        listing = vault.list_notes(folder, flt)
    except H0Error:
        return []  # a missing folder has nothing to do
    return [nfc(n.path) for n in listing.notes] + (
        [nfc(s["path"]) for s in listing.skipped] if folder != DRAFTS else []
    )
