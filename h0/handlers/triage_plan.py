"""What triage decides for one email, and the changes that carry it out (h0.handlers.triage runs the batch).

The email's words and its thread (never a private member, h0.vault.disclosure; the thread's history,
h0.handlers.thread), the owner's notes as context (h0.drafting), one decision by the triager — a model,
or the rules engine alone for a private email — then the owner's voice enforced on the model's reply
(h0.drafting.ownvoice), a wait when the model could not answer (h0.handlers.llmwait), no reply to a
suspected attack (h0.handlers.suspect, h0.triage.phishing), and the changes: a reply draft (h0.handlers.reply), a
forward draft for a delegation (h0.handlers.forward), the email's new status. Nothing is written here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from h0.drafting import DraftContext, Drafting
from h0.drafting.briefing import briefing
from h0.drafting.commercial import audience_of
from h0.drafting.replytext import strip_quoted
from h0.drafting.replyvoice import ReplyVoice
from h0.followup.asks import with_asks
from h0.handlers.context import EmailTriager, HandlerContext
from h0.handlers.forward import forward_draft
from h0.handlers.llmwait import gave_up, wait_for_model
from h0.handlers.outcome import Outcome
from h0.handlers.reply import reply_draft, reply_recipient
from h0.handlers.suspect import no_reply
from h0.handlers.thread import ThreadNote, conversation, kept_earlier, later_emails
from h0.mail.deception.known import Known
from h0.mail.incoming.htmltext import block_text, inert_inline
from h0.mail.owner import own_address, owner_addresses
from h0.triage.llm import TRUNCATED_WARNING
from h0.triage.models import DRAFTING_DECISIONS, EarlierMessage, EmailInput, ReplyContext, TriageOutcome
from h0.triage.phishing import suspected_phishing
from h0.vault import Note
from h0.vault.api import Change, Move, Update, Write
from h0.vault.audit import note_timestamp
from h0.vault.layout import DONE


@dataclass(slots=True)
class Plan:
    """What triage decided for one email, and the changes that carry it out."""

    note: Note
    outcome: Any  # h0.triage's TriageOutcome
    record: dict[str, Any]
    draft: Write | None = None  # Drafts/REPLY_<name>.md, created only if absent
    change: Change | None = None  # to the email note itself
    result: Outcome | Exception | None = None
    written: dict[str, Any] | None = None  # the draft's text and grounding, for Logs/drafting_*.jsonl
    deferred: Outcome | None = None  # the model could not answer now: the email waits (h0.handlers.llmwait)
    context: DraftContext | None = None  # the owner's notes the decision and the draft were given
    read: str = ""  # the email's words and its conversation before it, as the triager read them


def local_rules(triager: EmailTriager) -> EmailTriager:
    """The triager that decides on this machine alone: the rules engine of an h0.triage.Triager (a
    test's own triager is its own)."""
    rules = getattr(triager, "rules", None)
    return rules if rules is not None and hasattr(rules, "triage") else triager


def _not_answered(outcome: TriageOutcome, why: str) -> TriageOutcome:
    """No reply draft to mail no person wrote (a receipt, a notification, a list, an auto-reply) or to the owner's
    own address, whatever the decider said: the email stays for the owner to look at (`needs_info`)."""
    decision = outcome.decision.model_copy(
        update={
            "decision": "needs_info",
            "reply_body": None,
            "reasoning": f"{why}: no reply drafted (was {outcome.decision.decision}: {outcome.decision.reasoning})",
        }
    )
    return outcome.model_copy(update={"decision": decision})


def _voiced(chosen: ReplyVoice) -> dict[str, Any]:
    return {
        "greeting": chosen.voice.greeting,
        "sign_off": chosen.voice.sign_off,
        "language": chosen.language,
        "address": chosen.address,
    }


def plan_email(
    note: Note,
    thread: list[ThreadNote],
    ctx: HandlerContext,
    triager: EmailTriager,
    drafting: Drafting | None = None,
    *,
    private: bool = False,
    known: Known | None = None,
) -> Plan:
    # The email's words, not the code block that keeps them inert in Obsidian; and the conversation before it.
    text = block_text(note.body)
    if thread:  # the earlier messages come as the conversation: the history quoted in this one is said once
        text = strip_quoted(text) or text
    # What the edge knows: machine-made mail (ingest read its headers) and what the sender's own words ask.
    email = with_asks(EmailInput.from_note(note.facts, text).model_copy(update={"automated": note.facts.automated}))
    received = note.facts.received
    # The thread's history (h0 import, a first sync); none for a private email: its thread stays its own.
    kept = [] if private else kept_earlier(ctx, note.facts.thread_id, received)
    if thread or kept:
        email = email.model_copy(
            update={"conversation": [EarlierMessage(**entry) for entry in conversation(thread, received, kept)]}
        )
    to = reply_recipient(note.facts)
    in_thread = [note.path, *(t.note.path for t in thread)]  # given as the conversation, not again as notes
    wrote_to = [a for t in thread if t.kind == "sent" for a in t.note.facts.all_recipients]  # the owner's replies
    audience = audience_of(note.facts, owner_addresses(ctx.settings), wrote_to)  # whose business a reply may carry
    context: DraftContext | None = None
    llm = getattr(triager, "llm", None)
    # The reply's greeting, sign-off, language and register: the owner's with this person, else the profile's.
    chosen = None
    subject = note.facts.subject
    if drafting is not None and llm is not None:
        # A model decides with the owner's notes in view (no extra call: they travel in the one prompt);
        # the briefing is there for the rules that decide when the model cannot.
        chosen = drafting.reply_voice(to, note.facts.sender_text, text, note.facts)
        context = drafting.context_for_email(note.facts, text, to, exclude=in_thread, audience=audience)
        told = briefing(context, text, subject, drafting.person_language(to or ""))
        reply_context = context.reply_context(told).model_copy(update=_voiced(chosen))
        outcome = triager.triage(email, reply_context)
    elif drafting is not None:
        # Rules: the decision needs nothing from the vault; the owner's voice and notes are looked up for a
        # draft alone (most mail in a burst gets none), and its template is filled again with them.
        outcome = triager.triage(email, ReplyContext())
        if outcome.decision.decision in DRAFTING_DECISIONS:
            chosen = drafting.reply_voice(to, note.facts.sender_text, text, note.facts)
            context = drafting.context_for_email(note.facts, text, to, exclude=in_thread, audience=audience)
            told = briefing(context, text, subject, drafting.person_language(to or ""))  # read in their language
            briefed = ReplyContext(**_voiced(chosen), briefing=told)
            outcome = triager.triage(email, briefed)
    else:
        outcome = triager.triage(email)
    if outcome.deferred:
        now = dt.datetime.now(dt.UTC)
        ended = gave_up(note.facts, outcome.deferred, ctx.settings, now)
        if ended is None:
            plan = Plan(note, outcome, {})
            plan.change, plan.deferred = wait_for_model(note, outcome.deferred, outcome.retry_after, ctx, now)
            return plan
        outcome = outcome.model_copy(update={"fallback_reason": ended})
    flags = [TRUNCATED_WARNING] if outcome.truncated else []
    if (
        drafting is not None
        and chosen is not None
        and llm is not None
        and not outcome.fallback
        and outcome.decision.reply_body
    ):
        # The model's reply made the owner's: greeting and sign-off enforced, the language checked.
        finished = drafting.finish_reply(outcome.decision.reply_body, chosen, llm)
        flags += finished.flags
        outcome = outcome.model_copy(  # a language re-ask is one more call: counted with the triage's
            update={
                "decision": outcome.decision.model_copy(update={"reply_body": finished.text}),
                "attempts": outcome.attempts + finished.extra_calls,
            }
        )
    suspicion = suspected_phishing(email, known or Known())
    if suspicion is not None:
        outcome = no_reply(outcome, suspicion.problem)
    elif outcome.decision.decision in DRAFTING_DECISIONS and note.facts.automated:
        outcome = _not_answered(outcome, f"Machine-made mail ({note.facts.automated})")
    elif outcome.decision.decision in DRAFTING_DECISIONS and own_address(ctx.settings, note.facts.sender):
        outcome = _not_answered(outcome, "Mail from your own address")
    decision = outcome.decision
    record = {
        "decision": decision.decision,
        "confidence": round(float(decision.confidence), 3),
        "reasoning": decision.reasoning,
        "triaged_at": note_timestamp(),
        "triaged_by": outcome.provider if not outcome.fallback else f"{outcome.provider} → rules (fallback)",
    }
    if private:
        record["triaged_by"] = "rules (private: no model sees it)"
    if outcome.fallback and outcome.fallback_reason:
        record["fallback_reason"] = outcome.fallback_reason
    if outcome.truncated:
        record["warning"] = "the model's answer was cut off at its token limit; see the draft"
    waited = note.facts.model_wait.keys  # a decision ends any wait
    if suspicion is not None:
        record.update(suspicion.frontmatter())
    plan = Plan(note, outcome, record, context=context)
    plan.read = "\n\n".join([text, *(m.text for m in email.conversation)])
    if decision.decision in ("draft_reply", "urgent"):
        newer = later_emails(thread, note.facts.received)
        by_model = outcome.provider != "rules" and not outcome.fallback
        plan.draft, plan.written = reply_draft(
            note,
            decision,
            newer[-1] if newer else None,
            context,
            by_model,
            outcome.provider if by_model else "rules",
            owner=owner_addresses(ctx.settings),
            flags=flags,
        )
        if plan.draft is None:
            record["decision"] = "needs_info"
            plan.change = Update(
                note.path,
                {**record, "status": "needs_info", "problem": "no address to reply to"},
                remove=waited,
                if_match=note.hash,
            )
        else:
            plan.change = Update(
                note.path,
                {**record, "status": "awaiting_approval", "draft": plan.draft.path},
                remove=waited,
                if_match=note.hash,
            )
    elif decision.decision == "archive":
        cleared = dict.fromkeys(waited)  # a move can only set keys: the wait's are emptied
        plan.change = Move(
            note.path, f"{DONE}/", rename_if_exists=True, set_frontmatter={**record, **cleared, "status": "done"}
        )
    elif decision.decision == "delegate":
        whom = decision.delegate_to or "someone else"
        plan.draft, problem = forward_draft(note, whom, decision.reasoning, drafting)
        forwarded = f"\n> Forward draft: [[{plan.draft.path.rsplit('/', 1)[-1][:-3]}]]" if plan.draft else ""
        appended = (
            note.body.rstrip("\n")
            + f"\n\n> [!note] H0: delegate to {inert_inline(whom)}\n> {inert_inline(decision.reasoning)}{forwarded}\n"
        )
        unwaited = {k: v for k, v in note.frontmatter.items() if k not in waited}
        extra = {"draft": plan.draft.path} if plan.draft else {"problem": problem}
        plan.change = Write(
            note.path,
            {**unwaited, **record, "status": "delegated", "delegate_to": whom, **extra},
            appended,
            if_match=note.hash,
        )
    else:
        plan.change = Update(note.path, {**record, "status": "needs_info"}, remove=waited, if_match=note.hash)
    return plan


def plan_reply(note: Note, ctx: HandlerContext, triager: EmailTriager, drafting: Drafting | None) -> Plan:
    """What triage would decide for this email and the reply draft it would write, with nothing
    written (`h0 eval` drafts the owner's past mail again this way)."""
    return plan_email(note, [], ctx, triager, drafting)
