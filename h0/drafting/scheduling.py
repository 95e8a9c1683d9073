"""The scheduling part of a reply's context: the owner's calendar asked about an email that wants to meet.

The owner's hours come from the profile; the sender's time zone from their People note
(`timezone: America/New_York`) or, failing that, the UTC offset of the email's own Date header
when the note keeps one (`date:`; ingest stores `received` in UTC, which says nothing of the
sender). The free times themselves are h0.calendar's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from email.utils import parsedate_to_datetime
from typing import Any

from loguru import logger

from h0.calendar import OwnerCalendar, Scheduling, plan_meeting
from h0.calendar.checks import flag_unfree, named_slots
from h0.calendar.hours import zone_named
from h0.calendar.phrases import asks_to_meet
from h0.calendar.proposal import PROPOSAL_LINES, TIMES_PLACEHOLDER
from h0.drafting.knowledgenotes import KnowledgeSource
from h0.drafting.profile import Profile
from h0.errors import H0Error
from h0.mail.incoming.htmltext import inert_inline
from h0.vault.model import NoteFacts


def sender_zone(knowledge: KnowledgeSource | None, address: str, email: NoteFacts) -> tuple[tzinfo, str] | None:
    """The sender's time zone and its name: their People note's `timezone`, else their Date header's offset."""
    if knowledge is not None and "@" in address:
        for note in knowledge.notes_for_address(address):
            written = note.person.timezone
            zone = zone_named(written) if written else None
            if zone is not None:
                return zone, written
    return header_zone(email.date)


def header_zone(value: Any) -> tuple[tzinfo, str] | None:
    """The fixed UTC offset of an email's Date header (RFC 2822 or ISO 8601), or None."""
    if not isinstance(value, (str, datetime)) or not value:
        return None
    try:
        moment = value if isinstance(value, datetime) else parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            return None
    offset = moment.utcoffset()
    if offset is None or abs(offset) > timedelta(hours=14):
        return None
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    name = f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return timezone(offset, name), name


def scheduling_for_email(
    calendar: OwnerCalendar | None,
    profile: Profile,
    knowledge: KnowledgeSource | None,
    email: NoteFacts,
    text: str,
    reply_to: str,
    now: datetime,
) -> Scheduling | None:
    """The scheduling part of the reply to this email (None: it does not ask to meet). Never raises:
    a calendar that cannot be read is a problem on the result, and the reply proposes no time."""
    words = f"{email.subject}\n{text}"
    if not asks_to_meet(words):  # plan_meeting's own first question: no People note needs reading
        return None
    try:
        zone = sender_zone(knowledge, reply_to, email)
        return plan_meeting(calendar, profile.hours, words, now=now, sender_zone=zone)
    except (H0Error, OSError, ValueError) as exc:
        logger.warning("the calendar could not be read for a reply ({}); no time is proposed", exc)
        return plan_meeting(None, profile.hours, words, now=now)


@dataclass(frozen=True, slots=True)
class ScheduledReply:
    """A reply's text with its scheduling applied, and what the draft says about it."""

    text: str
    proposed_slots: tuple[str, ...] = ()
    flagged: tuple[str, ...] = ()  # times the model named that the calendar does not back
    questions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # lines under the cut-off, for the owner only
    meeting: bool = False  # the email asks to meet: the draft is `meeting_request: true`, its times kept current


def scheduled_reply(text: str, scheduling: Scheduling | None, *, by_model: bool, sign_off: str = "") -> ScheduledReply:
    """Rules: the proposal written into the reply (before the sign-off). A model: every time it named
    checked against the free times, an unbacked one made a placeholder that blocks sending."""
    if scheduling is None:
        return ScheduledReply(text)
    flagged: list[str] = []
    if by_model:
        slots = [slot.iso(scheduling.owner_zone) for slot in named_slots(text, scheduling)]
        text, flagged = flag_unfree(text, scheduling)
    elif scheduling.proposed and text.strip():
        text = _before_sign_off(text, scheduling.reply_text(), sign_off)
        slots = scheduling.proposed_slots
    else:
        slots = []
    notes = []
    if flagged:
        notes.append(
            "> [!warning] H0: the reply names a time your calendar does not show as free ("
            + ", ".join(flagged)
            + "): it is marked [FILL: …] and the draft cannot be sent until you replace it."
        )
    notes += [f"_Calendar: {inert_inline(p)}_" for p in scheduling.problems[:3]]
    return ScheduledReply(text, tuple(slots), tuple(flagged), tuple(scheduling.questions()), tuple(notes), True)


