"""Times a model wrote in a reply, checked against the owner's free times: an unchecked time blocks sending.

A model's text is hostile input. Every clock time in it ("14:00", "2pm", "2:30 p.m.", "14 Uhr")
is read with the day named before it in the same line ("Tuesday", "tomorrow", "3 December",
"2026-12-03"), and it is allowed only when it starts or ends a free slot on that day — in the
owner's zone or the sender's. Any other time becomes H0's
placeholder `[FILL: …]` naming why, which the send path refuses like every other placeholder
(h0.mail.compose.drafts), so a time the calendar does not back is never sent unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from h0.calendar.free import Slot
from h0.calendar.phrases import WEEKDAYS
from h0.calendar.proposal import Scheduling
from h0.calendar.when import MONTH, MONTHS

_TIME = re.compile(
    r"(?<![\d:.])(?:(?P<h24>[01]?\d|2[0-3])[:.](?P<m24>[0-5]\d)(?:\s*(?P<ap1>[ap])\.?m\.?\b|\s*uhr\b)?"
    r"|(?P<h12>1[0-2]|0?[1-9])\s*(?P<ap2>[ap])\.?m\.?\b"
    r"|(?P<huhr>[01]?\d|2[0-3])\s*uhr\b"
    # French "15h", "15 h 30": from 7h only, so that a length ("un atelier de 2 h") is not read as a time.
    r"|(?P<hfr>0?[7-9]|1\d|2[0-3])\s?h(?:\s?(?P<mfr>[0-5]\d))?\b)(?![\d:])",
    re.IGNORECASE,
)
_DAY_WORDS = re.compile(
    r"\b(?P<weekday>" + "|".join(WEEKDAYS) + r")\b"
    r"|\b(?P<tomorrow>tomorrow|morgen|demain)\b|\b(?P<today>today|heute|aujourd['’]hui)\b"
    r"|\b(?P<iso>\d{4}-\d{2}-\d{2})\b"
    rf"|\b(?P<d1>\d{{1,2}})(?:st|nd|rd|th|\.)?\s+(?:of\s+)?(?P<m1>{MONTH})\b"
    rf"|\b(?P<m2>{MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class NamedTime:
    """A time a reply names: the words, where they are, the clock time and the day (None: no day named)."""

    text: str
    start: int
    end: int
    hour: int
    minute: int
    day: date | None


def named_times(text: str, today: date) -> list[NamedTime]:
    """Every clock time in `text`, with the day named before it on the same line (if any)."""
    found = []
    for match in _TIME.finditer(text):
        hour, minute = _clock(match)
        line_start = text.rfind("\n", 0, match.start()) + 1
        day = None
        for words in _DAY_WORDS.finditer(text, line_start, match.start()):
            day = _day(words, today) or day
        found.append(NamedTime(match.group(0), match.start(), match.end(), hour, minute, day))
    return found


def read_times(text: str, scheduling: Scheduling) -> list[tuple[NamedTime, tzinfo]]:
    """Every time `text` names, with the zone it is read in: the owner's, unless the words right
    after it name the sender's ("06:00 for you", "09:00 your time", "15:00 New York time") — an
    ambiguous time is checked as the owner will read it in the draft."""
    now = scheduling.asked_at or datetime.now(UTC)
    cue = _sender_cue(scheduling.sender_zone_name) if scheduling.sender_zone is not None else None
    found = []
    for named in named_times(text, now.astimezone(scheduling.owner_zone).date()):
        after = text[named.end : named.end + 40].split("\n", 1)[0]
        theirs = cue is not None and scheduling.sender_zone is not None and cue.search(after) is not None
        found.append((named, scheduling.sender_zone if theirs and scheduling.sender_zone else scheduling.owner_zone))
    return found


def unfree_times(text: str, scheduling: Scheduling) -> list[NamedTime]:
    """The times `text` names that no free slot backs, on the day named."""
    allowed = scheduling.allowed() if scheduling.has_calendar else []
    marks: dict[tzinfo, set[tuple[date | None, tuple[int, int]]]] = {}
    bad = []
    for named, zone in read_times(text, scheduling):
        if zone not in marks:
            marks[zone] = _marks(allowed, zone)
        if (named.day, (named.hour, named.minute)) not in marks[zone]:
            bad.append(named)
    return bad


def _sender_cue(zone_name: str | None) -> re.Pattern[str]:
    """Words after a time saying it is the sender's: "for you", "your time", their zone or city."""
    words = [r"for you", r"your time", r"you(?:r)? (?:local )?time", r"bei (?:dir|ihnen)", r"ihrer zeit"]
    if zone_name:
        words.append(re.escape(zone_name))
        city = zone_name.rsplit("/", 1)[-1].replace("_", " ")
        if city and not city.upper().startswith("UTC"):
            words.append(re.escape(city))
    return re.compile(r"^[^.;!?]{0,20}?(?:" + "|".join(words) + r")", re.IGNORECASE)


