"""Archive a rejected draft (user story 1, scenario 4): to Done/ with `decision: rejected`, never sent.

A draft is rejected when the human moves it to Rejected/, or sets `status: rejected` on
it in Drafts/ or Approved/.
"""

from __future__ import annotations

from loguru import logger

from h0.errors import NotFound, ParseError
from h0.handlers.context import HandlerContext, Outcome
from h0.vault.audit import note_timestamp
from h0.vault.layout import DONE, REJECTED


def archive_rejected(path: str, ctx: HandlerContext) -> Outcome:
    try:
        note = ctx.notes.read(path)
    except NotFound:
        return Outcome("gone")
    except ParseError as exc:
        if not path.startswith(f"{REJECTED}/"):
            ctx.report(path, "read_error", "corrupt", exc.message, **ctx.error_fields(exc))
            return Outcome("waiting", "corrupt frontmatter")
        note = None  # in Rejected/ the human's intent is clear even if the note is unreadable
    in_rejected = path.startswith(f"{REJECTED}/")
    if note is not None and not in_rejected:
        if str(note.frontmatter.get("status", "")).strip().lower() != "rejected":
            return Outcome("skipped", "not rejected")
    record = {"status": "rejected", "decision": "rejected", "rejected_at": note_timestamp()}
    # An unreadable note is filed as it is; the audit line below records the decision.
    done_path = ctx.notes.move_to_folder(path, DONE, record if note is not None else None)["destination"]
    ctx.audit.write("draft_rejected", path=path, done_path=done_path, decision="rejected")
    logger.info("✗ rejected {} — filed as {}, not sent", path, done_path)
    return Outcome("rejected", done_path, data={"done_path": done_path, "decision": "rejected"})
