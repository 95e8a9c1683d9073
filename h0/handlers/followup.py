"""Follow up: replies owed, replies awaited and snoozes, in one pass over what changed or fell due.

Ingest hands each new message and each message the owner sent to the follow-up ledger
(h0.handlers.followup_record), which marks its thread for a look. `follow_up` is the pass (the
daemon runs it every FOLLOW_UP_PASS_SECONDS, after ingest brought something, and at start;
`h0 sweep` once). It takes what the pipeline found in the vault
  (`Found`: the notes of Needs_Action/ and Drafts/, and notes elsewhere saying `awaiting:`), adds
  H0's own sends and untracked email notes to the ledger, then for every thread that is dirty or
  past a deadline (and only those):
    * wakes the thread's snoozed notes when someone wrote in it;
    * **owed**: an email note that needs the owner (a draft waiting, urgent, needs_info) and got no
      answer FOLLOW_UP_DAYS working days after it arrived gets `follow_up: reply_owed` and
      `reply_owed_since:`; a reply the owner sent outside H0 (their sent mail) files it in Done/
      (`follow_up: replied`) and marks its waiting draft stale;
    * **awaited**: the owner's message that asked something and got no answer for FOLLOW_UP_DAYS
      becomes `Needs_Action/FOLLOWUP_<id>.md` ("No answer from Dana since …") with a follow-up draft
      `Drafts/REPLY_FOLLOWUP_<id>.md` (it goes through approval like any draft). When the answer
      arrives (or the owner says `awaiting: false`, or writes again), the note is filed in Done/ and
      the draft, if still in Drafts/, is withdrawn: moved to Done/ with `status: withdrawn` and
      `withdrawn_reason:` — a withdrawn note is refused at send time, whoever approves it.
  Snoozes whose time came are woken, and a broken `snooze_until` gets its typed error on the note.

Everything is decided from the ledger and the notes: no provider call (the sync already read the
mail). Every note change goes through NoteOps (the vault server in the daemon); one note's trouble
is logged and costs that note, never the pass.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loguru import logger

from h0.drafting.service import owner_voice
from h0.errors import Conflict, H0Error, NotFound
from h0.followup.asks import LlmJudge, judge_for
from h0.followup.ledger import FollowupLedger, ThreadRow
from h0.followup.nudge import NudgeRequest, follow_up_text
from h0.followup.record import epoch, from_email_note
from h0.followup.threads import Assessment, Message, assess, display_names, is_owners, owner_addresses
from h0.followup.workdays import add_working_days
from h0.handlers.context import HandlerContext
from h0.handlers.followup_record import record_own_sends, state_of
from h0.handlers.reply import reply_subject
from h0.handlers.snooze import check_snooze, wake
from h0.mail.drafts import CUTOFF
from h0.mail.htmltext import inert_inline
from h0.vault.audit import note_timestamp
from h0.vault.draft_state import draft_status
from h0.vault.layout import DONE, DRAFTS, NEEDS_ACTION

RECHECK_S = 3600.0  # an email past its deadline but not triaged yet: looked at again this much later
NEEDS_OWNER = frozenset({"awaiting_approval", "needs_info"})
OPEN_FOLLOW_UP = "awaiting_reply"
_SAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 80
MAX_LINKS = 10  # notes of the thread linked from a follow-up note (the latest)


@dataclass
class Found:
    """What the pipeline found in the vault for this pass: (path, frontmatter) of every note in
    Needs_Action/ and Drafts/, and of notes elsewhere (Done/) that say `awaiting:`."""

    notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    marked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class FollowupReport:
    recorded: int = 0
    threads: int = 0
    owed: list[str] = field(default_factory=list)  # email notes marked reply_owed
    replied: list[str] = field(default_factory=list)  # email notes filed: the owner answered outside H0
    awaited: list[str] = field(default_factory=list)  # follow-up notes written
    answered: list[str] = field(default_factory=list)  # follow-up notes filed
    withdrawn: list[str] = field(default_factory=list)  # follow-up drafts withdrawn
    woke: list[str] = field(default_factory=list)  # snoozed notes woken
    snooze_errors: list[str] = field(default_factory=list)
    failed: int = 0

    @property
    def changed(self) -> bool:
        return bool(
            self.owed
            or self.replied
            or self.awaited
            or self.answered
            or self.withdrawn
            or self.woke
            or self.snooze_errors
        )


def _days(ctx: HandlerContext) -> float:
    return float(getattr(ctx.settings, "follow_up_days", 2.0))


# ---------------------------------------------------------------------------------- the pass


@dataclass
class _Thread:
    """One thread's notes in the vault as the pass found them."""

    emails: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # email notes in Needs_Action/
    followups: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # FOLLOWUP notes in Needs_Action/
    snoozed: list[tuple[str, dict[str, Any], float]] = field(default_factory=list)  # (path, fm, until) still hidden


