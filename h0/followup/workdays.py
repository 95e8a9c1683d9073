"""How FOLLOW_UP_DAYS counts: working days, Monday to Friday, in the owner's local time.

A deadline is N working days after a moment, at the same time of day: a message of Friday 17:00
is due on Tuesday 17:00 with N = 2. Saturdays and Sundays do not count: a message written on a
weekend starts counting on Monday at 00:00 (Saturday 10:00 + 2 → Wednesday 00:00). A fraction
counts that share of a working day's 24 hours (0.5 → 12 hours, weekends skipped). Public holidays
are not known to H0: they count as working days.

Local time is the machine's, daylight saving included (naive local datetimes, converted by the
OS's rules); tests pass a fixed `tz`.
"""

from __future__ import annotations

import datetime as dt

MAX_DAYS = 366  # a longer wait is treated as this one


def _moment(epoch: float, tz: dt.tzinfo | None) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch, tz) if tz is not None else dt.datetime.fromtimestamp(epoch)


def _epoch(moment: dt.datetime) -> float:
    return moment.timestamp()  # naive: local time by the OS's rules (DST included)


def _skip_weekend(moment: dt.datetime) -> dt.datetime:
    """A moment on a Saturday or Sunday becomes the next Monday at 00:00."""
    if moment.weekday() < 5:
        return moment
    monday = moment + dt.timedelta(days=7 - moment.weekday())
    return monday.replace(hour=0, minute=0, second=0, microsecond=0)


def _next_weekday(moment: dt.datetime) -> dt.datetime:
    """Past a weekend at the same time of day (what is left of a wait carries over to Monday)."""
    while moment.weekday() >= 5:
        moment += dt.timedelta(days=1)
    return moment


def add_working_days(start: float, days: float, *, tz: dt.tzinfo | None = None) -> float:
    """The epoch `days` working days after `start` (see the module docstring)."""
    days = max(0.0, min(float(days), MAX_DAYS))
    moment = _skip_weekend(_moment(start, tz))
    whole = int(days)
    for _ in range(whole):
        moment = _next_weekday(moment + dt.timedelta(days=1))
    rest = days - whole
    if rest > 0:
        moment = _next_weekday(moment + dt.timedelta(days=rest))
    return _epoch(moment)


def working_days_between(start: float, end: float, *, tz: dt.tzinfo | None = None) -> int:
    """Whole working days from `start` to `end` (0 when `end` is not later): how old something is."""
    if end <= start:
        return 0
    moment, stop = _skip_weekend(_moment(start, tz)), _moment(end, tz)
    count = 0
    while count < MAX_DAYS:
        moment = _next_weekday(moment + dt.timedelta(days=1))
        if moment > stop:
            break
        count += 1
    return count
