"""Archive a rejected draft (user story 1, scenario 4): to Done/ with `decision: rejected`, never sent.

A draft is rejected when the human moves it to Rejected/, or sets `status: rejected` on
it in Drafts/ or Approved/. The email it answered (its `source:`, still waiting in
Needs_Action/ for this reply) then says so — `status: rejected_reply`, `draft:` pointing at
the filed draft — so it is back on the human's list with no reply pending, not silently
"awaiting approval" of a draft that no longer exists.
"""

from __future__ import annotations

from loguru import logger

from h0.errors import H0Error, NotFound, ParseError
from h0.handlers.context import HandlerContext
from h0.handlers.outcome import Action, Outcome
from h0.vault.audit import note_timestamp
from h0.vault.layout import DONE, REJECTED
from h0.vault.values import inbox_source

AWAITING = "awaiting_approval"
REJECTED_REPLY = "rejected_reply"


def archive_rejected(path: str, ctx: HandlerContext) -> Outcome:
    """The reject step: a note in Rejected/, or one whose status says rejected (in Drafts/ or Approved/), is filed
    (`file_rejected`); any other note is left alone. It reads the note: it decides from what is on disk now."""
    in_rejected = path.startswith(f"{REJECTED}/")
    try:
        note = ctx.notes.read(path)
    except NotFound:
        return Outcome(Action.GONE)
    except ParseError as exc:
        if not in_rejected:
            ctx.report(path, "read_error", "corrupt", exc.message, **ctx.error_fields(exc))
            return Outcome(Action.WAITING, "corrupt frontmatter")
        # In Rejected/ the human's intent is clear even if the note is unreadable: filed as it is.
        return file_rejected(path, ctx, None, readable=False)
    facts = note.facts
    if not in_rejected and not facts.rejected:
        return Outcome(Action.SKIPPED, "not rejected")
    return file_rejected(path, ctx, facts.source)


def file_rejected(path: str, ctx: HandlerContext, source: object, *, readable: bool = True) -> Outcome:
    """File a rejected draft in Done/ with `decision: rejected` (never sent) and put the email it answered back on
    the human's list. `source`: the draft's `source:` as it was read — by the reject step, or by the mail server
    that refused to send it (the send step does not read the note again). An unreadable note (`readable=False`)
    is filed as it is; the audit line records the decision."""
    record = {"status": "rejected", "decision": "rejected", "rejected_at": note_timestamp()} if readable else None
    try:
        done_path = ctx.notes.move(path, f"{DONE}/", rename_if_exists=True, set_frontmatter=record).destination
    except NotFound:
        return Outcome(Action.GONE)
    email = inbox_source(ctx.paths, source)  # only an email note directly in Needs_Action/
    marked = _mark_source(path, email, done_path, ctx) if email is not None else None
    ctx.audit.write("draft_rejected", path=path, done_path=done_path, decision="rejected", source=marked)
    again = f"; {marked} is back on your list ({REJECTED_REPLY})" if marked else ""
    logger.info("✗ rejected {} — filed as {}, not sent{}", path, done_path, again)
    return Outcome(Action.REJECTED, done_path, data={"done_path": done_path, "decision": "rejected"})


def _mark_source(path: str, email: str, done_path: str, ctx: HandlerContext) -> str | None:
    """The email this draft answered, if it was waiting for it: `status: rejected_reply`."""
    try:
        note = ctx.notes.read(email)
        if note.facts.status.word != AWAITING:
            return None  # answered another way, or the human already moved on
        waiting_for = note.facts.follow_up_marks.draft
        if waiting_for and waiting_for.rsplit("/", 1)[-1] != path.rsplit("/", 1)[-1]:
            return None  # it waits for another draft, which still answers it
        marks = {"status": REJECTED_REPLY, "draft": done_path, "rejected_at": note_timestamp()}
        ctx.notes.update(email, marks, if_match=note.hash)
    except H0Error as error:  # the draft is filed either way; the email keeps its old status
        ctx.audit.write("source_not_marked", "warning", path=email, draft=done_path, **ctx.error_fields(error))
        return None
    return email
