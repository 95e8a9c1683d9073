"""Triage a `Needs_Action/` email note and apply the decision (ARCHITECTURE.md's state machine).

    draft_reply → Drafts/REPLY_<name>.md (status: pending_approval); email: awaiting_approval
    urgent      → the same, with priority: urgent
    archive     → email to Done/ (status: done, decision: archive)
    needs_info  → email stays, status: needs_info
    delegate    → email stays, status: delegated, a delegation note appended to the body, and a
                  forward draft to the colleague in Drafts/FWD_<name>.md (h0.handlers.forward)

Triage sees the conversation, not one message: the earlier emails and sent replies of the
email's thread, as the vault holds them (h0.handlers.thread), go to the triager with it — never a
private one (h0.vault.disclosure). An email that is private itself (its marks, a private person's
mail), or of a private thread (a stranger writing into it included), is decided by the local rules alone: no model sees it, its
thread or the owner's notes. A draft for an email its thread has already moved past (a later
email is in the vault) is written `stale: true`, as ingest marks a waiting draft when a reply
arrives.

Only notes with `status: pending` (or none) are triaged, and every branch changes that
status, so H0's own writes never trigger a second triage. The draft is written first and
created only if absent: after a crash between "draft written" and "email updated", the
next pass finds the draft and re-uses it instead of writing a second one (or overwriting
the human's edits).

The draft itself — recipients, subject, warnings, text — is h0.handlers.reply's. An email whose
model could not answer now (down, timed out, refusing) stays pending with the reason on it and
is retried with the work queue's backoff, up to a cap (h0.handlers.llmwait).

Whatever the decider said, an email suspected of an attack (h0.triage.phishing: a look-alike of a
domain the owner knows, a known name on a stranger's address, a forged known sender, a credential
request, a payment-detail change) gets no reply draft: it stays for the owner (`needs_info`) with
`suspected_phishing: true`, its kind, the domain it resembles and the reason (h0.vault.suspicion;
`problem:`, which `h0 status` and the dashboard show).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from loguru import logger

from h0.drafting import Drafting
from h0.errors import Conflict, H0Error, NotFound, ParseError
from h0.handlers.context import EmailTriager, HandlerContext
from h0.handlers.followup.record import mark_triaged
from h0.handlers.llmwait import WAITING_DETAIL, not_due_for
from h0.handlers.outcome import Action, Outcome, OutcomeData
from h0.handlers.suspect import known_people
from h0.handlers.thread import ThreadNote, private_notes, threads_of
from h0.handlers.triage_plan import Plan, local_rules, plan_email
from h0.mail.headers import clean_header_text
from h0.mail.incoming.htmltext import block_text, inert_inline
from h0.vault import Moved, Note
from h0.vault.api import Update, Write
from h0.vault.model import NoteFacts, note_facts

TRIAGE_STATUSES = {"", "pending"}


def needs_triage(facts: NoteFacts) -> bool:
    """True for an email note triage has not decided yet (`status: pending`, or none): the one
    test the handler, the sweep and the pipeline's cheap look before a batch all use."""
    return facts.status.word in TRIAGE_STATUSES


def triage_email(path: str, ctx: HandlerContext) -> Outcome:
    """Triage one email note (`triage_emails` with a batch of one)."""
    result = triage_emails([path], ctx)[path]
    if isinstance(result, Exception):
        raise result
    return result


