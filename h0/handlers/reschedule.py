"""Keep a waiting reply's proposed times current: a calendar set, or changed, after the draft was written.

A reply to a request to meet carries `meeting_request: true` (h0.handlers.reply). Every sweep (`h0 sweep`,
and the daemon's, at start and every SWEEP_INTERVAL_SECONDS) lists those drafts in Drafts/, and this
handler looks at each one again, level-triggered: the draft must still await sending and its text must be
exactly what H0 wrote (its `h0_text_hash`) — a draft you edited keeps your words and your times. Its email's
request is read again and the owner's calendar asked now (h0.drafting.scheduling.rescheduled): when a time
it proposes is no longer free (booked since, or past), or it proposes none and the calendar now has free
times, the proposal is rewritten, `proposed_slots` with it, the "Which times suit you?" question below the
cut-off line goes, and the draft says when its times were updated. Without a calendar, or with one that
cannot be read, a draft is left as it is. The write carries the hash the draft was read with, so an edit
made meanwhile wins.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from h0.drafting.learning import text_hash
from h0.drafting.revise import email_for
from h0.drafting.scheduling import rescheduled, scheduling_for_email
from h0.errors import Conflict, H0Error, NotFound
from h0.handlers.context import HandlerContext
from h0.handlers.outcome import Action, Outcome
from h0.mail.incoming.htmltext import inert_inline
from h0.vault import Note, Vault
from h0.vault.layout import DRAFTS
from h0.vault.marks import TEXT_HASH_KEY
from h0.vault.model import NoteFacts, note_facts
from h0.vault.paths import nfc
from h0.vault.sendable import CUTOFF

_TIME_QUESTION = re.compile(r"^- Which times suit you\?.*\n?", re.MULTILINE)
_CALENDAR_NOTE = re.compile(r"^_Calendar: .*_\n?", re.MULTILINE)
_EMPTY_QUESTIONS = re.compile(r"^\*\*Questions for you\*\*[^\n]*\n(?=\s*(?:\n|$|[^-\s]))", re.MULTILINE)


def waiting_meeting_drafts(vault: Vault) -> list[str]:
    """The sweep's finder: the drafts in Drafts/ that answer a request to meet and still await sending."""
    try:
        listing = vault.list_notes(DRAFTS, with_frontmatter=True)
    except H0Error:
        return []
    return [
        nfc(n.path) for n in listing.notes if n.frontmatter is not None and _waiting(note_facts(n.path, n.frontmatter))
    ]


def reschedule_wanted(read: Callable[[], Note]) -> bool:
    """The routing table's test for a Drafts/ note: a waiting reply to a request to meet, unedited."""
    try:
        note = read()
    except H0Error:
        return False
    return _waiting(note.facts) and _unedited(note)


def reschedule_draft(path: str, ctx: HandlerContext) -> Outcome:
    note = ctx.read_draft(path, "proposed times are kept current in Drafts/ only")
    if isinstance(note, Outcome):
        return note
    if not _waiting(note.facts):
        return Outcome(Action.SKIPPED, "not a waiting reply to a request to meet")
    if not _unedited(note):
        return Outcome(Action.SKIPPED, "you edited the text: its times are yours")
    email = email_for(ctx.notes.notes, note.facts)
    if email is None:
        return Outcome(Action.SKIPPED, "the email it answers is gone")
    drafting = ctx.drafting_state()
    fm, words = email
    facts = note_facts(note.facts.source or "", fm)
    now = dt.datetime.now(dt.UTC)
    to = note.facts.to[0] if note.facts.to else facts.sender
    scheduling = scheduling_for_email(drafting.calendar, drafting.profile(), drafting.knowledge, facts, words, to, now)
    above, _, below = note.body.partition(CUTOFF)
    by_model = note.facts.drafted_by.lower() not in ("", "rules")
    sign_off = drafting.reply_voice(to, facts.sender_text, words).voice.sign_off if not by_model else ""
    changed = (
        rescheduled(above.strip(), note.facts.proposed_slots, scheduling, by_model=by_model, sign_off=sign_off)
        if scheduling is not None
        else None
    )
    if changed is None or scheduling is None:
        return Outcome(Action.SKIPPED, "its times are current")
    text = changed.text.strip()
    new_fm = {**note.frontmatter, TEXT_HASH_KEY: text_hash(text)}
    for key, value in (("proposed_slots", changed.proposed_slots), ("unverified_times", changed.flagged)):
        new_fm.pop(key, None)
        if value:
            new_fm[key] = list(value)
    when = now.astimezone(scheduling.owner_zone).strftime("%Y-%m-%d %H:%M")
    said = f"_Calendar: the times above were updated from your calendar on {when} ({scheduling.owner_zone_name})._"
    asked = "".join(f"- {inert_inline(q)}\n" for q in changed.questions)
    below = _EMPTY_QUESTIONS.sub("", _CALENDAR_NOTE.sub("", _TIME_QUESTION.sub("", below))).strip("\n")
    body = f"{text}\n\n{CUTOFF}\n{below}\n\n{said}\n" + (f"\n**Questions for you**\n{asked}" if asked else "")
    try:
        ctx.notes.write(path, new_fm, body, if_match=note.hash)
    except (Conflict, NotFound):
        return Outcome(Action.SKIPPED, "the draft changed or moved meanwhile: looked at again next sweep")
    ctx.audit.write(
        "draft_rescheduled", path=path, proposed_slots=list(changed.proposed_slots), flagged=list(changed.flagged)
    )
    return Outcome(Action.RESCHEDULED, "its proposed times were updated from your calendar")


def _waiting(facts: NoteFacts) -> bool:
    return facts.meeting_request and facts.status.sendable and not facts.rejected


def _unedited(note: Note) -> bool:
    above = note.body.partition(CUTOFF)[0]
    return note.facts.revisions.text_hash == text_hash(above)
