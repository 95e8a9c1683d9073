"""Busy times from iCalendar text: every event in a window, recurrences expanded, as UTC intervals.

`icalendar` parses, `recurring-ical-events` expands RRULE/RDATE/EXDATE and moved occurrences
(RECURRENCE-ID) in their own time zones, DST included. What counts as busy:

- an event marked free (TRANSP:TRANSPARENT) or cancelled (STATUS:CANCELLED) does not;
- a tentative event does: the owner may go, and a time proposed over it could double-book them;
- an all-day event blocks its days in the owner's time zone; a floating time (no zone) is the
  owner's wall clock; every other time is converted from its own zone.

Each interval keeps its attendees (so a meeting with an email's sender may be named) and its
title for that one purpose only: `Busy.title` is never shown for any other event (h0.calendar.privacy).
A calendar is hostile input: its expansion stops after MAX_OCCURRENCES (an RRULE firing every
second, an absurd COUNT), and what was not reached is the window's `horizon`, never free time.
"""

from __future__ import annotations

import itertools
import time as clock
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

import icalendar
import recurring_ical_events

from h0.errors import H0Error, ParseError

MAX_OCCURRENCES = 5_000  # per calendar and window: ~80 events a day for two months, far past any person's
MAX_EXPAND_SECONDS = 2.0  # a backstop: a series built to be slow to expand stops here
_FLOOD = {"SECONDLY", "MINUTELY"}  # no meeting repeats every second or minute: such a series is left out
MAX_TITLE_CHARS = 120


@dataclass(frozen=True, slots=True)
class Busy:
    """One busy interval (UTC), with who attends it: titles only ever reach someone who attends."""

    start: datetime
    end: datetime
    attendees: frozenset[str] = frozenset()
    title: str = field(default="", repr=False)


@dataclass(frozen=True, slots=True)
class Expanded:
    """A calendar's busy intervals in a window; `horizon` < the window's end when expansion was cut short."""

    busy: tuple[Busy, ...]
    horizon: datetime
    problems: tuple[H0Error, ...] = ()


def parse_calendar(data: bytes, name: str) -> icalendar.Calendar:
    """The calendar in `data`, or a ParseError naming the source (never icalendar's own exception)."""
    try:
        calendars = icalendar.Calendar.from_ical(data, multiple=True)
    except (ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
        raise ParseError(f"{name} is not an iCalendar file ({_short(exc)}).", source=name) from None
    if not calendars:
        raise ParseError(f"{name} holds no calendar (no BEGIN:VCALENDAR).", source=name)
    if len(calendars) == 1:
        return calendars[0]
    merged = icalendar.Calendar()
    for calendar in calendars:
        for component in calendar.subcomponents:
            merged.add_component(component)
    return merged


def expand(calendar: icalendar.Calendar, start: datetime, end: datetime, zone: tzinfo, name: str) -> Expanded:
    """The busy intervals of `calendar` overlapping [start, end) (aware datetimes), in order of start."""
    problems: list[H0Error] = []
    busy: list[Busy] = []
    horizon = end
    calendar, flooding = _without_floods(calendar)
    if flooding:
        problems.append(
            ParseError(f"{name}: H0 left out {flooding} event series repeating every second or minute.", source=name)
        )
    deadline = clock.monotonic() + MAX_EXPAND_SECONDS
    try:
        query = recurring_ical_events.of(calendar, skip_bad_series=True)
        occurrences = query.after(start)
        for event in itertools.islice(occurrences, MAX_OCCURRENCES + 1):
            interval = _interval(event, zone)
            if interval is None:
                continue
            if interval[0] >= end:
                break
            if len(busy) >= MAX_OCCURRENCES or clock.monotonic() > deadline:
                horizon = interval[0]
                problems.append(
                    ParseError(
                        f"{name} has more events before {end:%Y-%m-%d} than H0 reads ({MAX_OCCURRENCES}, or "
                        f"{MAX_EXPAND_SECONDS:g} s); H0 read them up to {horizon:%Y-%m-%d %H:%M} UTC and proposes "
                        "no time after that.",
                        source=name,
                    )
                )
                break
            if _counts_as_busy(event):
                busy.append(Busy(interval[0], interval[1], _attendees(event), _title(event)))
    except RecursionError:
        problems.append(ParseError(f"{name} nests too deeply to read; it is left out.", source=name))
        horizon = start
    except Exception as exc:  # noqa: BLE001 - a hostile series is this calendar's error, never a crash
        problems.append(ParseError(f"{name} could not be expanded ({_short(exc)}); it is left out.", source=name))
        horizon = start
    busy.sort(key=lambda b: b.start)
    return Expanded(tuple(busy), horizon, tuple(problems))


def _without_floods(calendar: icalendar.Calendar) -> tuple[icalendar.Calendar, int]:
    """The calendar without event series that repeat every second or minute, and how many were left out."""
    floods = []
    for component in calendar.subcomponents:
        rule: Any = component.get("RRULE") if component.name == "VEVENT" else None
        frequencies = rule.get("FREQ", []) if rule is not None and hasattr(rule, "get") else []
        if any(str(f).upper() in _FLOOD for f in frequencies):
            floods.append(component)
    if not floods:
        return calendar, 0
    kept = icalendar.Calendar()
    for key, value in calendar.items():
        kept[key] = value
    for component in calendar.subcomponents:
        if not any(component is flood for flood in floods):
            kept.add_component(component)
    return kept, len(floods)


def _counts_as_busy(event: icalendar.Event) -> bool:
    if str(event.get("TRANSP", "OPAQUE")).strip().upper() == "TRANSPARENT":
        return False
    return str(event.get("STATUS", "")).strip().upper() != "CANCELLED"


def _interval(event: icalendar.Event, zone: tzinfo) -> tuple[datetime, datetime] | None:
    raw_start: Any = event.get("DTSTART")
    if raw_start is None:
        return None
    start = raw_start.dt
    raw_end: Any = event.get("DTEND")
    duration: Any = event.get("DURATION")
    if raw_end is not None:
        end = raw_end.dt
    elif duration is not None:
        end = start + duration.dt
    else:
        end = start + (timedelta(days=1) if _is_date(start) else timedelta(0))
    begin, finish = _utc(start, zone), _utc(end, zone)
    if finish <= begin:
        return None  # a moment, not a span: blocks nothing
    return begin, finish


def _is_date(value: Any) -> bool:
    return isinstance(value, date) and not isinstance(value, datetime)


def _utc(value: Any, zone: tzinfo) -> datetime:
    if _is_date(value):  # all-day: the owner's day, from their midnight to the next
        return datetime.combine(value, time(0), zone).astimezone(UTC)
    if not isinstance(value, datetime):
        raise TypeError(f"not a time: {value!r}")
    moment: datetime = value if value.tzinfo is not None else value.replace(tzinfo=zone)  # floating: owner's clock
    return moment.astimezone(UTC)


def _attendees(event: icalendar.Event) -> frozenset[str]:
    people: set[str] = set()
    values = event.get("ATTENDEE")
    for value in values if isinstance(values, list) else [values] if values is not None else []:
        people.add(_address(value))
    organizer = event.get("ORGANIZER")
    if organizer is not None:
        people.add(_address(organizer))
    return frozenset(p for p in people if "@" in p)


def _address(value: Any) -> str:
    text = str(value).strip()
    return text[7:].lower() if text.lower().startswith("mailto:") else text.lower()


def _title(event: icalendar.Event) -> str:
    return " ".join(str(event.get("SUMMARY", "")).split())[:MAX_TITLE_CHARS]


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:120]}"
