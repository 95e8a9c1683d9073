"""Learn from what became of H0's drafts (h0.drafting.learning): the daemon's `@learn` job.

Sent and rejected drafts filed in Done/ since the last look are compared with what H0 wrote,
lessons are drawn from edited ones when a model is configured, the profile's learned section is
refreshed, and — at most once an hour, where the mail backend can search it — the owner's
recent sent mail is cached so past replies include mail sent from other clients.
"""

from __future__ import annotations

import time

from loguru import logger

from h0.drafting import Drafting
from h0.drafting.learning import learn_from_filed, sync_sent_mail
from h0.errors import H0Error, NotSupported
from h0.handlers.context import HandlerContext, Outcome

SENT_SYNC_SECONDS = 3600.0
_last_sync: dict[str, float] = {}


def learn_from_drafts(ctx: HandlerContext, *, sync_sent: bool = False) -> Outcome:
    drafting = ctx.drafting or Drafting.for_settings(ctx.settings, ctx.paths.root)
    ctx.drafting = drafting
    llm = getattr(ctx.triager, "llm", None)
    outcomes = learn_from_filed(ctx.notes.api, drafting, llm)
    for record in outcomes:
        if record["outcome"] == "sent" and record.get("similarity") is not None:
            logger.info("📏 {}: sent {:.0%} as H0 wrote it{}", record["note"], record["similarity"],
                        " (send-ready)" if record.get("send_ready") else "")
    if sync_sent and ctx.mail is not None and drafting.sent_cache is not None:
        _sync(ctx, drafting)
    return Outcome("learned", f"{len(outcomes)} draft(s)", data={"outcomes": len(outcomes)})


def _sync(ctx: HandlerContext, drafting: Drafting) -> None:
    key = str(drafting.root)
    now = time.monotonic()
    if now - _last_sync.get(key, -SENT_SYNC_SECONDS) < SENT_SYNC_SECONDS:
        return
    _last_sync[key] = now
    try:
        added = sync_sent_mail(ctx.mail, drafting.sent_cache)
    except NotSupported:
        logger.debug("sent mail: the mail backend cannot search it; past replies come from Done/ only")
        return
    except (H0Error, OSError) as error:
        logger.info("sent mail not read this time: {}", getattr(error, "message", error))
        return
    if added:
        logger.info("sent mail: {} message(s) of yours added to H0's past replies", added)
