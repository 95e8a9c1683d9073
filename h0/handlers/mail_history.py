"""History is knowledge, work is recent: which mail becomes a note, and mail as history keeps it.

The rule (docs/mail-in.md), for `h0 import` and a first mail sync alike: a message that may still
need the owner — received in the last WORK_WINDOW_DAYS, not written by the owner, and not answered
by the owner later in its thread — becomes a `Needs_Action/` note and is triaged. Everything else
(older mail, undated mail, the owner's sent mail) is history (h0.state.history): past replies,
voice, thread context and follow-ups learn from it; it is never triaged or drafted for.

Whether the owner wrote a message is the owner's identity's to say (h0.mail.owner): an import asks
it of each message's export evidence; a first sync takes it from the provider's sent mail.
"""

from __future__ import annotations

from collections.abc import Sequence

from loguru import logger

from h0.drafting.replytext import latest_reply
from h0.errors import H0Error
from h0.followup.messages import from_email
from h0.followup.threads import Message
from h0.handlers.context import HandlerContext
from h0.mail.models import EmailFull
from h0.state.history import HistoryMessage, MailHistory

DAY_S = 86400.0
MAX_SENT_TEXT = 6_000  # the owner's words, as past replies keep them (h0.drafting.past)
MAX_EXCERPT = 2_000  # someone else's words, as thread context quotes them (h0.handlers.thread)


def is_recent(email: EmailFull, at: float, now: float, window_days: float) -> bool:
    """Received within the work window (an undated message is never recent: its age is unknown)."""
    return bool(email.date) and at >= now - window_days * DAY_S


def history_message(
    email: EmailFull, *, outbound: bool, now: float, origin: str = "import", seen: Message | None = None
) -> HistoryMessage:
    """A message as history keeps it: the owner's words cut of quoted history (voice, past replies),
    anyone else's as a bounded excerpt (thread context). `seen`: the message as the follow-up ledger
    reads it, when the caller has it already (its headers are parsed once)."""
    seen = seen or from_email(email, outbound=outbound, now=now)
    body = email.body or ""
    if outbound:
        text, signature = latest_reply(body)
        text, signature = (text or body)[:MAX_SENT_TEXT], signature[:500]
    else:
        text, signature = body.strip()[:MAX_EXCERPT], ""
    return HistoryMessage(
        key=seen.key,
        thread=seen.thread,
        outbound=outbound,
        sender=seen.sender,
        recipients=seen.recipients,
        subject=seen.subject,
        at=seen.at,
        text=text,
        signature=signature,
        provider_id=email.id,
        origin=origin,
    )


def keep_old_as_history(
    ctx: HandlerContext, emails: Sequence[EmailFull], *, now: float, origin: str
) -> tuple[list[EmailFull], list[EmailFull]]:
    """A first sync's (or a catch-up's) messages split by the rule: (work: recent, to be notes; kept: older or
    undated, now kept as history). If history cannot be written, everything stays work (nothing is lost)."""
    work: list[EmailFull] = []
    kept: list[EmailFull] = []
    for email in emails:
        at = from_email(email, outbound=False, now=now).at
        (work if is_recent(email, at, now, ctx.settings.work_window_days) else kept).append(email)
    if not kept:
        return work, kept
    try:
        MailHistory(ctx.state_database()).commit(
            [history_message(e, outbound=False, now=now, origin=origin) for e in kept]
        )
    except H0Error as error:
        logger.warning(
            "ingest: {} older message(s) could not be kept as history ({}); notes instead", len(kept), error.message
        )
        return list(emails), []
    return work, kept
