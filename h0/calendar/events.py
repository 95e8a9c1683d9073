"""Busy times from iCalendar text: every event in a window, recurrences expanded, as UTC intervals.

`icalendar` parses, `recurring-ical-events` expands RRULE/RDATE/EXDATE and moved occurrences
(RECURRENCE-ID) in their own time zones, DST included. What counts as busy:

- an event marked free (TRANSP:TRANSPARENT) or cancelled (STATUS:CANCELLED) does not;
- a tentative event does: the owner may go, and a time proposed over it could double-book them;
- an all-day event blocks its days in the owner's time zone; a floating time (no zone) is the
  owner's wall clock; every other time is converted from its own zone.

An interval is a start and an end, nothing else: no title, place, note or attendee leaves the
parsed calendar, so none can reach a prompt, a draft or an MCP answer (docs/calendar.md).

A calendar is hostile input. One with more than MAX_EVENTS events is refused unparsed; before
expanding, floods and series that cannot be bounded are left out and series from long ago are moved
to the window (h0.calendar.bounds); the expansion stops after MAX_OCCURRENCES or MAX_EXPAND_SECONDS,
and what it did not reach is the window's `horizon`, never free time.
"""

from __future__ import annotations

import re
import time as clock
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

import icalendar
import recurring_ical_events

from h0.calendar.bounds import bounded
from h0.errors import H0Error, InvalidRequest, ParseError

MAX_OCCURRENCES = 10_000  # per calendar and window: ~160 events a day for two months, far past any person's
# A backstop: a calendar built to be slow to expand stops here. Expansion costs ~0.3-1 ms an event
# (recurring-ical-events), paid once per change of the calendar, not per email.
MAX_EXPAND_SECONDS = 10.0
# Events in one calendar, counted before it is parsed (~1 ms each to parse): years of a busy person's
# calendar; a larger one is refused rather than parsed for minutes.
MAX_EVENTS = 50_000
CHUNK = timedelta(days=7)
_EVENT = re.compile(rb"^BEGIN:VEVENT\s*$", re.IGNORECASE | re.MULTILINE)


class CalendarTooManyEvents(InvalidRequest):
    """A calendar with more than MAX_EVENTS events: refused unparsed."""


@dataclass(frozen=True, slots=True)
class Busy:
    """One busy interval (UTC): when, and nothing about what."""

    start: datetime
    end: datetime


@dataclass(frozen=True, slots=True)
class Expanded:
    """A calendar's busy intervals in a window; `horizon` < the window's end when expansion was cut short."""

    busy: tuple[Busy, ...]
    horizon: datetime
    problems: tuple[H0Error, ...] = ()


def parse_calendar(data: bytes, name: str) -> icalendar.Calendar:
    """The calendar in `data`, or a ParseError naming the source (never icalendar's own exception); one
    with more than MAX_EVENTS events is a CalendarTooManyEvents, unparsed."""
    events = sum(1 for _ in _EVENT.finditer(data))
    if events > MAX_EVENTS:
        raise CalendarTooManyEvents(
            f"{name} has {events} events; H0 reads calendars of up to {MAX_EVENTS} (export a shorter range).",
            source=name,
            events=events,
        )
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
    busy: list[Busy] = []
    horizon = end
    ready = bounded(calendar, start, end, name)
    calendar, problems = ready.calendar, list(ready.problems)
    deadline = clock.monotonic() + MAX_EXPAND_SECONDS
    seen: set[tuple[str, datetime]] = set()
    try:
        query = recurring_ical_events.of(calendar, skip_bad_series=True)
        # A week at a time, so the bounds are checked long before a hostile calendar's whole window is built.
        chunk = start
        while chunk < end:
            if len(busy) > MAX_OCCURRENCES or clock.monotonic() > deadline:
                horizon = chunk
                problems.append(_cut(name, end, horizon))
                break
            upto = min(chunk + CHUNK, end)
            for event in query.between(chunk, upto):
                interval = _interval(event, zone)
                if interval is None or not _counts_as_busy(event):
                    continue
                key = (str(event.get("UID", "")), interval[0])
                if key not in seen:  # an event across two weeks comes in both
                    seen.add(key)
                    busy.append(Busy(interval[0], interval[1]))
            chunk = upto
        if len(busy) > MAX_OCCURRENCES:
            busy.sort(key=lambda b: b.start)
            horizon = min(horizon, busy[MAX_OCCURRENCES].start)
            busy = busy[:MAX_OCCURRENCES]
            if not any("than H0 reads" in p.message for p in problems):
                problems.append(_cut(name, end, horizon))
    except RecursionError:
        problems.append(ParseError(f"{name} nests too deeply to read; it is left out.", source=name))
        horizon = start
    except Exception as exc:  # noqa: BLE001 - a hostile series is this calendar's error, never a crash
        problems.append(ParseError(f"{name} could not be expanded ({_short(exc)}); it is left out.", source=name))
        horizon = start
    busy.sort(key=lambda b: b.start)
    return Expanded(tuple(busy), horizon, tuple(problems))


def _cut(name: str, end: datetime, horizon: datetime) -> ParseError:
    return ParseError(
        f"{name} has more events before {end:%Y-%m-%d} than H0 reads ({MAX_OCCURRENCES}, or {MAX_EXPAND_SECONDS:g} s); "
        f"H0 read them up to {horizon:%Y-%m-%d %H:%M} UTC and proposes no time after that.",
        source=name,
    )


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


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:120]}"
