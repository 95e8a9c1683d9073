"""The reconciliation sweep's finders: how each trigger folder's notes that need work are listed.

The sweep runs at start, every SWEEP_INTERVAL_SECONDS, after an inotify overflow and whenever
the watcher had to be restarted, so correctness never depends on an event arriving. Which
folders it lists, and with which finder, is the routing table's (h0.pipeline.routes.reconcile).
It reads the vault directly (listing is cached by mtime and size, so a sweep of a large
vault costs a stat per note). Paths come out as the watcher names them (NFC; Approved/
notes by `ApprovalFolder.note_rel`), so an event and a sweep for one note are one job.
"""

from __future__ import annotations

from collections.abc import Callable

from h0.errors import H0Error
from h0.handlers.triage import needs_triage
from h0.vault import Vault
from h0.vault.approval import ApprovalFolder
from h0.vault.layout import DRAFTS, NEEDS_ACTION
from h0.vault.model import NoteFacts, note_facts
from h0.vault.paths import nfc


def approved_notes(vault: Vault) -> list[str]:
    """Everything in Approved/: the real `<vault>/Approved` only (`h0.vault.approval`, the watcher's
    definition too): a separate `approved/` folder on a case-sensitive file system is not it."""
    return ApprovalFolder(vault.root).notes()


def listed(
    folder: str, flt: str | None = None, wanted: Callable[[NoteFacts], bool] | None = None
) -> Callable[[Vault], list[str]]:
    """A finder for the notes of `folder` that match `flt` and whose typed facts `wanted` holds (notes that cannot
    be read too, except in Drafts/, where an unreadable draft is the human's to fix, not H0's to file)."""

    def find(vault: Vault) -> list[str]:
        try:
            listing = vault.list_notes(folder, flt, with_frontmatter=wanted is not None)
        except H0Error:
            return []  # a missing folder has nothing to do
        notes = [
            n
            for n in listing.notes
            if wanted is None or (n.frontmatter is not None and wanted(note_facts(n.path, n.frontmatter)))
        ]
        return [nfc(n.path) for n in notes] + ([nfc(s["path"]) for s in listing.skipped] if folder != DRAFTS else [])

    return find


# The drafts whose status says rejected, in any case or spacing (the typed status of h0.vault.draft_state: the
# sweep and the watcher agree on what a note says).
rejected_drafts = listed(DRAFTS, wanted=lambda facts: facts.rejected)
# The notes of Needs_Action/ triage has not decided, and those it cannot read (the handler logs read_error once).
untriaged_notes = listed(NEEDS_ACTION, wanted=needs_triage)
