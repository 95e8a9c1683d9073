"""Suspected attacks in triage: whom the owner knows (h0.mail.deception.known), once a batch, and a decider's
outcome made `needs_info` without its reply."""

from __future__ import annotations

import threading

from loguru import logger

from h0.drafting import Drafting
from h0.errors import H0Error
from h0.handlers.context import HandlerContext
from h0.mail.deception.known import Known, OwnerKnown
from h0.mail.owner import owner_addresses
from h0.triage.models import TriageOutcome

_lock = threading.Lock()
_records: dict[tuple[str, frozenset[str]], OwnerKnown] = {}  # one per state database: each batch asks it


def known_people(ctx: HandlerContext, drafting: Drafting | None) -> Known:
    """Whom the owner knows: everyone the owner wrote to (the owner's identity: sent history, the provider's
    sent mail, H0's own sends), the People notes' names and addresses, and the owner's own addresses —
    never someone who only wrote in. Asked once a batch; the owner's record is re-read only when it changed
    (h0.mail.deception.known.OwnerKnown, one per state database). When it cannot be read, the People notes
    and the owner's addresses still count (logged)."""
    people = drafting.people() if drafting is not None else []
    own = owner_addresses(ctx.settings)
    try:
        state = ctx.state_database()
        key = (str(state.path), own)
        with _lock:
            record = _records.get(key)
            if record is None:
                record = _records[key] = OwnerKnown(state, own)
        return record.with_people(people)
    except H0Error as error:
        logger.warning("whom you wrote to could not be read ({}): look-alikes of them are not caught", error.message)
        return Known.of(people, own=own)


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
