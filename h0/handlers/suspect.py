"""Suspected phishing in triage: the domains the owner knows (past correspondents, People notes, the
owner's own) for the look-alike test, and a decider's outcome made `needs_info` without its reply."""

from __future__ import annotations

from h0.drafting import Drafting
from h0.errors import H0Error
from h0.handlers.context import HandlerContext
from h0.mail.deception.lookalike import Correspondents, ascii_domain, skeleton
from h0.mail.owner import owner_addresses
from h0.triage.models import TriageOutcome


def known_domains(ctx: HandlerContext, drafting: Drafting | None) -> tuple[dict[str, set[str]], list[str]]:
    """({skeleton: domains} known: past correspondents and People notes; the owner's domains), once a batch."""
    if ctx.correspondents is None:
        ctx.correspondents = Correspondents(ctx.paths.root, ctx.state_db)
    try:
        known = {key: set(domains) for key, domains in ctx.correspondents.known().items()}
    except H0Error:
        known = {}
    for address in drafting.people_addresses() if drafting is not None else []:
        domain = ascii_domain(address.rpartition("@")[2]) if "@" in address else ""
        if "." in domain:
            known.setdefault(skeleton(domain), set()).add(domain)
    return known, [address.rpartition("@")[2] for address in owner_addresses(ctx.settings)]


def no_reply(outcome: TriageOutcome, why: str) -> TriageOutcome:
    """The decider's outcome with its decision made `needs_info` and its reply dropped (phishing)."""
    decision = outcome.decision
    if decision.decision == "needs_info" and decision.reply_body is None:
        return outcome
    held = decision.model_copy(
        update={
            "decision": "needs_info",
            "reply_body": None,
            "reasoning": f"Suspected phishing: {why}; no reply drafted (was {decision.decision}: {decision.reasoning})",
        }
    )
    return outcome.model_copy(update={"decision": held, "warnings": [*outcome.warnings, f"suspected phishing: {why}"]})
