"""The scheduling part of a reply: which free times to propose, in whose time zones, and how to say them.

`plan_meeting` answers for one email that asks to meet: the free slots on the days it asks
about (or the next working days), 2–3 of them to propose, each in the owner's zone and — when
the sender's differs — in theirs. Without a calendar, or with one H0 could not read yet, it
proposes nothing: the owner is asked which times suit them (no time is invented).

Privacy: an event is "busy" and nothing more, whoever asks. No event is named or singled out — not
its title, not "you already meet them at …": who attends an event is not something a `From:` line can
prove, so no email can make H0 say which of the owner's meetings are with whom.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from h0.calendar.free import Slot, free_slots, spread
from h0.calendar.hours import OwnerHours
from h0.calendar.phrases import MeetingAsk, meeting_ask, next_working_days
from h0.calendar.service import OwnerCalendar
from h0.calendar.when import PARTS

PROPOSED = 3
NO_CALENDAR_QUESTION = "Which times suit you? (H0 has no calendar to read: set CALENDAR_ICS or CALDAV_URL)"
NO_FREE_TIME_QUESTION = "Which times suit you? (your calendar has no free time of that length on the days asked)"
TIMES_PLACEHOLDER = "[FILL: the times that suit you]"  # what a model writes where times go, without a calendar
UNREAD_QUESTION = "Which times suit you? (H0 could not read your calendar just now: see the calendar lines below)"


@dataclass(frozen=True, slots=True)
class Scheduling:
    """What a reply to a request to meet may say about time."""

    ask: MeetingAsk
    minutes: int
    owner_zone: tzinfo
    owner_zone_name: str
    sender_zone: tzinfo | None = None
    sender_zone_name: str | None = None
    has_calendar: bool = False
    proposed: tuple[Slot, ...] = ()
    free: tuple[Slot, ...] = ()
    problems: tuple[str, ...] = ()
    read: bool = True  # every source of the calendar was read (else nothing is known to be free)
    asked_at: datetime | None = None  # when the free times were computed ("tomorrow" in a reply is read from it)

    @property
    def proposed_slots(self) -> list[str]:
        """The proposed times as ISO 8601 with the owner's UTC offset (the draft's `proposed_slots`)."""
        return [slot.iso(self.owner_zone) for slot in self.proposed]

    def slot_line(self, slot: Slot, language: str = "en") -> str:
        """'Tuesday 2 December, 10:00–10:30 (Europe/Berlin; 09:00–09:30 for you, Europe/London)'."""
        own = _span(slot, self.owner_zone, language=language)
        line = f"{own} ({self.owner_zone_name}"
        if self.sender_zone is not None:
            other_day = _day(slot, self.sender_zone) != _day(slot, self.owner_zone)
            theirs = _span(slot, self.sender_zone, day=other_day, language=language)
            line += f"; {theirs} {_FOR_YOU.get(language, 'for you')}, {self.sender_zone_name}"
        return line + ")"

    def reply_text(self) -> str:
        """The paragraph a rules-mode draft proposes the times with, in the email's language (English, German
        or French); "" when there is nothing to propose."""
        if not self.proposed:
            return ""
        language = self.ask.language if self.ask.language in _SAID else "en"
        opening, closing = _SAID[language]
        lines = [opening, *(f"- {self.slot_line(slot, language)}" for slot in self.proposed), closing]
        return "\n".join(lines)

    def prompt_text(self) -> str:
        """What a model is told: the free times (never an event's title), or that there is no calendar."""
        if not self.has_calendar:
            return (
                "The owner has no calendar H0 can read: propose no date or time; write "
                f"{TIMES_PLACEHOLDER} where times would go."
            )
        if not self.read:
            return (
                "The owner's calendar could not be read just now: propose no date or time; write "
                f"{TIMES_PLACEHOLDER} where times would go."
            )
        if not self.free:
            return (
                "The owner's calendar has no free time of that length on the days asked: propose no time; write "
                f"{TIMES_PLACEHOLDER} where times would go."
            )
        part = f", in the {self.ask.part}" if self.ask.part else ""
        lines = [
            f"The email asks to meet ({self.minutes} minutes{part}). The owner's free times "
            f"(their time zone {self.owner_zone_name}"
            + (f"; the sender's is {self.sender_zone_name}" if self.sender_zone is not None else "")
            + "). Propose two or three of these and no other time; give each in both zones when they differ:"
        ]
        lines += [f"- {self.slot_line(slot)}" for slot in self.proposed]
        others = [s for s in self.free if s not in self.proposed][:9]
        if others:
            lines.append("Other free times: " + "; ".join(_span(s, self.owner_zone) for s in others))
        return "\n".join(lines)

    def questions(self) -> list[str]:
        """What the draft asks the owner (below the cut-off)."""
        if not self.has_calendar:
            return [NO_CALENDAR_QUESTION]
        if not self.read:
            return [UNREAD_QUESTION]
        if not self.proposed:
            if self.ask.part:
                return [NO_FREE_TIME_QUESTION.replace("on the days asked", f"in the {self.ask.part} on the days asked")]
            return [NO_FREE_TIME_QUESTION]
        return []

    def allowed(self) -> list[Slot]:
        """Every time a reply may name: the free slots."""
        return [*self.proposed, *self.free]

    def still_free(self, iso: str) -> bool:
        """Whether a time proposed earlier (ISO 8601 with its offset, a draft's `proposed_slots`) is one of these
        free times still: not past, nothing booked over it, on a day and in the part of day asked."""
        try:
            start = datetime.fromisoformat(iso)
        except (TypeError, ValueError):
            return False
        if start.tzinfo is None:
            return False
        return any(
            slot.start == start and slot.end - slot.start == timedelta(minutes=self.minutes) for slot in self.free
        )


def plan_meeting(
    calendar: OwnerCalendar | None,
    hours: OwnerHours,
    text: str,
    *,
    now: datetime,
    sender_zone: tuple[tzinfo, str] | None = None,
) -> Scheduling | None:
    """The scheduling part of a reply to an email whose words are `text` (None: it does not ask to meet)."""
    today = now.astimezone(hours.zone).date()
    ask = meeting_ask(text, today)
    if ask is None:
        return None
    minutes = ask.minutes or hours.meeting_minutes
    zone, zone_name = hours.zone, hours.zone_name
    theirs = sender_zone if sender_zone is not None and _differs(sender_zone[0], zone, now) else None
    base = Scheduling(
        ask,
        minutes,
        zone,
        zone_name,
        theirs[0] if theirs else None,
        theirs[1] if theirs else None,
        problems=tuple(p.message for p in hours.problems),
        asked_at=now,
    )
    if calendar is None:
        return base
    window = calendar.window(today, zone, zone_name)
    working = tuple(hours.working_day(d) for d in range(7))
    days = [d for d in (ask.days or next_working_days(today, working)) if d >= today]
    slots = free_slots(window.spans(hours.buffer_minutes), hours, days, minutes, now=now, horizon=window.horizon)
    if ask.part is not None:  # "Thursday afternoon": only times wholly inside it, on the owner's clock
        slots = [slot for slot in slots if _within(slot, ask.part, zone)]
    return Scheduling(
        ask,
        minutes,
        zone,
        zone_name,
        base.sender_zone,
        base.sender_zone_name,
        has_calendar=True,
        proposed=tuple(spread(slots, zone, PROPOSED)),
        free=tuple(slots),  # every free slot of the asked days (at most free_slots' limit): what a reply may name
        problems=base.problems + window.problems,
        read=window.read,
        asked_at=now,
    )


def _within(slot: Slot, part: str, zone: tzinfo) -> bool:
    begin, end = PARTS[part]
    start, finish = slot.start.astimezone(zone), slot.end.astimezone(zone)
    return start.date() == finish.date() and begin <= start.time() and finish.time() <= end


def _differs(theirs: tzinfo, ours: tzinfo, now: datetime) -> bool:
    """Whether two zones show a different clock in the coming weeks (same offset now and in a month: the same)."""
    later = now + timedelta(days=30)
    return any(moment.astimezone(theirs).utcoffset() != moment.astimezone(ours).utcoffset() for moment in (now, later))


_DAYS_DE = ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")
_MONTHS_DE = (
    "Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"
)  # fmt: skip
_DAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS_EN = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December",
)  # fmt: skip
_DAYS_FR = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")
_MONTHS_FR = (
    "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre",
    "décembre",
)  # fmt: skip
# A rules-mode proposal's first and last line, in the email's language (h0.drafting.scheduling finds an earlier
# proposal in a draft by them).
_SAID = {
    "en": ("Here are some times that work for me:", "Let me know which one suits you."),
    "de": ("Folgende Zeiten passen mir:", "Sagen Sie mir gern, welche Ihnen passt."),
    "fr": ("Voici quelques créneaux qui me conviennent :", "Dites-moi lequel vous convient."),
}
PROPOSAL_LINES = tuple(line for pair in _SAID.values() for line in pair)
_FOR_YOU = {"en": "for you", "de": "bei Ihnen", "fr": "chez vous"}


def _day(slot: Slot, zone: tzinfo, language: str = "en") -> str:
    """The slot's day in `zone`, named in English, German or French (never the machine's locale)."""
    local = slot.start.astimezone(zone)
    if language == "de":
        return f"{_DAYS_DE[local.weekday()]}, {local.day}. {_MONTHS_DE[local.month - 1]}"
    if language == "fr":
        return f"{_DAYS_FR[local.weekday()]} {local.day} {_MONTHS_FR[local.month - 1]}"
    return f"{_DAYS_EN[local.weekday()]} {local.day} {_MONTHS_EN[local.month - 1]}"


def _span(slot: Slot, zone: tzinfo, *, day: bool = True, language: str = "en") -> str:
    start, end = slot.start.astimezone(zone), slot.end.astimezone(zone)
    times = f"{start:%H:%M}–{end:%H:%M}"
    return f"{_day(slot, zone, language)}, {times}" if day else times
