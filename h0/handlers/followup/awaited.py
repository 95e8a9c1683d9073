"""Replies awaited: the owner's message that asked something and got no answer becomes a FOLLOWUP note in
Needs_Action/ with a follow-up draft; the answer (or `awaiting: false`, or the owner writing again) files the
note in Done/ and withdraws the draft if it is still in Drafts/."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loguru import logger

from h0.errors import Conflict, NotFound
from h0.followup.asks import LlmJudge, judge_for
from h0.followup.ledger import ThreadRow
from h0.followup.nudge import NudgeRequest, follow_up_text
from h0.followup.threads import Assessment, Message, display_names
from h0.followup.workdays import add_working_days
from h0.handlers.context import HandlerContext
from h0.handlers.followup.pass_report import FollowupReport, day, days_to_wait
from h0.handlers.reply import draft_head, reply_subject
from h0.handlers.thread import private_in_thread
from h0.mail.incoming.htmltext import inert_inline
from h0.vault.audit import epoch_timestamp
from h0.vault.layout import DONE, DRAFTS, NEEDS_ACTION
from h0.vault.sendable import CUTOFF

OPEN_FOLLOW_UP = "awaiting_reply"
_SAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 80
MAX_LINKS = 10  # notes of the thread linked from a follow-up note (the latest)


def awaited(
    ctx: HandlerContext, row: ThreadRow, a: Assessment, messages: list[Message], now: float, report: FollowupReport
) -> list[float]:
    mine = a.awaited
    if row.state == "awaited" and (mine is None or mine.key != row.anchor):
        close_followup(ctx, row, a, now, report)
    if mine is None:
        return []
    if row.state == "awaited" and row.anchor == mine.key:
        return []
    due = add_working_days(mine.at, days_to_wait(ctx))
    if due > now:
        return [due]
    open_followup(ctx, row, mine, a, messages, report)
    return []


def open_followup(
    ctx: HandlerContext, row: ThreadRow, mine: Message, a: Assessment, messages: list[Message], report: FollowupReport
) -> None:
    """The note "No answer from Dana since …" and its follow-up draft (each created only if absent)."""
    name = f"FOLLOWUP_{_SAFE.sub('_', mine.provider_id or mine.key)[:MAX_NAME]}.md"
    note_path, draft_path = f"{NEEDS_ACTION}/{name}", f"{DRAFTS}/REPLY_{name}"
    who = display_names(a.waiting_on)
    request = NudgeRequest(a.waiting_on, mine.subject, mine.at, mine.ask)
    judge = judge_for(ctx.settings)
    greeting, sign_off = owner_voice(ctx, a.waiting_on)
    # A private thread's words (its subject, the sentence that asked) never reach a model: the template writes it.
    model = isinstance(judge, LlmJudge) and not private_in_thread(ctx, "", {"thread_id": mine.thread})
    text = follow_up_text(
        request,
        greeting=greeting,
        sign_off=sign_off,
        provider=judge.provider if isinstance(judge, LlmJudge) and model else None,
    )
    to = ", ".join(addr for _, addr in a.waiting_on)
    draft_fm = draft_head(f"REPLY_{name[:-3]}", note_path, to, reply_subject(mine.subject))
    draft_fm |= {"thread_id": mine.thread, "follow_up": "draft"}
    drafted = draft_fm["drafted_at"]
    if mine.provider_id:
        draft_fm["reply_to_message_id"] = mine.provider_id
    draft_body = (
        f"{text}\n\n{CUTOFF}\nA follow-up to your message of {day(mine.at)} ([[{name[:-3]}]]): no answer "
        f"from {inert_inline(who)} since. Edit it, then move it to Approved/ to send it, or to Rejected/ to "
        "drop it. H0 withdraws it if the answer arrives first.\n"
    )
    links = list(dict.fromkeys(m.note.rsplit("/", 1)[-1].removesuffix(".md") for m in messages if m.note))[-MAX_LINKS:]
    note_fm: dict[str, Any] = {
        "type": "follow_up",
        "status": OPEN_FOLLOW_UP,
        "follow_up": "reply_awaited",
        "thread_id": mine.thread,
        "subject": mine.subject,
        "awaiting_from": [f"{n} <{addr}>" if n else addr for n, addr in a.waiting_on],
        "asked_at": epoch_timestamp(mine.at),
        "asked_message_id": mine.provider_id,
        "draft": draft_path,
        "created_at": drafted,
    }
    asked = f"\n\nYou asked: “{inert_inline(mine.ask)}”" if mine.ask else ""
    note_body = (
        f"No answer from {inert_inline(who)} since {day(mine.at)} "
        f"({inert_inline(mine.subject) or '(no subject)'}).{asked}\n\n"
        f"H0 drafted a follow-up: [[REPLY_{name[:-3]}]]. Edit it and move it to Approved/ to send it. "
        "H0 files this note when the answer arrives; set `awaiting: false` here if you expect none.\n"
        + (f"\nThe thread: {', '.join(f'[[{link}]]' for link in links)}\n" if links else "")
    )
    for path, fm, body in ((draft_path, draft_fm, draft_body), (note_path, note_fm, note_body)):
        try:
            ctx.notes.write(path, fm, body, create_only=True)
        except Conflict:
            logger.info("follow-ups: {} exists already (a pass that stopped before recording it); kept", path)
    row.state, row.anchor, row.note, row.draft = "awaited", mine.key, note_path, draft_path
    ctx.audit.write(
        "reply_awaited",
        path=note_path,
        draft=draft_path,
        thread_id=mine.thread,
        since=epoch_timestamp(mine.at),
        waiting_on=[addr for _, addr in a.waiting_on],
    )
    logger.info("⧗ no answer from {} since {}: {} (follow-up drafted: {})", who, day(mine.at), note_path, draft_path)
    report.awaited.append(note_path)


def close_followup(ctx: HandlerContext, row: ThreadRow, a: Assessment, now: float, report: FollowupReport) -> None:
    """The awaited answer came (or the owner said `awaiting: false`, or wrote again): file the note, withdraw
    the draft if it is still in Drafts/ waiting for approval."""
    answer = a.answer
    if answer is not None:
        link = f" ([[{answer.note.rsplit('/', 1)[-1].removesuffix('.md')}]])" if answer.note else ""
        known = {addr: name for name, addr in (a.owner_last.recipients if a.owner_last else ()) if name}
        who = inert_inline(known.get(answer.sender) or answer.sender or "Someone")
        why = f"{who} answered on {day(answer.at)}{link}, so this follow-up is no longer needed"
        outcome = {"follow_up": "answered", "answered_at": epoch_timestamp(answer.at)}
        if answer.note:
            outcome["answered_by"] = f"[[{answer.note.rsplit('/', 1)[-1].removesuffix('.md')}]]"
    elif row.override is False:
        why = "You marked this thread `awaiting: false`, so no follow-up is needed"
        outcome = {"follow_up": "dismissed"}
    elif a.heard_from is not None:
        address, heard_at = a.heard_from
        known = {addr: name for name, addr in (a.owner_last.recipients if a.owner_last else ()) if name}
        who = inert_inline(known.get(address) or address)
        why = (
            f"{who} wrote to you on {day(heard_at)} (in another conversation), after your message, so this "
            "follow-up is no longer needed"
        )
        outcome = {"follow_up": "heard_from", "heard_at": epoch_timestamp(heard_at)}
    else:
        when = day(a.owner_last.at) if a.owner_last else "since"
        why = f"You wrote again in this thread on {when}, so this follow-up is out of date"
        outcome = {"follow_up": "superseded"}
    if row.note:
        try:
            note = ctx.notes.read(row.note)
            if note.facts.status.word == OPEN_FOLLOW_UP:  # in any case or spacing (h0.vault.model)
                moved = ctx.notes.move_to_folder(row.note, DONE, {"status": "done", **outcome})
                report.answered.append(moved.destination)
        except NotFound:
            pass
    if row.draft:
        withdraw(ctx, row.draft, why, now, report)
    ctx.audit.write("follow_up_closed", path=row.note, draft=row.draft, reason=why)
    logger.info("✓ follow-up {} closed: {}", row.note, why)
    row.state, row.anchor, row.note, row.draft = "", None, None, None


def withdraw(ctx: HandlerContext, path: str, why: str, now: float, report: FollowupReport) -> None:
    """A follow-up draft still waiting in Drafts/ leaves it, `status: withdrawn` with the reason: never sent."""
    try:
        draft = ctx.notes.read(path)
    except NotFound:
        return  # moved by the human (approved, rejected) or filed: not H0's to take back
    if not draft.facts.status.sendable:
        return
    reason = f"{why}."
    moved = ctx.notes.move_to_folder(
        path, DONE, {"status": "withdrawn", "withdrawn_reason": reason, "withdrawn_at": epoch_timestamp(now)}
    )
    ctx.audit.write("draft_withdrawn", path=path, done_path=moved.destination, reason=reason)
    logger.info("↶ withdrew {} (never sent): {}", path, reason)
    report.withdrawn.append(moved.destination)


def owner_voice(ctx: HandlerContext, people: Sequence[tuple[str, str]]) -> tuple[str | None, str | None]:
    """(greeting, sign-off) of the owner's mail to these people (`Drafting.voice_for_people`); (None, None)
    when the vault's drafting state cannot be read: the caller's defaults, never a failure."""
    try:
        return ctx.drafting_state().voice_for_people(people)
    except Exception as exc:  # noqa: BLE001 - a follow-up is still drafted, in the default words
        logger.debug("the owner's voice could not be read ({})", exc)
        return None, None
