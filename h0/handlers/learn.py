"""Learn from what became of H0's drafts (h0.drafting.learning): the daemon's `@learn` job.

Sent and rejected drafts filed in Done/ since the last look are compared with what H0 wrote,
lessons are drawn from edited ones when a model is configured, the profile's learned section is
refreshed. `remember_sent_mail` is ingest's hand-off: the owner's mail sent from any client, as the
sync already brought it (no call of its own), is kept so past replies include it.
"""

from __future__ import annotations

from collections.abc import Sequence

from loguru import logger

from h0.drafting.learning import learn_from_filed, remember_sent
from h0.errors import H0Error
from h0.handlers.context import HandlerContext
from h0.handlers.outcome import Action, Outcome
from h0.handlers.thread import private_in_thread
from h0.mail.models import EmailFull
from h0.mail.owner import message_key


def learn_from_drafts(ctx: HandlerContext) -> Outcome:
    drafting = ctx.drafting_state()
    llm = getattr(ctx.triager, "llm", None)
    outcomes = learn_from_filed(
        ctx.notes.notes, drafting, llm, private=lambda path, fm, body: private_in_thread(ctx, path, fm, body=body)
    )
    for record in outcomes:
        if record["outcome"] == "sent" and record.get("similarity") is not None:
            logger.info(
                "📏 {}: sent {:.0%} as H0 wrote it{}",
                record["note"],
                record["similarity"],
                " (send-ready)" if record.get("send_ready") else "",
            )
    return Outcome(Action.LEARNED, f"{len(outcomes)} draft(s)", data={"outcomes": len(outcomes)})


def remember_sent_mail(ctx: HandlerContext, sent: Sequence[EmailFull]) -> None:
    """Ingest's hand-off: the owner's sent messages the sync brought become past replies (how the owner
    writes to each person). Never raises: a cache that cannot be written costs only what is learned."""
    if not sent:
        return
    drafting = ctx.drafting_state()
    if drafting.sent_cache is None or drafting.owner is None:
        return
    try:
        # Only what the owner's identity recorded as the owner's sent mail (the sync records it as it reads it).
        owned = drafting.owner.owned([message_key(e.rfc822_message_id, e.id) for e in sent])
        mine = [e for e in sent if message_key(e.rfc822_message_id, e.id) in owned]
        added = remember_sent(drafting.sent_cache, mine)
    except (H0Error, OSError) as error:
        logger.info("sent mail not added to past replies: {}", getattr(error, "message", error))
        return
    if added:
        logger.debug("sent mail: {} message(s) of yours added to H0's past replies", added)
