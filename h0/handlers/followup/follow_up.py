"""Follow up: replies owed, replies awaited and snoozes, in one pass over what changed or fell due.

Ingest hands each new message and each message the owner sent to the follow-up ledger
(h0.handlers.followup.record), which marks its thread for a look. `follow_up` is the pass (the
daemon runs it every FOLLOW_UP_PASS_SECONDS, after ingest brought something, and at start;
`h0 sweep` once). It takes what the pipeline found in the vault
  (`Found`: the notes of Needs_Action/ and Drafts/, and notes elsewhere saying `awaiting:`), adds
  H0's own sends and untracked email notes to the ledger, then for every thread that is dirty or
  past a deadline (and only those):
    * wakes the thread's snoozed notes when someone wrote in it;
    * **owed** (h0.handlers.followup.owed): an email note from a person that needs a reply (triage drafted
      one, or it asks the owner something) and got no answer FOLLOW_UP_DAYS working days after it arrived
      gets `follow_up: reply_owed` and `reply_owed_since:`; a reply the owner sent outside H0 (their sent
      mail) files it in Done/ (`follow_up: replied`) and marks its waiting draft stale;
    * **awaited**: the owner's message that asked something and got no answer for FOLLOW_UP_DAYS
      becomes `Needs_Action/FOLLOWUP_<id>.md` ("No answer from Dana since …") with a follow-up draft
      `Drafts/REPLY_FOLLOWUP_<id>.md` (it goes through approval like any draft). When the answer
      arrives (or the owner says `awaiting: false`, or writes again), the note is filed in Done/ and
      the draft, if still in Drafts/, is withdrawn: moved to Done/ with `status: withdrawn` and
      `withdrawn_reason:` — a withdrawn note is refused at send time, whoever approves it.
  Snoozes whose time came are woken, and a broken `snooze_until` gets its typed error on the note;
  so does any other broken date (`date_error`, h0.handlers.followup.note_dates).

Everything is decided from the ledger and the notes: no provider call (the sync already read the
mail). Every note change goes through NoteOps (the vault server in the daemon); one note's trouble
is logged and costs that note, never the pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loguru import logger

from h0.errors import H0Error
from h0.followup.ledger import FollowupLedger, ThreadRow
from h0.followup.messages import from_email_note
from h0.followup.threads import Assessment, Message, assess
from h0.handlers.context import HandlerContext
from h0.handlers.followup.awaited import awaited
from h0.handlers.followup.note_dates import check_dates
from h0.handlers.followup.owed import AttackCheck, owed
from h0.handlers.followup.pass_report import FollowupReport
from h0.handlers.followup.record import record_own_sends
from h0.handlers.followup.wake import check_snooze, wake
from h0.mail.owner import OwnerAuthority, note_message_key, owner_addresses
from h0.vault.layout import NEEDS_ACTION
from h0.vault.model import Kind, NoteFacts, note_facts


@dataclass
class Found:
    """What the pipeline found in the vault for this pass: (path, frontmatter) of every note in
    Needs_Action/ and Drafts/, and of notes elsewhere (Done/) that say `awaiting:`."""

    notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    marked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


# ---------------------------------------------------------------------------------- the pass


@dataclass
class _Thread:
    """One thread's notes in the vault as the pass found them."""

    emails: list[tuple[str, dict[str, Any], NoteFacts]] = field(default_factory=list)  # email notes in Needs_Action/
    followups: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # FOLLOWUP notes in Needs_Action/
    snoozed: list[tuple[str, dict[str, Any], float]] = field(default_factory=list)  # (path, fm, until) still hidden


