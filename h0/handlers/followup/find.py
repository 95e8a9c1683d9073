"""The follow-up pass in the daemon: what it finds in the vault for h0.handlers.followup.follow_up, and when it runs.

Like the reconciliation sweep, finding reads the vault directly (listings are cached by mtime and
size, so a pass costs a stat per note): the notes of Needs_Action/ and Drafts/ with their
frontmatter (snoozes, open emails, follow-up notes), and the notes of Done/ saying `awaiting:`.
The pass itself runs as one job of the work queue (FOLLOWUP_JOB: never two at once), every
FOLLOW_UP_PASS_SECONDS, after an ingest that brought mail, and once at start — so a snooze that
ended while H0 was off, or a deadline that passed, is dealt with as soon as it runs again.
"""

from __future__ import annotations

from loguru import logger

from h0.errors import H0Error
from h0.handlers.followup.follow_up import Found
from h0.vault import Vault
from h0.vault.layout import DONE, DRAFTS, NEEDS_ACTION

FOLLOWUP_JOB = "@followup"  # not a path: the queue's key for "look at the follow-ups"
FOLLOW_UP_PASS_SECONDS = 60.0
AWAITING_WORDS = ("awaiting:true", "awaiting:false", "awaiting:yes", "awaiting:no")


def find_followup_notes(vault: Vault) -> Found:
    """What the follow-up pass needs from the vault (unreadable notes are the other handlers' to report)."""
    found = Found()
    for folder, recursive in ((NEEDS_ACTION, True), (DRAFTS, False)):
        try:
            listing = vault.list_notes(folder, recursive=recursive, with_frontmatter=True)
        except H0Error as error:
            if error.code != "not_found":
                logger.warning("follow-ups: {} could not be listed ({})", folder, error.message)
            continue
        found.notes += [(n.path, dict(n.frontmatter or {})) for n in listing.notes]
    try:
        listing = vault.list_notes(DONE, list(AWAITING_WORDS), recursive=True, with_frontmatter=True)
        found.marked = [(n.path, dict(n.frontmatter or {})) for n in listing.notes]
    except H0Error as error:
        if error.code != "not_found":
            logger.warning("follow-ups: {} could not be listed ({})", DONE, error.message)
    return found
