"""Triage a `Needs_Action/` email note and apply the decision (ARCHITECTURE.md's state machine).

    draft_reply → Drafts/REPLY_<name>.md (status: pending_approval); email: awaiting_approval
    urgent      → the same, with priority: urgent
    archive     → email to Done/ (status: done, decision: archive)
    needs_info  → email stays, status: needs_info
    delegate    → email stays, status: delegated, a delegation note appended to the body

Triage sees the conversation, not one message: the earlier emails and sent replies of the
email's thread, as the vault holds them (h0.handlers.thread), go to the triager with it. A
draft for an email its thread has already moved past (a later email is in the vault) is
written `stale: true`, as ingest marks a waiting draft when a reply arrives.

Only notes with `status: pending` (or none) are triaged, and every branch changes that
status, so H0's own writes never trigger a second triage. The draft is written first and
created only if absent: after a crash between "draft written" and "email updated", the
next pass finds the draft and re-uses it instead of writing a second one (or overwriting
the human's edits).

The email's words stay data in the draft: the subject is cleaned of control characters
(h0.mail.headers), the drafted reply fetches nothing when opened and never carries H0's
cut-off line (h0.mail.htmltext.disarm_reply), and anything quoted below the cut-off is
escaped. A reply to a sender whose domain failed DMARC (the email note's `auth.dmarc`)
says so: `warning:` in the draft's frontmatter and a callout below the cut-off, never in
the text that is sent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import getaddresses, parseaddr
from typing import Any

from loguru import logger

from h0.drafting import DraftContext, Drafting
from h0.drafting.grounding import clean_reply, grounding, notes_section
from h0.drafting.learning import LEARN_KEY, TEXT_HASH_KEY, text_hash, written_record
from h0.drafting.revise import REVISE_HINT
from h0.errors import Conflict, H0Error, NotFound, ParseError
from h0.followup.threads import owner_addresses
from h0.handlers.context import HandlerContext, Outcome
from h0.handlers.thread import ThreadNote, conversation, later_emails, threads_of
from h0.mail.drafts import CUTOFF, NEXT_STEP
from h0.mail.headers import clean_address_header, clean_header_text
from h0.mail.htmltext import block_text, defuse_cutoff, disarm_reply, inert_inline
from h0.vault import Moved, Note
from h0.vault.api import Change, Move, Update, Write
from h0.vault.audit import note_timestamp
from h0.vault.layout import DONE, DRAFTS

TRIAGE_STATUSES = {"", "pending"}
_RE_PREFIX = re.compile(r"^\s*((re|aw|sv|antw|r)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
DMARC_WARNING = (
    "The sender's domain failed DMARC: this email may not come from who it claims to be. "
    "Check the sender another way before replying or acting on it."
)


def reply_subject(subject: str) -> str:
    """'Re: ' + the subject, without doubling an existing Re:/AW:/SV: prefix.

    The subject is cleaned first (control characters removed, encoded words decoded): a
    stranger's subject is copied into a message the human will send.
    """
    stripped = _RE_PREFIX.sub("", defuse_cutoff(clean_header_text(subject or ""))).strip()
    return f"Re: {stripped}" if stripped else "Re: (no subject)"


def sender_warning(frontmatter: dict[str, Any]) -> str | None:
    """The warning a reply to this email carries, or None: DMARC failed for the sender's domain."""
    auth = frontmatter.get("auth")
    if isinstance(auth, dict) and str(auth.get("dmarc") or "").strip().lower() == "fail":
        return DMARC_WARNING
    return None


def reply_recipient(frontmatter: dict[str, Any]) -> str | None:
    """Reply-To if the email had one, else From — the bare address."""
    for field in ("reply_to", "from"):
        value = frontmatter.get(field)
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        if isinstance(value, str) and value.strip():
            value = clean_address_header(value)
            addresses = [addr for _, addr in getaddresses([value]) if "@" in addr]
            if addresses:
                return addresses[0]
            _name, addr = parseaddr(value)
            if "@" in addr:
                return addr
    return None


