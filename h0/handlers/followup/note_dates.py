"""Broken dates on notes (h0.vault.dates): written on the note as `date_error`, once, cleared once fixed.

The follow-up pass reads every note of Needs_Action/ and Drafts/ and calls `check_dates` for each:
a `received:` of year 0, 99999, "tomorrow-ish", a list or a mapping is treated as unknown by every
report and pass, and the owner sees why on the note itself (`date_error`, `date_error_code`) and
once in the audit log (`note_date_invalid`).
"""

from __future__ import annotations

from loguru import logger

from h0.handlers.context import HandlerContext
from h0.handlers.followup.pass_report import FollowupReport, update_note
from h0.vault.model import NoteFacts

ERROR_KEYS = ("date_error", "date_error_code")


def check_dates(ctx: HandlerContext, facts: NoteFacts, report: FollowupReport) -> bool:
    """Write (or clear) the note's `date_error`; True when a new error was written."""
    path, marks = facts.path, facts.follow_up_marks
    error = marks.date_problem
    if error is None:
        if marks.date_error:
            update_note(ctx, path, {}, report, remove=ERROR_KEYS)
        return False
    if marks.date_error == error.message:
        return False
    if not update_note(ctx, path, {"date_error": error.message, "date_error_code": error.code}, report):
        return False
    ctx.audit.write("note_date_invalid", "warning", path=path, message=error.message, field=error.details.get("field"))
    logger.warning("{}: {}", path, error.message)
    return True
