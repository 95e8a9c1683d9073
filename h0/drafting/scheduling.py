"""The scheduling part of a reply's context: the owner's calendar asked about an email that wants to meet.

The owner's hours come from the profile; the sender's time zone from their People note
(`timezone: America/New_York`) or, failing that, the UTC offset of the email's own Date header
when the note keeps one (`date:`; ingest stores `received` in UTC, which says nothing of the
sender). The free times themselves are h0.calendar's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from email.utils import parsedate_to_datetime
from typing import Any

from loguru import logger

from h0.calendar import OwnerCalendar, Scheduling, plan_meeting
from h0.calendar.checks import flag_unfree, named_slots
from h0.calendar.hours import zone_named
from h0.calendar.phrases import asks_to_meet
from h0.drafting.knowledgenotes import KnowledgeSource
from h0.drafting.profile import Profile
from h0.errors import H0Error
from h0.mail.incoming.htmltext import inert_inline
from h0.vault.model import NoteFacts


def sender_zone(knowledge: KnowledgeSource | None, address: str, email: NoteFacts) -> tuple[tzinfo, str] | None:
    """The sender's time zone and its name: their People note's `timezone`, else their Date header's offset."""
    if knowledge is not None and "@" in address:
        for note in knowledge.notes_for_address(address):
            value = note.frontmatter.get("timezone")
            zone = zone_named(value.strip()) if isinstance(value, str) else None
            if zone is not None and isinstance(value, str):
                return zone, value.strip()
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
    return ScheduledReply(text, tuple(slots), tuple(flagged), tuple(scheduling.questions()), tuple(notes))


def _before_sign_off(text: str, paragraph: str, sign_off: str) -> str:
    first = next((line.strip() for line in sign_off.splitlines() if line.strip()), "")
    at = text.rfind(first) if first else -1
    if at <= 0:
        return f"{text.rstrip()}\n\n{paragraph}\n"
    return f"{text[:at].rstrip()}\n\n{paragraph}\n\n{text[at:]}"