def follow_up(ctx: HandlerContext, found: Found, *, now: float) -> FollowupReport:
    """One follow-up pass (see the module docstring)."""
    report = FollowupReport()
    ledger = FollowupLedger(ctx.state_database())
    report.recorded += record_own_sends(ctx, ledger, now)
    by_thread = _by_thread(ctx, found, ledger, now, report)
    work = ledger.work(now)
    report.threads = len(work)
    if not work:
        return report
    rows = ledger.threads(work)
    messages, owner = _with_authorship(ledger, ledger.messages(work), ctx)
    lists = frozenset(ledger.list_addresses())
    # When each person the owner wrote to last wrote back, in any thread: whoever did is awaited no more.
    heard = ledger.last_heard(
        [addr for thread in messages.values() for m in thread if m.outbound for _, addr in m.recipients]
    )
    suspicion = AttackCheck(ctx)
    settled: list[ThreadRow] = []
    for thread in work:
        row = rows.get(thread) or ThreadRow(thread)
        told = messages.get(thread, [])
        # New messages wake a snoozed note only in a thread looked at before (not at its first look).
        assessment = assess(told, owner, lists, row.override, since=row.checked_at or None, heard=heard)
        try:
            _look_at(ctx, row, assessment, told, by_thread.get(thread, _Thread()), owner, now, report, suspicion)
        except H0Error as error:
            report.failed += 1
            logger.warning("follow-ups: thread {} — {} (looked at again next pass)", thread[:80], error.message)
            continue
        settled.append(row)
    ledger.settle(settled, now)
    return report


def _with_authorship(
    ledger: FollowupLedger, messages: dict[str, list[Message]], ctx: HandlerContext
) -> tuple[dict[str, list[Message]], frozenset[str]]:
    """The threads' messages with `outbound` as the owner's identity says (h0.mail.owner: the provider's sent
    mail, an import's, H0's own sends — never a From address), and the owner's addresses (for addressing)."""
    authority = OwnerAuthority(ledger.state)
    vouched = iter(authority.vouched(m for thread in messages.values() for m in thread))
    checked = {t: [next(vouched) for _ in thread] for t, thread in messages.items()}
    return checked, owner_addresses(ctx.settings, authority.senders())


def _by_thread(
    ctx: HandlerContext, found: Found, ledger: FollowupLedger, now: float, report: FollowupReport
) -> dict[str, _Thread]:
    """The found notes by thread; along the way: untracked emails recorded, `awaiting:` words passed to the
    ledger, due snoozes woken and broken ones written on their notes."""
    threads: dict[str, _Thread] = {}
    emails: list[tuple[NoteFacts, str]] = []  # (the email, its message key)
    overrides: dict[str, bool | None] = {t: None for t in ledger.overridden()}
    notes = [note_facts(path, fm) for path, fm in found.notes]
    for facts in [*notes, *(note_facts(path, fm) for path, fm in found.marked)]:
        word = facts.follow_up_marks.awaiting
        if facts.thread_id and word is not None:
            overrides[facts.thread_id] = word
    for (path, fm), facts in zip(found.notes, notes):
        thread = facts.thread_id or ""
        if path.startswith(f"{NEEDS_ACTION}/") and facts.kind is Kind.EMAIL:
            key = note_message_key(facts)
            emails.append((facts, key))
            threads.setdefault(thread or key, _Thread()).emails.append((path, fm, facts))
        elif path.startswith(f"{NEEDS_ACTION}/") and facts.kind is Kind.FOLLOW_UP and thread:
            threads.setdefault(thread, _Thread()).followups.append((path, fm))
        if check_dates(ctx, facts, report):
            report.date_errors.append(path)
        until, happened = check_snooze(ctx, facts, now)
        if happened == "woke":
            report.woke.append(path)
        elif happened == "error":
            report.snooze_errors.append(path)
        if until is not None and until > now and thread:
            threads.setdefault(thread, _Thread()).snoozed.append((path, fm, until))
    if emails:  # email notes the ledger has not seen (written before follow-ups existed, or by another tool)
        known = ledger.known([key for _, key in emails])
        fresh = [
            m for facts, key in emails if key not in known for m in [from_email_note(facts, now=now)] if m is not None
        ]
        if fresh:
            ledger.record(fresh)
            report.recorded += len(fresh)
    ledger.set_overrides({t: v for t, v in overrides.items() if t})
    return threads


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
    suspicion: AttackCheck,
) -> None:
    deadlines: list[float] = []
    if a.new_from_others and notes.snoozed:
        latest = a.new_from_others[-1]
        who = latest.sender or "someone"
        for path, _, _ in notes.snoozed:
            if wake(ctx, path, f"{who} wrote again in this thread", now):
                report.woke.append(path)
    deadlines += owed(ctx, a, messages, notes.emails, owner, now, report, suspicion)
    deadlines += awaited(ctx, row, a, messages, now, report)
    row.due_at = min(deadlines) if deadlines else None