def triage_email(path: str, ctx: HandlerContext) -> Outcome:
    """Triage one email note (`triage_emails` with a batch of one)."""
    result = triage_emails([path], ctx)[path]
    if isinstance(result, Exception):
        raise result
    return result


@dataclass(slots=True)
class _Plan:
    """What triage decided for one email, and the changes that carry it out."""

    note: Note
    outcome: Any  # h0.triage's TriageOutcome
    record: dict[str, Any]
    draft: Write | None = None  # Drafts/REPLY_<name>.md, created only if absent
    change: Change | None = None  # to the email note itself
    result: Outcome | Exception | None = None
    written: dict[str, Any] | None = None  # the draft's text and grounding, for Logs/drafting_*.jsonl


def triage_emails(paths: Sequence[str], ctx: HandlerContext) -> dict[str, Outcome | Exception]:
    """Triage a batch of email notes: one batch read, one thread look-up for all of them, the
    decisions, then the drafts in one batch of changes and the emails' updates in a second.

    The order is the single note's: a draft exists before its email says `awaiting_approval`,
    and an email whose draft could not be written is left untouched (its error is its result,
    and the pipeline retries it). Each path maps to its Outcome, or to the exception that
    stopped it; one note's trouble never stops the others.
    """
    results: dict[str, Outcome | Exception] = {}
    pending: list[Note] = []
    for path, got in zip(paths, ctx.notes.read_many(paths), strict=True):
        if isinstance(got, NotFound):
            results[path] = Outcome("gone")
        elif isinstance(got, ParseError):
            ctx.report(path, "read_error", "corrupt", got.message, **ctx.error_fields(got))
            results[path] = Outcome("waiting", "corrupt frontmatter")
        elif isinstance(got, H0Error):
            results[path] = got
        elif str(got.frontmatter.get("status") or "").strip().lower() not in TRIAGE_STATUSES:
            results[path] = Outcome("skipped", "already triaged")
        else:
            pending.append(got)
    threads = _threads(pending, ctx)
    drafting = _drafting(ctx)
    plans = []
    for note in pending:
        try:
            plans.append(_plan(note, threads.get(note.path, []), ctx, drafting))
        except Exception as exc:  # noqa: BLE001 - a triager failing on one email must not stop the batch
            results[note.path] = exc
    _apply_plans(plans, ctx)
    decisions: list[tuple[str, dict[str, Any]]] = []  # the batch's audit lines, appended at once
    written: list[tuple[str, dict[str, Any]]] = []  # what H0 wrote in each draft (Logs/drafting_*.jsonl)
    for plan in plans:
        results[plan.note.path] = plan.result if plan.result is not None else _decided(plan, decisions)
        if plan.result is None and plan.draft is not None and plan.written is not None:
            written.append(("draft_written", plan.written))
    ctx.audit.write_many(decisions)
    if drafting is not None and written:
        try:
            drafting.log.write_many(written)
        except H0Error as error:
            logger.warning("could not record the drafts' text for learning: {}", error.message)
    return results


def _drafting(ctx: HandlerContext) -> Drafting | None:
    """The vault's drafting state, or None (then drafts are written without the owner's context)."""
    if ctx.drafting is not None:
        return ctx.drafting
    try:
        ctx.drafting = Drafting.for_settings(ctx.settings, ctx.paths.root)
    except Exception as exc:  # noqa: BLE001 - settings without the drafting fields (a test's stub): no context
        logger.debug("drafting context unavailable: {}", exc)
        return None
    return ctx.drafting


