"""A calendar made cheap to expand over one window: what the expansion would walk for minutes is moved,
dropped or left out first.

`recurring-ical-events` asks dateutil for a series' occurrences in a window, and dateutil walks the
series from its DTSTART, keeping every step: a daily series from the year 1000 is 375,000 steps (and
as many objects) for each look, a minutely one half a billion. So, series by series:

- one repeating every second, minute or hour, or more than MAX_PER_DAY times a day, is left out: no
  meeting does that (a flood);
- one starting so long before the window that the walk to it would be long (MAX_WALK periods: a
  daily series of 14 years, a weekly one of a century) has its DTSTART moved forward by whole periods
  (its INTERVAL of days, weeks, months or years) to just before the window, and its DTEND replaced by
  the DURATION it had. A rule's periods, and the defaults it takes
  from DTSTART (the time of day, the weekday, the day of the month), repeat with them, so the window
  holds the same occurrences. The moved DTSTART, which a series always counts as an occurrence, lies
  before the window by more than the event's length: it is never busy time;
- a COUNT is dropped when the series cannot have used it up by the window's end (more than any number
  of occurrences since its start: `COUNT=999999999`); a small one (MAX_COUNT) is kept as it is, a short
  walk; a series with a large COUNT it may have used up is left out;
- one that ended (UNTIL) before the window is dropped: it has nothing in it;
- past MAX_SERIES recurring series still running (a person has dozens), the rest are left out: each
  costs every look at the window, and each occurrence costs the expansion a copy of the event.

Everything left out is said in one line per kind (the busy time it held is not known: the caller
decides what that costs).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import icalendar

from h0.errors import H0Error, ParseError

FLOODS = frozenset({"SECONDLY", "MINUTELY", "HOURLY"})
MAX_PER_DAY = 4  # occurrences a day by BYHOUR/BYMINUTE/BYSECOND: more is a flood
MAX_COUNT = 10_000  # a COUNT this small is walked as it is
MAX_WALK = 5_000  # periods walked before the window: more (a daily series of 14 years) and the series is moved
MAX_SERIES = 500  # recurring series still running, expanded per calendar
MAX_LENGTH = timedelta(days=366)  # a longer event is never moved (its occurrences overlap too far)
SLACK = timedelta(days=2)  # kept between a moved DTSTART (plus its length) and the window: zones, floating times
# (days a period spans at least, days it spans at most) per frequency: bounds on periods and on occurrences
_PERIOD_DAYS = {"DAILY": (1, 1), "WEEKLY": (7, 7), "MONTHLY": (28, 31), "YEARLY": (365, 366)}


@dataclass(frozen=True, slots=True)
class Bounded:
    """A calendar ready to expand over one window, and what was left out of it."""

    calendar: icalendar.Calendar
    problems: tuple[H0Error, ...]


def bounded(calendar: icalendar.Calendar, start: datetime, end: datetime, name: str) -> Bounded:
    """The calendar to expand over [start, end): floods, series that cannot be bounded and those past
    MAX_SERIES left out, old series moved to the window (the same object when nothing changed), and one
    problem per kind left out."""
    floods = uncountable = extra = series = 0
    replaced: dict[int, icalendar.Component | None] = {}
    for component in calendar.subcomponents:
        rule: Any = component.get("RRULE") if component.name == "VEVENT" else None
        if rule is None:
            continue
        if _ended(rule, start):
            replaced[id(component)] = None  # over before the window: nothing to expand
            continue
        if series >= MAX_SERIES:
            extra += 1
            replaced[id(component)] = None
            continue
        series += 1
        if not hasattr(rule, "get"):
            continue  # several rules (RFC 5545 deprecates them): expanded as they are
        if _flood(rule):
            floods += 1
            replaced[id(component)] = None
            continue
        moved = _moved(component, rule, start, end)
        if moved is _UNCOUNTABLE:
            uncountable += 1
            replaced[id(component)] = None
        elif moved is not None:
            replaced[id(component)] = moved
    if not replaced:
        return Bounded(calendar, ())
    kept = icalendar.Calendar()
    for key, value in calendar.items():
        kept[key] = value
    for component in calendar.subcomponents:
        new = replaced.get(id(component), component)
        if new is not None:
            kept.add_component(new)
    problems: list[H0Error] = []
    if floods:
        problems.append(
            ParseError(
                f"{name}: H0 left out {floods} event series repeating every second, minute or hour.", source=name
            )
        )
    if uncountable:
        problems.append(
            ParseError(
                f"{name}: H0 left out {uncountable} event series starting long ago with a COUNT it cannot follow "
                "to today cheaply.",
                source=name,
            )
        )
    if extra:
        problems.append(
            ParseError(f"{name}: H0 left out {extra} event series past the first {MAX_SERIES}.", source=name)
        )
    return Bounded(kept, tuple(problems))


def _ended(rule: Any, start: datetime) -> bool:
    """The rule's UNTIL lies more than a year before the window: it has no occurrence there (the year
    covers any event's length, or the rule is moved or left out by the other bounds anyway)."""
    if not hasattr(rule, "get"):
        return False
    until = rule.get("UNTIL")
    found = until[0] if isinstance(until, list) and until else until
    try:
        return isinstance(found, date) and _utc(found) < start - MAX_LENGTH
    except (TypeError, ValueError, OverflowError):
        return False


