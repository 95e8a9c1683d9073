"""Suspected attacks in triage: whom the owner knows (h0.mail.deception.known), once a batch, and a decider's
outcome made `needs_info` without its reply."""

from __future__ import annotations

from loguru import logger

from h0.drafting import Drafting
from h0.errors import H0Error
from h0.handlers.context import HandlerContext
from h0.mail.deception.known import Known
from h0.mail.owner import OwnerAuthority, owner_addresses
from h0.triage.models import TriageOutcome


def known_people(ctx: HandlerContext, drafting: Drafting | None) -> Known:
    """Whom the owner knows: everyone the owner wrote to (the owner's identity: sent history, the provider's
    sent mail, H0's own sends), the People notes' names and addresses, and the owner's own addresses —
    never someone who only wrote in. Read once a batch; a part that cannot be read is left out (logged)."""
    people: list[tuple[str, str]] = []
    senders: set[str] = set()
    try:
        authority = OwnerAuthority(ctx.state_database())
        people += authority.recipients()
        senders = authority.senders()
    except H0Error as error:
        logger.warning("whom you wrote to could not be read ({}): look-alikes of them are not caught", error.message)
    if drafting is not None:
        people += drafting.people()
    return Known.of(people, own=owner_addresses(ctx.settings, senders))


def no_reply(outcome: TriageOutcome, why: str) -> TriageOutcome:
    """The decider's outcome with its decision made `needs_info` and its reply dropped (a suspected attack)."""
    decision = outcome.decision
    if decision.decision == "needs_info" and decision.reply_body is None:
        return outcome
    held = decision.model_copy(
        update={
            "decision": "needs_info",
            "reply_body": None,
            "reasoning": f"{why}; no reply drafted (was {decision.decision}: {decision.reasoning})",
        }
    )
    return outcome.model_copy(update={"decision": held, "warnings": [*outcome.warnings, why]})