def _threads(notes: list[Note], ctx: HandlerContext) -> dict[str, list[ThreadNote]]:
    """Each email's thread (the vault's other notes with its thread_id), all found in one look-up;
    when the look-up fails the emails are triaged on their own."""
    ids = {str(n.frontmatter["thread_id"]) for n in notes if n.frontmatter.get("thread_id")}
    if not ids:
        return {}
    try:
        threads = threads_of(ctx, ids, known=notes)
    except H0Error as error:
        logger.warning("the threads of {} email(s) could not be read ({}); triaged on their own", len(notes),
                       error.message)
        return {}
    return {n.path: [t for t in threads.get(str(n.frontmatter.get("thread_id") or ""), []) if t.note.path != n.path]
            for n in notes}


def _plan(note: Note, thread: list[ThreadNote], ctx: HandlerContext, drafting: Drafting | None = None) -> _Plan:
    from h0.triage.models import EarlierMessage, EmailInput

    # The email's words, not the code block that keeps them inert in Obsidian; and the conversation before it.
    text = block_text(note.body)
    email = EmailInput.from_note(note.frontmatter, text)
    if thread:
        email = email.model_copy(update={"conversation": [
            EarlierMessage(**entry) for entry in conversation(thread, note.frontmatter.get("received"))]})
    to = reply_recipient(note.frontmatter)
    context: DraftContext | None = None
    if drafting is not None and getattr(ctx.triager, "llm", None) is not None:
        # A model decides with the owner's notes in view (no extra call: they travel in the one prompt).
        context = drafting.context_for_email(note.frontmatter, text, to)
        outcome = ctx.triager.triage(email, context.reply_context())
    elif drafting is not None:
        # Rules: the template needs only the greeting and sign-off; the rest is looked up for a draft alone.
        outcome = ctx.triager.triage(email, drafting.voice_context(to, str(note.frontmatter.get("from") or "")))
        if outcome.decision.decision in ("draft_reply", "urgent"):
            context = drafting.context_for_email(note.frontmatter, text, to)
    else:
        outcome = ctx.triager.triage(email)
    decision = outcome.decision
    record = {
        "decision": decision.decision,
        "confidence": round(float(decision.confidence), 3),
        "reasoning": decision.reasoning,
        "triaged_at": note_timestamp(),
        "triaged_by": outcome.provider if not outcome.fallback else f"{outcome.provider} → rules (fallback)",
    }
    plan = _Plan(note, outcome, record)
    if decision.decision in ("draft_reply", "urgent"):
        newer = later_emails(thread, note.frontmatter.get("received"))
        by_model = outcome.provider != "rules" and not outcome.fallback
        plan.draft, plan.written = _draft(note, decision, newer[-1] if newer else None, context, by_model,
                                          outcome.provider if by_model else "rules",
                                          owner=owner_addresses(ctx.settings))
        if plan.draft is None:
            record["decision"] = "needs_info"
            plan.change = Update(note.path, {**record, "status": "needs_info", "problem": "no address to reply to"},
                                 if_match=note.hash)
        else:
            plan.change = Update(note.path, {**record, "status": "awaiting_approval", "draft": plan.draft.path},
                                 if_match=note.hash)
    elif decision.decision == "archive":
        plan.change = Move(note.path, f"{DONE}/", rename_if_exists=True, set_frontmatter={**record, "status": "done"})
    elif decision.decision == "delegate":
        whom = decision.delegate_to or "someone else"
        appended = (note.body.rstrip("\n")
                    + f"\n\n> [!note] H0: delegate to {inert_inline(whom)}\n> {inert_inline(decision.reasoning)}\n")
        plan.change = Write(note.path, {**note.frontmatter, **record, "status": "delegated", "delegate_to": whom},
                            appended, if_match=note.hash)
    else:
        plan.change = Update(note.path, {**record, "status": "needs_info"}, if_match=note.hash)
    return plan


