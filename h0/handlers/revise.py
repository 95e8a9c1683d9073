"""Revise a draft in Drafts/ that asks for it (`h0: shorter, offer Friday instead`): h0.drafting.revise.

Level-triggered like every handler: the draft is re-read, and acted on only when it is in
Drafts/, still awaits sending, carries an instruction and has been left alone for
REVISE_SETTLE_SECONDS (an instruction still being typed is not acted on). The rewrite is
written with the hash the draft was read with, so an edit made meanwhile is never lost (the
revision waits and is tried on the new text). Recipients, subject and thread are written back
exactly as read: whoever wrote the instruction, a revision changes only the text. A model that
is down, slow or refusing leaves the instruction in place and the reason on the draft
(`h0_waiting:`), and the work queue asks again after its backoff, up to the same cap as triage.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import time

from loguru import logger

from h0.drafting.revise import email_for, revision_request, rewrite
from h0.errors import Conflict, H0Error, InternalError
from h0.handlers.context import HandlerContext
from h0.handlers.llmwait import WAITING_DETAIL, gave_up, not_due_for, wait_for_model
from h0.handlers.outcome import Action, Outcome
from h0.handlers.thread import private_in_thread
from h0.vault.marks import WAIT_KEYS
from h0.vault.sendable import message_changes


def revise_draft(path: str, ctx: HandlerContext) -> Outcome:
    note = ctx.read_draft(path, "revisions happen in Drafts/ only")
    if isinstance(note, Outcome):
        return note
    instruction = revision_request(note.facts, note.body)
    if instruction is None:
        return Outcome(Action.SKIPPED, "no revision asked")
    if not note.facts.status.sendable:
        return Outcome(Action.SKIPPED, "the draft is no longer waiting (sent, rejected or withdrawn)")
    now = dt.datetime.now(dt.UTC)
    if (due_in := not_due_for(note.facts, now)) is not None:
        return Outcome(Action.WAITING, WAITING_DETAIL, retry_in=due_in)  # the model was down: not yet
    quiet = ctx.settings.revise_settle_seconds
    age = _age(ctx, path)
    if age is not None and age < quiet:
        return Outcome(Action.WAITING, "the instruction may still be being typed", retry_in=quiet - age + 0.05)
    drafting = ctx.drafting_state()
    llm = getattr(ctx.triager, "llm", None)
    started = time.perf_counter()
    email = email_for(ctx.notes.notes, note.facts)
    rewritten = rewrite(
        path,
        note.frontmatter,
        note.body,
        instruction,
        drafting=drafting,
        llm=llm,
        email=email,
        private=private_in_thread(
            ctx, path, note.frontmatter, [(note.facts.source or "", email[0])] if email else (), body=note.body
        ),
    )
    if rewritten.waiting is not None and gave_up(note.facts, rewritten.waiting, ctx.settings, now) is None:
        # The model is down, slow or refusing: the instruction stays, the reason goes on the draft,
        # and the work queue asks again after its backoff (h0.handlers.llmwait).
        change, waiting = wait_for_model(
            note, rewritten.waiting, rewritten.retry_after, ctx, now, "revision_deferred", "the instruction stays"
        )
        try:
            ctx.notes.update(change.path, change.set, if_match=change.if_match)
        except Conflict:
            return Outcome(Action.WAITING, "the draft changed while H0 asked the model", retry_in=quiet)
        return waiting
    rewritten = dataclasses.replace(
        rewritten, frontmatter={k: v for k, v in rewritten.frontmatter.items() if k not in WAIT_KEYS}
    )
    changed = message_changes(note, rewritten.frontmatter)
    if changed:  # cannot happen by construction; checked because recipients are what a revision must never touch
        raise InternalError(
            f"A revision of {path} would have changed {', '.join(changed)}; nothing was written.", path=path
        )
    try:
        ctx.notes.write(path, rewritten.frontmatter, rewritten.body, if_match=note.hash)
    except Conflict:
        return Outcome(Action.WAITING, "the draft changed while H0 rewrote it", retry_in=quiet)
    event = "draft_revised" if rewritten.revised else "draft_not_revised"
    elapsed = round((time.perf_counter() - started) * 1000, 1)
    try:
        drafting.log.write(event, **rewritten.record)
    except H0Error as error:
        logger.warning("could not record the revision of {}: {}", path, error.message)
    ctx.audit.write(event, path=path, instruction=instruction, elapsed_ms=elapsed)
    if rewritten.revised:
        logger.info("✎ revised {} as asked (“{}”, {} ms)", path, instruction[:80], elapsed)
        return Outcome(Action.REVISED, instruction, data={"elapsed_ms": elapsed})
    logger.info("✎ {}: not revised — {}", path, rewritten.record.get("reason"))
    return Outcome(Action.NOT_REVISED, str(rewritten.record.get("reason") or ""))


def _age(ctx: HandlerContext, path: str) -> float | None:
    """Seconds since the draft's file last changed (None when it cannot be told)."""
    try:
        return max(0.0, time.time() - os.stat(ctx.paths.root / path).st_mtime)
    except OSError:
        return None
