"""What the follow-up ledger learns: ingest's hand-off, and H0's own sends.

- `record_mail` — each new message and each message the owner sent (the sync's `sent`), recorded as
  ingest writes the notes; it never raises (a ledger that cannot be written costs the follow-ups of
  those messages, never the ingest).
- `record_own_sends` — what H0 itself sent since the last pass, from the send ledger (every backend,
  the outbox and SMTP too, whose sent mail H0 cannot read back), with the text of the sent note.
- `mark_triaged` — triage's hand-off: a triaged email's thread is looked at by the next pass, so whether
  the email is owed never depends on which of the two passes ran first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loguru import logger

from h0.errors import H0Error
from h0.followup.asks import judge_for
from h0.followup.ledger import FollowupLedger
from h0.followup.record import from_email, from_send
from h0.handlers.context import HandlerContext
from h0.mail.models import EmailFull
from h0.mail.owner import note_message_key
from h0.state import StateDB


def state_of(ctx: HandlerContext) -> StateDB:
    return ctx.state_db or StateDB.for_vault(ctx.settings.vault_path, ctx.settings.h0_state_dir)


def record_mail(
    ctx: HandlerContext,
    emails: Sequence[EmailFull],
    sent: Sequence[EmailFull] = (),
    written: Mapping[str, str] | None = None,
    *,
    now: float,
) -> int:
    """Ingest's hand-off: record the new messages and the owner's sent ones. Never raises: a ledger
    that cannot be written costs the follow-ups of these messages, never the ingest."""
    if not emails and not sent:
        return 0
    try:
        judge = judge_for(ctx.settings)
        notes = written or {}
        messages = [from_email(e, outbound=False, now=now, note=notes.get(e.id)) for e in emails]
        messages += [from_email(e, outbound=True, now=now, judge=judge) for e in sent]
        FollowupLedger(state_of(ctx)).record(messages)
        return len(messages)
    except H0Error as error:
        logger.warning("follow-ups: {} message(s) could not be recorded ({})", len(emails) + len(sent), error.message)
        return 0


def record_own_sends(ctx: HandlerContext, ledger: FollowupLedger, now: float) -> int:
    """H0's own sends since the last pass (from the send ledger: every backend, the outbox too)."""
    mark = ledger.sends_mark()
    rows = ledger.state.sends_since(mark)
    if not rows:
        return 0
    judge = judge_for(ctx.settings)
    sender = ctx.settings.smtp_from or ""
    messages = []
    for row in rows:
        note = None
        for path in (row.get("filed_path"), row.get("note_path")):
            if isinstance(path, str) and path:
                try:
                    note = ctx.notes.read(path)
                    break
                except H0Error:
                    continue
        messages.append(from_send(row, note, now=now, judge=judge, sender=sender))
    ledger.record(messages)
    ledger.set_sends_mark(max(float(r["sent_epoch"]) for r in rows))
    return len(messages)


def mark_triaged(ctx: HandlerContext, notes: Sequence[Mapping[str, Any]]) -> None:
    """Triage decided these email notes (their frontmatter as read): their threads are looked at by the next
    follow-up pass. Never raises: a ledger that cannot be written leaves the pass's own recheck."""
    threads = [str(fm.get("thread_id") or "") or note_message_key(fm) for fm in notes]
    if not threads:
        return
    try:
        FollowupLedger(state_of(ctx)).touch(threads)
    except H0Error as error:
        logger.warning("follow-ups: {} triaged thread(s) not marked ({})", len(threads), error.message)