def triage_emails(
    paths: Sequence[str], ctx: HandlerContext, read: Mapping[str, Note] | None = None
) -> dict[str, Outcome | Exception]:
    """Triage a batch of email notes: one batch read, one thread look-up for all of them, the
    decisions, then the drafts in one batch of changes and the emails' updates in a second.

    `read`: notes the caller has just read from disk for this batch (the pipeline's look before a
    batch): they are not read a second time. Each is bound to its bytes by its hash, which guards
    every write triage makes to it, so an edit made since is a Conflict, never overwritten.

    The order is the single note's: a draft exists before its email says `awaiting_approval`,
    and an email whose draft could not be written is left untouched (its error is its result,
    and the pipeline retries it). Each path maps to its Outcome, or to the exception that
    stopped it; one note's trouble never stops the others. Without a triager, nothing is triaged.
    """
    triager = ctx.triager
    if triager is None:
        return {path: Outcome(Action.SKIPPED, "triage is off") for path in paths}
    results: dict[str, Outcome | Exception] = {}
    pending: list[Note] = []
    now = dt.datetime.now(dt.UTC)
    for path, got in zip(paths, _read(paths, ctx, read or {}), strict=True):
        if isinstance(got, NotFound):
            results[path] = Outcome(Action.GONE)
        elif isinstance(got, ParseError):
            ctx.report(path, "read_error", "corrupt", got.message, **ctx.error_fields(got))
            results[path] = Outcome(Action.WAITING, "corrupt frontmatter")
        elif isinstance(got, H0Error):
            results[path] = got
        elif not needs_triage(got.facts):
            results[path] = Outcome(Action.SKIPPED, "already triaged")
        elif (due_in := not_due_for(got.facts, now)) is not None:
            # Waiting for the model, and asked to look sooner (H0's own write, the sweep): not yet.
            results[path] = Outcome(Action.WAITING, WAITING_DETAIL, retry_in=due_in)
        else:
            pending.append(got)
    threads = _threads(pending, ctx)
    drafting = _drafting(ctx)
    with drafting.looked_once() if drafting is not None and pending else contextlib.nullcontext():
        plans = _plans(pending, threads, ctx, triager, drafting, results)
    _apply_plans(plans, ctx)
    mark_triaged(ctx, [p.note.facts for p in plans if p.result is None])  # owed: whichever pass ran first
    decisions: list[tuple[str, dict[str, Any]]] = []  # the batch's audit lines, appended at once
    written: list[tuple[str, dict[str, Any]]] = []  # what H0 wrote in each draft (Logs/drafting_*.jsonl)
    for plan in plans:
        if plan.result is None and plan.deferred is not None:
            results[plan.note.path] = plan.deferred
            continue
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


def _plans(
    pending: list[Note],
    threads: dict[str, list[ThreadNote]],
    ctx: HandlerContext,
    triager: EmailTriager,
    drafting: Drafting | None,
    results: dict[str, Outcome | Exception],
) -> list[Plan]:
    """Each pending email's decision and the changes it makes (nothing written yet); an email the
    triager failed on, or one not reached because H0 is stopping, gets its result instead."""
    known = known_people(ctx, drafting) if pending else None
    # Private itself, or of a private thread (a private note sharing a key of it anywhere in the vault).
    private = private_notes(ctx, [*pending, *(t.note for thread in threads.values() for t in thread)])
    plans = []
    for note in pending:
        if ctx.stopping.is_set():  # SIGTERM: the notes not reached are triaged at the next start
            results[note.path] = Outcome(Action.WAITING, "H0 is stopping")
            continue
        try:
            thread = threads.get(note.path, [])
            if private(note):
                plans.append(plan_email(note, [], ctx, local_rules(triager), None, private=True, known=known))
                continue
            shown = [t for t in thread if not private(t.note)]
            plans.append(plan_email(note, shown, ctx, triager, drafting, known=known))
        except Exception as exc:  # noqa: BLE001 - a triager failing on one email must not stop the batch
            results[note.path] = exc
    return plans


def _read(paths: Sequence[str], ctx: HandlerContext, known: Mapping[str, Note]) -> list[Note | H0Error]:
    """Each path's note: the caller's read where it has one, the others in one batch read."""
    missing = [path for path in paths if path not in known]
    fresh = dict(zip(missing, ctx.notes.read_many(missing), strict=True)) if missing else {}
    return [known[path] if path in known else fresh[path] for path in paths]


def _drafting(ctx: HandlerContext) -> Drafting | None:
    """The vault's drafting state, or None (then drafts are written without the owner's context)."""
    try:
        return ctx.drafting_state()
    except Exception as exc:  # noqa: BLE001 - settings without the drafting fields (a test's stub): no context
        logger.debug("drafting context unavailable: {}", exc)
        return None


def _threads(notes: list[Note], ctx: HandlerContext) -> dict[str, list[ThreadNote]]:
    """Each email's thread (the vault's other notes with its thread_id), all found in one look-up;
    when the look-up fails the emails are triaged on their own."""
    ids = {n.facts.thread_id for n in notes if n.facts.thread_id}
    if not ids:
        return {}
    try:
        threads = threads_of(ctx, ids, known=notes)
    except H0Error as error:
        logger.warning(
            "the threads of {} email(s) could not be read ({}); triaged on their own", len(notes), error.message
        )
        return {}
    return {n.path: [t for t in threads.get(n.facts.thread_id or "", []) if t.note.path != n.path] for n in notes}