def _flood(rule: Any) -> bool:
    frequencies = {str(f).upper() for f in rule.get("FREQ", [])}
    per_day = 1
    for part in ("BYHOUR", "BYMINUTE", "BYSECOND"):
        per_day *= max(len(rule.get(part, [])), 1)
    return bool(frequencies & FLOODS) or per_day > MAX_PER_DAY


_UNCOUNTABLE = icalendar.Event()  # `_moved`'s answer for a series to leave out


def _moved(component: icalendar.Component, rule: Any, start: datetime, end: datetime) -> icalendar.Component | None:
    """A copy of the series with its DTSTART moved to just before `start` (and an unreachable COUNT
    dropped), None when it is fine as it is, `_UNCOUNTABLE` when it cannot be bounded."""
    frequencies = [str(f).upper() for f in rule.get("FREQ", [])]
    if len(frequencies) != 1 or frequencies[0] not in _PERIOD_DAYS:
        return None
    frequency = frequencies[0]
    interval = _number(rule.get("INTERVAL"), 1)
    prop: Any = component.get("DTSTART")
    first = getattr(prop, "dt", None)
    length = _length(component, first)
    if not isinstance(first, date) or length is None or length > MAX_LENGTH or interval < 1:
        return None
    begin = _utc(first)
    target = start - length - SLACK
    least, most = _PERIOD_DAYS[frequency]
    if (target - begin).days // (least * interval) <= MAX_WALK:
        return None  # a short walk: expanded as it is
    count = _number(rule.get("COUNT"), 0)
    keep_count = False
    if count:
        periods = (end - begin).days // (least * interval) + 2
        per_period = most * math.prod(max(len(rule.get(p, [])), 1) for p in ("BYHOUR", "BYMINUTE", "BYSECOND"))
        if count <= periods * per_period + 1:  # it may have run out by the window's end
            if count > MAX_COUNT:
                return _UNCOUNTABLE
            keep_count = True  # a short walk: expanded as it is
    if keep_count:
        return None
    shifted = _shift(first, frequency, interval, target)
    if shifted is None:
        return None
    moved = copy.copy(component)  # the same properties; the two replaced below are new objects
    new_start = icalendar.vDDDTypes(shifted)
    new_start.params = icalendar.Parameters(prop.params)
    moved["DTSTART"] = new_start
    if "DTEND" in moved:  # the end kept its date: the event's length goes with the new start instead
        del moved["DTEND"]
        moved["DURATION"] = icalendar.vDuration(length)
    if count:
        new_rule = icalendar.vRecur(rule)
        del new_rule["COUNT"]
        moved["RRULE"] = new_rule
    return moved


def _shift(first: date, frequency: str, interval: int, target: datetime) -> date | None:
    """`first` moved forward by whole periods (of `interval` frequency units) to the last one before `target`."""
    begin = _utc(first)
    if frequency in ("DAILY", "WEEKLY"):
        step = interval * (7 if frequency == "WEEKLY" else 1)
        return first + timedelta(days=(target - begin).days // step * step)
    months = interval * (12 if frequency == "YEARLY" else 1)
    if (first.month, first.day) == (2, 29):
        months = math.lcm(months, 4800)  # a 29 February comes back every 400 years for sure
    elif first.day > 28:
        months = math.lcm(months, 12)  # the same month, so the same last days
    gap = (target.year - begin.year) * 12 + target.month - begin.month - 1
    steps = gap // months
    if steps <= 0:
        return None
    year, month = divmod(first.year * 12 + first.month - 1 + steps * months, 12)
    return first.replace(year=year, month=month + 1)


def _length(component: icalendar.Component, first: Any) -> timedelta | None:
    end: Any = component.get("DTEND")
    duration: Any = component.get("DURATION")
    try:
        if end is not None:
            return max(_utc(end.dt) - _utc(first), timedelta(0))
        if duration is not None and isinstance(duration.dt, timedelta):
            return max(duration.dt, timedelta(0))
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
    return timedelta(days=1) if not isinstance(first, datetime) else timedelta(0)


def _utc(value: date) -> datetime:
    if not isinstance(value, datetime):
        return datetime.combine(value, time(0), UTC)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _number(values: Any, default: int) -> int:
    found = values[0] if isinstance(values, list) and values else values
    try:
        return int(found) if found is not None else default
    except (TypeError, ValueError):
        return default