def rescheduled(
    text: str, proposed: Sequence[str], scheduling: Scheduling, *, by_model: bool, sign_off: str = ""
) -> ScheduledReply | None:
    """A waiting draft's text with its times made current (None: nothing to change). Only a calendar that
    was read can change a draft: while there is none, or it cannot be read, the draft stays as it is.

    It changes when a time it proposes is no longer free (booked since, or past) or when it proposes
    none and the calendar now has free times. A rules draft gets its proposal paragraph replaced (or
    added before the sign-off); a model's text gets H0's "[FILL: the times that suit you]" filled with
    the times, the times H0 had flagged unchecked read again, and every time it names checked anew."""
    if not scheduling.has_calendar or not scheduling.read:
        return None
    if proposed and all(scheduling.still_free(iso) for iso in proposed):
        return None
    unchecked = _UNCHECKED.sub(lambda m: m.group(1), text)
    if not proposed and not scheduling.proposed and unchecked == text:
        return None  # nothing proposed then, nothing free now: the question below the line still stands
    if by_model:
        filled = unchecked.replace(TIMES_PLACEHOLDER, _inline(scheduling))
        slots = [slot.iso(scheduling.owner_zone) for slot in named_slots(filled, scheduling)]
        checked, flagged = flag_unfree(filled, scheduling)
        return ScheduledReply(checked, tuple(slots), tuple(flagged), tuple(scheduling.questions()), (), True)
    kept = _without_proposal(text)
    paragraph = scheduling.reply_text()
    new = _before_sign_off(kept, paragraph, sign_off) if paragraph else kept
    return ScheduledReply(new, tuple(scheduling.proposed_slots), (), tuple(scheduling.questions()), (), True)


# H0's own placeholders around a time it could not check: the time inside is read again once a calendar is read.
_UNCHECKED = re.compile(
    r"\[FILL: ([^\]\n]{1,40}?) — (?:H0 has no calendar to check it|H0 could not read your calendar to check it|"
    r"not a free time in your calendar)\]"
)


def _inline(scheduling: Scheduling) -> str:
    """The proposed times in one line, for a sentence a model wrote ("… A, B or C …")."""
    language = scheduling.ask.language
    spans = [scheduling.slot_line(slot, language) for slot in scheduling.proposed]
    if not spans:
        return TIMES_PLACEHOLDER
    joiner = {"de": " oder ", "fr": " ou "}.get(language, " or ")
    return spans[0] if len(spans) == 1 else ", ".join(spans[:-1]) + joiner + spans[-1]


def _without_proposal(text: str) -> str:
    """A rules draft's text without the proposal paragraph H0 wrote in it (its first line to its last)."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() in PROPOSAL_LINES[0::2]]
    if not starts:
        return text
    start = starts[-1]
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() in PROPOSAL_LINES[1::2]), None)
    if end is None:
        return text  # not H0's paragraph as it wrote it: left alone
    kept = lines[:start] + lines[end + 1 :]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip() + "\n"


def _before_sign_off(text: str, paragraph: str, sign_off: str) -> str:
    first = next((line.strip() for line in sign_off.splitlines() if line.strip()), "")
    at = text.rfind(first) if first else -1
    if at <= 0:
        return f"{text.rstrip()}\n\n{paragraph}\n"
    return f"{text[:at].rstrip()}\n\n{paragraph}\n\n{text[at:]}"