def _apply_plans(plans: list[Plan], ctx: HandlerContext) -> None:
    """Drafts first (one batch), then the emails' own changes (a second), each result checked.

    A draft that exists already was written by a pass that stopped before updating its email:
    it is kept (never a second draft, never over the human's edits). An email the human edited
    since it was read gets the single note's treatment: its keys merged on the fresh note."""
    drafted = [p for p in plans if p.draft is not None]
    for plan, result in zip(
        drafted, ctx.notes.apply([p.draft for p in drafted if p.draft is not None]) if drafted else [], strict=True
    ):
        if isinstance(result, Exception) and not isinstance(result, Conflict):
            plan.result = result
    ready = [p for p in plans if p.result is None and p.change is not None]
    for plan, result in zip(
        ready, ctx.notes.apply([p.change for p in ready if p.change is not None]) if ready else [], strict=True
    ):
        if isinstance(result, Conflict):
            try:
                _again(plan, ctx)
            except Exception as exc:  # noqa: BLE001 - this note's failure is its result, retried by the pipeline
                plan.result = exc
        elif isinstance(result, Moved):
            plan.record["done_path"] = result.destination
        elif isinstance(result, Exception):
            plan.result = result


def _again(plan: Plan, ctx: HandlerContext) -> None:
    """The email changed between the read and the change: apply the decision to it as it is now."""
    change = plan.change
    if isinstance(change, Update):
        ctx.notes.update(change.path, change.set, remove=change.remove)
    elif isinstance(change, Write):  # delegate: the decision recorded, the body left as the human has it now
        fresh = ctx.notes.read(change.path)
        ctx.notes.write(
            change.path,
            {
                **fresh.frontmatter,
                **plan.record,
                "status": "delegated",
                "delegate_to": note_facts(change.path, change.frontmatter).triage.delegate_to,
            },
            fresh.body,
            if_match=fresh.hash,
        )
    else:
        raise Conflict(f"{plan.note.path} changed while it was being filed.", path=plan.note.path)


def _decided(plan: Plan, decisions: list[tuple[str, dict[str, Any]]]) -> Outcome:
    """The decision carried out: its audit line (added to `decisions`), its log line, its Outcome."""
    path, record, outcome = plan.note.path, plan.record, plan.outcome
    decision = outcome.decision
    draft_path = plan.draft.path if plan.draft is not None else None
    done_path = record.pop("done_path", None)
    facts = plan.note.facts
    decisions.append(
        (
            "triage_decision",
            {
                "note": path,
                # Who and what, for the briefing: a note written by hand has no sender, and its title stands in.
                "sender": inert_inline(clean_header_text(facts.sender_text))[:200] or None,
                "subject": inert_inline(clean_header_text(facts.subject))[:200] or _title(plan.note),
                "decision": record["decision"],
                "confidence": record["confidence"],
                "reasoning": decision.reasoning,
                "provider": outcome.provider,
                "model": outcome.model,
                "latency_ms": round(outcome.latency_ms, 2),
                "model_calls": outcome.attempts if outcome.provider != "rules" else None,
                "fallback": outcome.fallback or None,
                "fallback_reason": outcome.fallback_reason,
                "rule": outcome.rule,
                "draft": draft_path,
                "warnings": outcome.warnings or None,
            },
        )
    )
    for warning in outcome.warnings:
        logger.warning("{}: {}", path, warning)
    where = f" → {draft_path}" if draft_path else (f" → {done_path}" if done_path else "")
    logger.info("☐ triaged {}: {} ({:.0%}){}", path, record["decision"], record["confidence"], where)
    data: OutcomeData = {"decision": record["decision"], "confidence": record["confidence"], "draft_path": draft_path}
    return Outcome(Action.TRIAGED, record["decision"], data=data)


def _title(note: Note) -> str:
    """A note's title as a person reads it: its first heading or line of text, else its file name."""
    for line in block_text(note.body).splitlines():
        text = line.strip().lstrip("#").strip()
        if text and not text.startswith(("```", "~~~", "---")):
            return inert_inline(text)[:120]
    return note.path.rsplit("/", 1)[-1].removesuffix(".md")