def _apply_plans(plans: list[_Plan], ctx: HandlerContext) -> None:
    """Drafts first (one batch), then the emails' own changes (a second), each result checked.

    A draft that exists already was written by a pass that stopped before updating its email:
    it is kept (never a second draft, never over the human's edits). An email the human edited
    since it was read gets the single note's treatment: its keys merged on the fresh note."""
    drafted = [p for p in plans if p.draft is not None]
    for plan, result in zip(drafted, ctx.notes.apply([p.draft for p in drafted if p.draft is not None]) if drafted else [], strict=True):
        if isinstance(result, Exception) and not isinstance(result, Conflict):
            plan.result = result
    ready = [p for p in plans if p.result is None and p.change is not None]
    for plan, result in zip(ready, ctx.notes.apply([p.change for p in ready if p.change is not None]) if ready else [], strict=True):
        if isinstance(result, Conflict):
            try:
                _again(plan, ctx)
            except Exception as exc:  # noqa: BLE001 - this note's failure is its result, retried by the pipeline
                plan.result = exc
        elif isinstance(result, Moved):
            plan.record["done_path"] = result.destination
        elif isinstance(result, Exception):
            plan.result = result


def _again(plan: _Plan, ctx: HandlerContext) -> None:
    """The email changed between the read and the change: apply the decision to it as it is now."""
    change = plan.change
    if isinstance(change, Update):
        ctx.notes.update(change.path, change.set)
    elif isinstance(change, Write):  # delegate: the decision recorded, the body left as the human has it now
        fresh = ctx.notes.read(change.path)
        ctx.notes.write(change.path, {**fresh.frontmatter, **plan.record, "status": "delegated",
                                      "delegate_to": change.frontmatter["delegate_to"]}, fresh.body, if_match=fresh.hash)
    else:
        raise Conflict(f"{plan.note.path} changed while it was being filed.", path=plan.note.path)


def _decided(plan: _Plan, decisions: list[tuple[str, dict[str, Any]]]) -> Outcome:
    """The decision carried out: its audit line (added to `decisions`), its log line, its Outcome."""
    path, record, outcome = plan.note.path, plan.record, plan.outcome
    decision = outcome.decision
    draft_path = plan.draft.path if plan.draft is not None else None
    done_path = record.pop("done_path", None)
    fm = plan.note.frontmatter
    decisions.append(("triage_decision", {
        "note": path,
        # Who and what, for the briefing: a note written by hand has no sender, and its title stands in.
        "sender": inert_inline(clean_header_text(str(fm.get("from") or "")))[:200] or None,
        "subject": inert_inline(clean_header_text(str(fm.get("subject") or "")))[:200] or _title(plan.note),
        "decision": record["decision"],
        "confidence": record["confidence"],
        "reasoning": decision.reasoning,
        "provider": outcome.provider,
        "model": outcome.model,
        "latency_ms": round(outcome.latency_ms, 2),
        "fallback": outcome.fallback or None,
        "fallback_reason": outcome.fallback_reason,
        "rule": outcome.rule,
        "draft": draft_path,
        "warnings": outcome.warnings or None,
    }))
    for warning in outcome.warnings:
        logger.warning("{}: {}", path, warning)
    where = f" → {draft_path}" if draft_path else (f" → {done_path}" if done_path else "")
    logger.info("☐ triaged {}: {} ({:.0%}){}", path, record["decision"], record["confidence"], where)
    data = {"decision": record["decision"], "confidence": record["confidence"], "draft_path": draft_path}
    return Outcome("triaged", record["decision"], data=data)


def _title(note: Note) -> str:
    """A note's title as a person reads it: its first heading or line of text, else its file name."""
    for line in block_text(note.body).splitlines():
        text = line.strip().lstrip("#").strip()
        if text and not text.startswith(("```", "~~~", "---")):
            return inert_inline(text)[:120]
    return note.path.rsplit("/", 1)[-1].removesuffix(".md")


