"""Snoozes on notes (h0.followup.snooze): woken when their time comes, broken values written on the note.

The follow-up pass calls `check_snooze` for every note of Needs_Action/ and Drafts/, and `wake` for
the snoozed notes of a thread someone wrote in. Waking removes `snooze_until` and writes when and
why (`snooze_woke_at`, `snooze_woke_reason`): the note is back in the reports, and the audit log's
`note_unsnoozed` puts it in the day's briefing. A broken value gets `snooze_error` (the typed
error's message) and `snooze_error_code`, written once, cleared once fixed.
"""

from __future__ import annotations

from loguru import logger

from h0.handlers.context import HandlerContext
from h0.handlers.followup.pass_report import update_note
from h0.vault.audit import epoch_timestamp
from h0.vault.marks import SNOOZE
from h0.vault.model import NoteFacts

ERROR_KEYS = ("snooze_error", "snooze_error_code")


def check_snooze(ctx: HandlerContext, facts: NoteFacts, now: float) -> tuple[float | None, str]:
    """(the time the note is still snoozed until, or None; what happened: "", "woke" or "error")."""
    path, snooze = facts.path, facts.snooze
    if (error := snooze.problem) is not None:
        if snooze.error == error.message:
            return None, ""
        if update_note(ctx, path, {"snooze_error": error.message, "snooze_error_code": error.code}):
            ctx.audit.write("snooze_invalid", "warning", path=path, message=error.message, value=snooze.written)
            logger.warning("{}: {}", path, error.message)
            return None, "error"
        return None, ""
    if snooze.error:
        update_note(ctx, path, {}, remove=ERROR_KEYS)
    if snooze.until is not None and snooze.until <= now:
        return None, "woke" if wake(ctx, path, f"its snooze ended ({snooze.written})", now) else ""
    return snooze.until, ""


def wake(ctx: HandlerContext, path: str, reason: str, now: float) -> bool:
    """Bring a snoozed note back now, saying why; False when it is gone or could not be changed."""
    if not update_note(
        ctx, path, {"snooze_woke_at": epoch_timestamp(now), "snooze_woke_reason": reason}, remove=(SNOOZE, *ERROR_KEYS)
    ):
        return False
    ctx.audit.write("note_unsnoozed", path=path, reason=reason)
    logger.info("⏰ {} is back: {}", path, reason)
    return True