def follow_up(ctx: HandlerContext, found: Found, *, now: float) -> FollowupReport:
    """One follow-up pass (see the module docstring)."""
    report = FollowupReport()
    ledger = FollowupLedger(state_of(ctx))
    report.recorded += record_own_sends(ctx, ledger, now)
    by_thread = _by_thread(ctx, found, ledger, now, report)
    work = ledger.work(now)
    report.threads = len(work)
    if not work:
        return report
    rows = ledger.threads(work)
    messages = ledger.messages(work)
    owner = owner_addresses(ctx.settings, ledger.owner_senders())
    lists = frozenset(ledger.list_addresses())
    settled: list[ThreadRow] = []
    for thread in work:
        row = rows.get(thread) or ThreadRow(thread)
        # New messages wake a snoozed note only in a thread looked at before (not at its first look).
        assessment = assess(messages.get(thread, []), owner, lists, row.override, since=row.checked_at or None)
        try:
            _look_at(
                ctx, row, assessment, messages.get(thread, []), by_thread.get(thread, _Thread()), owner, now, report
            )
        except H0Error as error:
            report.failed += 1
            logger.warning("follow-ups: thread {} — {} (looked at again next pass)", thread[:80], error.message)
            continue
        settled.append(row)
    ledger.settle(settled, now)
    return report


def _by_thread(
    ctx: HandlerContext, found: Found, ledger: FollowupLedger, now: float, report: FollowupReport
) -> dict[str, _Thread]:
    """The found notes by thread; along the way: untracked emails recorded, `awaiting:` words passed to the
    ledger, due snoozes woken and broken ones written on their notes."""
    threads: dict[str, _Thread] = {}
    emails: list[tuple[str, dict[str, Any], str]] = []  # (path, frontmatter, message key)
    overrides: dict[str, bool | None] = {t: None for t in ledger.overridden()}
    for path, fm in [*found.notes, *found.marked]:
        thread = str(fm.get("thread_id") or "")
        word = _awaiting(fm.get("awaiting"))
        if thread and word is not None:
            overrides[thread] = word
    for path, fm in found.notes:
        thread = str(fm.get("thread_id") or "")
        kind = str(fm.get("type") or "")
        if path.startswith(f"{NEEDS_ACTION}/") and kind == "email":
            key = _key(fm)
            emails.append((path, fm, key))
            threads.setdefault(thread or key, _Thread()).emails.append((path, fm))
        elif path.startswith(f"{NEEDS_ACTION}/") and kind == "follow_up" and thread:
            threads.setdefault(thread, _Thread()).followups.append((path, fm))
        until, happened = check_snooze(ctx, path, fm, now)
        if happened == "woke":
            report.woke.append(path)
        elif happened == "error":
            report.snooze_errors.append(path)
        if until is not None and until > now and thread:
            threads.setdefault(thread, _Thread()).snoozed.append((path, fm, until))
    if emails:  # email notes the ledger has not seen (written before follow-ups existed, or by another tool)
        known = ledger.known([key for _, _, key in emails])
        fresh = [
            m
            for path, fm, key in emails
            if key not in known
            for m in [from_email_note(path, fm, now=now)]
            if m is not None
        ]
        if fresh:
            ledger.record(fresh)
            report.recorded += len(fresh)
    ledger.set_overrides({t: v for t, v in overrides.items() if t})
    return threads


def _awaiting(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value or "").strip().lower()
    return {"true": True, "yes": True, "false": False, "no": False}.get(text)


def _update(
    ctx: HandlerContext, path: str, changes: dict[str, Any], report: FollowupReport, remove: tuple[str, ...] = ()
) -> bool:
    try:
        ctx.notes.update(path, changes, remove=remove)
        return True
    except NotFound:
        return False
    except H0Error as error:
        report.failed += 1
        logger.warning("follow-ups: {} could not be updated ({})", path, error.message)
        return False


# ---------------------------------------------------------------------------------- one thread


def _look_at(
    ctx: HandlerContext,
    row: ThreadRow,
    a: Assessment,
    messages: list[Message],
    notes: _Thread,
    owner: frozenset[str],
    now: float,
    report: FollowupReport,
) -> None:
    deadlines: list[float] = []
    if a.new_from_others and notes.snoozed:
        latest = a.new_from_others[-1]
        who = latest.sender or "someone"
        for path, _, _ in notes.snoozed:
            if wake(ctx, path, f"{who} wrote again in this thread", now):
                report.woke.append(path)
    deadlines += _owed(ctx, a, messages, notes, owner, now, report)
    deadlines += _awaited(ctx, row, a, messages, now, report)
    row.due_at = min(deadlines) if deadlines else None