def flag_unfree(text: str, scheduling: Scheduling) -> tuple[str, list[str]]:
    """`text` with each unbacked time made a placeholder that blocks sending, and the times flagged."""
    bad = unfree_times(text, scheduling)
    reason = (
        "H0 has no calendar to check it"
        if not scheduling.has_calendar
        else "H0 could not read your calendar to check it"
        if not scheduling.read
        else "not a free time in your calendar"
    )
    out, last, flagged = [], 0, []
    for named in bad:
        out.append(text[last : named.start])
        shown = " ".join(named.text.split())
        out.append(f"[FILL: {shown} — {reason}]")
        flagged.append(shown if named.day is None else f"{named.day.isoformat()} {shown}")
        last = named.end
    out.append(text[last:])
    return "".join(out), flagged


def _marks(slots: list[Slot], zone: tzinfo) -> set[tuple[date | None, tuple[int, int]]]:
    """(day, clock) of every slot's start and end in `zone`, and (None, clock) for a time named without a day."""
    marks: set[tuple[date | None, tuple[int, int]]] = set()
    for slot in slots:
        for moment in (slot.start, slot.end):
            local = moment.astimezone(zone)
            marks.add((local.date(), (local.hour, local.minute)))
            marks.add((None, (local.hour, local.minute)))
    return marks


def _clock(match: re.Match[str]) -> tuple[int, int]:
    if match.group("h24") is not None:
        hour, minute = int(match.group("h24")), int(match.group("m24"))
        ampm = match.group("ap1")
    elif match.group("h12") is not None:
        hour, minute, ampm = int(match.group("h12")), 0, match.group("ap2")
    elif match.group("hfr") is not None:
        hour, minute, ampm = int(match.group("hfr")), int(match.group("mfr") or 0), None
    else:
        hour, minute, ampm = int(match.group("huhr")), 0, None
    if ampm:
        hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
    return hour, minute


def _day(words: re.Match[str], today: date) -> date | None:
    if words.group("weekday"):
        weekday = WEEKDAYS[words.group("weekday").lower()]
        return today + timedelta(days=(weekday - today.weekday()) % 7)
    if words.group("tomorrow"):
        return today + timedelta(days=1)
    if words.group("today"):
        return today
    try:
        if words.group("iso"):
            return date.fromisoformat(words.group("iso"))
        day = int(words.group("d1") or words.group("d2"))
        month = MONTHS[(words.group("m1") or words.group("m2")).lower()]
        guess = date(today.year, month, day)
        return guess if guess >= today - timedelta(days=60) else date(today.year + 1, month, day)
    except (ValueError, KeyError):
        return None


def named_slots(text: str, scheduling: Scheduling) -> list[Slot]:
    """The free slots whose start a reply names, on its day and in the zone it is read in: what a model proposed."""
    readings = [(n.day, (n.hour, n.minute), zone) for n, zone in read_times(text, scheduling)]
    found: list[Slot] = []
    for slot in (*scheduling.proposed, *scheduling.free):
        for day, clock, zone in readings:
            local = slot.start.astimezone(zone)
            if slot not in found and day == local.date() and clock == (local.hour, local.minute):
                found.append(slot)
    return sorted(found, key=lambda s: s.start)
