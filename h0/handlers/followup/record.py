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

from loguru import logger

from h0.errors import H0Error
from h0.followup.asks import RulesJudge, judge_for
from h0.followup.ledger import FollowupLedger
from h0.followup.messages import from_email, from_send
from h0.handlers.context import HandlerContext
from h0.handlers.thread import private_in_thread, threads_of
from h0.mail.models import EmailFull
from h0.mail.owner import note_message_key
from h0.vault.model import NoteFacts


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
        private = _private_threads(ctx, [str(e.thread_id) for e in sent if e.thread_id])
        messages = [from_email(e, outbound=False, now=now, note=notes.get(e.id), judge=judge) for e in emails]
        messages += [
            from_email(e, outbound=True, now=now, judge=RulesJudge() if str(e.thread_id) in private else judge)
            for e in sent
        ]
        FollowupLedger(ctx.state_database()).record(messages)
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
        local = note is not None and private_in_thread(ctx, note.path, note.frontmatter, body=note.body)
        messages.append(from_send(row, note, now=now, judge=RulesJudge() if local else judge, sender=sender))
    ledger.record(messages)
    ledger.set_sends_mark(max(float(r["sent_epoch"]) for r in rows))
    return len(messages)


def _private_threads(ctx: HandlerContext, thread_ids: Sequence[str]) -> set[str]:
    """Which of these threads hold a private note (h0.vault.disclosure): the owner's messages in them are
    judged by the rules, never shown to a model. A look-up that fails counts every one as private."""
    if not thread_ids:
        return set()
    try:
        threads = threads_of(ctx, thread_ids)
    except H0Error as error:
        logger.warning(
            "follow-ups: the threads of sent mail could not be read ({}); judged by the rules", error.message
        )
        return set(thread_ids)
    gate = ctx.disclosure()
    return {tid for tid, notes in threads.items() if gate.thread_private(None, [n.note for n in notes])}


def mark_triaged(ctx: HandlerContext, notes: Sequence[NoteFacts]) -> None:
    """Triage decided these email notes (what they said when read): their threads are looked at by the next
    follow-up pass. Never raises: a ledger that cannot be written leaves the pass's own recheck."""
    threads = [facts.thread_id or note_message_key(facts) for facts in notes]
    if not threads:
        return
    try:
        FollowupLedger(ctx.state_database()).touch(threads)
    except H0Error as error:
        logger.warning("follow-ups: {} triaged thread(s) not marked ({})", len(threads), error.message)