def _owed(
    ctx: HandlerContext,
    a: Assessment,
    messages: list[Message],
    notes: _Thread,
    owner: frozenset[str],
    now: float,
    report: FollowupReport,
) -> list[float]:
    by_key = {m.key: m for m in messages}
    deadlines: list[float] = []
    for path, fm in notes.emails:
        status = str(fm.get("status") or "").strip().lower()
        message = by_key.get(_key(fm))
        received = message.at if message is not None else min(epoch(fm.get("received")) or now, now)
        if message is not None and (message.automated or is_owners(message, owner)):
            continue  # a list post, an auto-reply, a bounce, the owner's own mail: owed nothing
        needs_owner = status in NEEDS_OWNER or str(fm.get("decision") or "").strip().lower() == "urgent"
        mine = a.owner_last
        if mine is not None and mine.at >= received:
            if needs_owner or fm.get("follow_up") == "reply_owed":
                _replied(ctx, path, fm, mine, report)
            elif status in ("", "pending"):
                deadlines.append(now + RECHECK_S)  # triaged soon: then filed
            continue
        due = add_working_days(received, _days(ctx))
        if due > now:
            deadlines.append(due)
        elif needs_owner and fm.get("follow_up") != "reply_owed":
            if _update(ctx, path, {"follow_up": "reply_owed", "reply_owed_since": _iso(received)}, report):
                ctx.audit.write(
                    "reply_owed", path=path, since=_iso(received), subject=fm.get("subject"), sender=fm.get("from")
                )
                logger.info("↩ reply owed: {} ({} since {})", path, fm.get("from") or "?", _day(received))
                report.owed.append(path)
        elif status in ("", "pending"):
            deadlines.append(now + RECHECK_S)
    return deadlines


def _replied(ctx: HandlerContext, path: str, fm: dict[str, Any], mine: Message, report: FollowupReport) -> None:
    """The owner answered in this thread outside H0 (their sent mail shows it): the email is done."""
    when = _iso(mine.at)
    try:
        moved = ctx.notes.move_to_folder(path, DONE, {"status": "done", "follow_up": "replied", "replied_at": when})
    except NotFound:
        return
    except H0Error as error:
        report.failed += 1
        logger.warning("follow-ups: {} could not be filed ({})", path, error.message)
        return
    draft = fm.get("draft")
    if isinstance(draft, str) and draft.startswith(f"{DRAFTS}/"):
        reason = (
            f"you already replied in this thread on {_day(mine.at)} from another mail client, after the email "
            "this draft answers: read what you sent, then set `send_anyway: true` to send this too"
        )
        _update(ctx, draft, {"stale": True, "stale_reason": reason, "stale_since": when}, report)
    ctx.audit.write("reply_sent_elsewhere", path=path, done_path=moved.destination, replied_at=when, draft=draft)
    logger.info("✓ {} was answered from another mail client; filed as {}", path, moved.destination)
    report.replied.append(moved.destination)


def _awaited(
    ctx: HandlerContext, row: ThreadRow, a: Assessment, messages: list[Message], now: float, report: FollowupReport
) -> list[float]:
    mine = a.awaited
    if row.state == "awaited" and (mine is None or mine.key != row.anchor):
        _close(ctx, row, a, now, report)
    if mine is None:
        return []
    if row.state == "awaited" and row.anchor == mine.key:
        return []
    due = add_working_days(mine.at, _days(ctx))
    if due > now:
        return [due]
    _open(ctx, row, mine, a, messages, report)
    return []