def reply_all(frontmatter: dict[str, Any], to: str, owner: frozenset[str]) -> tuple[list[str], str]:
    """Who else was on the email and gets the reply (Cc), and the sentence saying so.

    Everyone in its To and Cc but the sender and the owner (OWNER_EMAILS, SMTP_FROM, …). When H0
    does not know the owner's addresses, the To line may be the owner's own: only its Cc is kept."""
    def addresses(field: str) -> list[str]:
        value = frontmatter.get(field)
        items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        return [addr for _, addr in getaddresses([clean_address_header(str(v)) for v in items]) if "@" in addr]

    fields = ("to", "cc") if owner else ("cc",)
    skip = {to.lower(), *owner}
    cc = list(dict.fromkeys(a for field in fields for a in addresses(field) if a.lower() not in skip))
    if not cc:
        return [], ""
    note = f"Replying to all: Cc {', '.join(cc)} (everyone else who was on the email"
    note += ", but you)." if owner else "; set OWNER_EMAILS so H0 knows your own addresses and keeps the To line too)."
    return cc, note


def _draft(note: Note, decision: Any, newer: ThreadNote | None = None, context: DraftContext | None = None,
           by_model: bool = False, drafted_by: str = "rules",
           owner: frozenset[str] = frozenset()) -> tuple[Write | None, dict[str, Any] | None]:
    """The reply draft for this email (created only if absent) and the record of what H0 wrote in it;
    (None, None) when there is no address to reply to."""
    fm = note.frontmatter
    to = reply_recipient(fm)
    if to is None:
        return None, None
    cc, all_note = reply_all(fm, to, owner)
    name = note.path.rsplit("/", 1)[-1]
    draft_path = f"{DRAFTS}/REPLY_{name}"
    draft_fm: dict[str, Any] = {
        "to": to,
        "subject": reply_subject(str(fm.get("subject") or "")),
        "status": "pending_approval",
        "draft_id": f"REPLY_{name[:-3]}",
        "source": note.path,
        "drafted_at": note_timestamp(),
    }
    if cc:
        draft_fm["cc"] = ", ".join(cc)
    if fm.get("message_id"):
        draft_fm["reply_to_message_id"] = str(fm["message_id"])
    if fm.get("thread_id"):
        draft_fm["thread_id"] = str(fm["thread_id"])
    if decision.decision == "urgent":
        draft_fm["priority"] = "urgent"
    if newer is not None:  # the thread already moved on past this email: the draft is out of date from the start
        draft_fm["stale"] = True
        draft_fm["stale_reason"] = (f"{inert_inline(str(newer.note.frontmatter.get('from') or 'someone'))} wrote again "
                                    f"in this thread ({newer.link}) after the email this draft answers: read it, "
                                    "edit the reply, and set `send_anyway: true` to send it anyway")
        draft_fm["stale_since"] = newer.link
    warning = sender_warning(fm)
    if warning:
        draft_fm["warning"] = warning
    draft_fm["decision"] = decision.decision
    draft_fm["confidence"] = round(float(decision.confidence), 3)
    cleaned = clean_reply(disarm_reply((decision.reply_body or "").strip()))
    reply = cleaned.text or "[H0 draft — write your reply here before approving]"
    found = grounding(context, cleaned, decision.sources, decision.questions, by_model=by_model)
    draft_fm["drafted_by"] = drafted_by
    draft_fm[TEXT_HASH_KEY] = text_hash(reply)
    draft_fm[LEARN_KEY] = "pending"
    link = name[:-3]  # by name: the link survives the email moving to Done/
    body = (
        f"{reply}\n\n{CUTOFF}\n"
        + (f"> [!warning] H0: {warning}\n\n" if warning else "")
        + f"Replying to [[{link}]] — H0's reasoning: {inert_inline(decision.reasoning)}\n"
        + (f"{inert_inline(all_note)}\n" if all_note else "")
        + f"{NEXT_STEP}\n"
        + (f"\n{section}" if (section := notes_section(found)) else "")
        + f"\n{REVISE_HINT}\n"
    )
    written = written_record(draft_path, draft_fm["draft_id"], reply, drafted_by,
                             [i.label for i in found.used] or [i.label for i in found.given], found.questions)
    return Write(draft_path, draft_fm, body, create_only=True), written