def _open(
    ctx: HandlerContext, row: ThreadRow, mine: Message, a: Assessment, messages: list[Message], report: FollowupReport
) -> None:
    """The note "No answer from Dana since …" and its follow-up draft (each created only if absent)."""
    name = f"FOLLOWUP_{_SAFE.sub('_', mine.provider_id or mine.key)[:MAX_NAME]}.md"
    note_path, draft_path = f"{NEEDS_ACTION}/{name}", f"{DRAFTS}/REPLY_{name}"
    who = display_names(a.waiting_on)
    request = NudgeRequest(a.waiting_on, mine.subject, mine.at, mine.ask)
    judge = judge_for(ctx.settings)
    greeting, sign_off = owner_voice(ctx.settings, ctx.paths.root, a.waiting_on)
    text = follow_up_text(
        request, greeting=greeting, sign_off=sign_off, provider=judge.provider if isinstance(judge, LlmJudge) else None
    )
    drafted = note_timestamp()
    draft_fm: dict[str, Any] = {
        "to": ", ".join(addr for _, addr in a.waiting_on),
        "subject": reply_subject(mine.subject),
        "status": "pending_approval",
        "draft_id": f"REPLY_{name[:-3]}",
        "source": note_path,
        "thread_id": mine.thread,
        "drafted_at": drafted,
        "follow_up": "draft",
    }
    if mine.provider_id:
        draft_fm["reply_to_message_id"] = mine.provider_id
    draft_body = (
        f"{text}\n\n{CUTOFF}\nA follow-up to your message of {_day(mine.at)} ([[{name[:-3]}]]): no answer "
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
        "asked_at": _iso(mine.at),
        "asked_message_id": mine.provider_id,
        "draft": draft_path,
        "created_at": drafted,
    }
    asked = f"\n\nYou asked: “{inert_inline(mine.ask)}”" if mine.ask else ""
    note_body = (
        f"No answer from {inert_inline(who)} since {_day(mine.at)} "
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
        since=_iso(mine.at),
        waiting_on=[addr for _, addr in a.waiting_on],
    )
    logger.info("⧗ no answer from {} since {}: {} (follow-up drafted: {})", who, _day(mine.at), note_path, draft_path)
    report.awaited.append(note_path)


def _close(ctx: HandlerContext, row: ThreadRow, a: Assessment, now: float, report: FollowupReport) -> None:
    """The awaited answer came (or the owner said `awaiting: false`, or wrote again): file the note, withdraw
    the draft if it is still in Drafts/ waiting for approval."""
    answer = a.answer
    if answer is not None:
        link = f" ([[{answer.note.rsplit('/', 1)[-1].removesuffix('.md')}]])" if answer.note else ""
        known = {addr: name for name, addr in (a.owner_last.recipients if a.owner_last else ()) if name}
        who = inert_inline(known.get(answer.sender) or answer.sender or "Someone")
        why = f"{who} answered on {_day(answer.at)}{link}, so this follow-up is no longer needed"
        outcome = {"follow_up": "answered", "answered_at": _iso(answer.at)}
        if answer.note:
            outcome["answered_by"] = f"[[{answer.note.rsplit('/', 1)[-1].removesuffix('.md')}]]"
    elif row.override is False:
        why = "You marked this thread `awaiting: false`, so no follow-up is needed"
        outcome = {"follow_up": "dismissed"}
    else:
        when = _day(a.owner_last.at) if a.owner_last else "since"
        why = f"You wrote again in this thread on {when}, so this follow-up is out of date"
        outcome = {"follow_up": "superseded"}
    if row.note:
        try:
            note = ctx.notes.read(row.note)
            if str(note.frontmatter.get("status") or "") == OPEN_FOLLOW_UP:
                moved = ctx.notes.move_to_folder(row.note, DONE, {"status": "done", **outcome})
                report.answered.append(moved.destination)
        except NotFound:
            pass
    if row.draft:
        _withdraw(ctx, row.draft, why, now, report)
    ctx.audit.write("follow_up_closed", path=row.note, draft=row.draft, reason=why)
    logger.info("✓ follow-up {} closed: {}", row.note, why)
    row.state, row.anchor, row.note, row.draft = "", None, None, None


def _withdraw(ctx: HandlerContext, path: str, why: str, now: float, report: FollowupReport) -> None:
    """A follow-up draft still waiting in Drafts/ leaves it, `status: withdrawn` with the reason: never sent."""
    try:
        draft = ctx.notes.read(path)
    except NotFound:
        return  # moved by the human (approved, rejected) or filed: not H0's to take back
    if not draft_status(draft.frontmatter).sendable:
        return
    reason = f"{why}."
    moved = ctx.notes.move_to_folder(
        path, DONE, {"status": "withdrawn", "withdrawn_reason": reason, "withdrawn_at": _iso(now)}
    )
    ctx.audit.write("draft_withdrawn", path=path, done_path=moved.destination, reason=reason)
    logger.info("↶ withdrew {} (never sent): {}", path, reason)
    report.withdrawn.append(moved.destination)


# ---------------------------------------------------------------------------------- helpers


def _key(fm: Mapping[str, Any]) -> str:
    from h0.followup.record import message_key

    return message_key(fm.get("rfc822_message_id"), fm.get("message_id"))


def _iso(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _day(when: float) -> str:
    local = dt.datetime.fromtimestamp(when).astimezone()
    return f"{local:%a} {local.day} {local:%b} {local:%H:%M}"
