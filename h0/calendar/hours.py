"""The owner's hours: time zone, working hours and meeting length, parsed from `H0_Profile.md`'s properties.

    timezone: Europe/Berlin            # IANA name; empty = this machine's zone
    working_hours: Mon-Fri 09:00-17:00 # several ranges: "Mon-Thu 09:00-12:00, 13:00-17:00; Fri 09:00-13:00"
    meeting_minutes: 30                # a proposed meeting's length unless the email says another
    meeting_buffer_minutes: 0          # kept free before and after every busy time

A bad value is a typed error (h0 doctor shows it) and its default is used: a typo in the profile
never stops a draft, and never makes H0 propose a time outside the hours the owner meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, time, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from h0.errors import H0Error, InvalidRequest
from h0.vault.profile_fields import ProfileFields

DEFAULT_WORKING_HOURS = "Mon-Fri 09:00-17:00"
DEFAULT_MEETING_MINUTES = 30
MAX_MEETING_MINUTES = 8 * 60
MAX_BUFFER_MINUTES = 120

# English and German day names (three letters are enough to tell them apart).
_DAYS = {
    "mon": 0,
    "tue": 1,
    "wed": 2,
    "thu": 3,
    "fri": 4,
    "sat": 5,
    "sun": 6,
    "mo": 0,
    "di": 1,
    "mi": 2,
    "do": 3,
    "fr": 4,
    "sa": 5,
    "so": 6,
}
_DAY = r"([A-Za-z]{2,9})"
_DAY_SPEC = re.compile(rf"^{_DAY}(?:\s*-\s*{_DAY})?$")
_RANGE = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*[-–]\s*(\d{1,2})(?::(\d{2}))?$")

Range = tuple[time, time]


@dataclass(frozen=True, slots=True)
class OwnerHours:
    """When the owner meets: per weekday (0 = Monday) the ranges of the day, in `zone`."""

    zone: tzinfo
    zone_name: str
    week: tuple[tuple[Range, ...], ...]  # seven entries, Monday first
    meeting_minutes: int = DEFAULT_MEETING_MINUTES
    buffer_minutes: int = 0
    problems: tuple[H0Error, ...] = field(default=(), compare=False)

    def working_day(self, weekday: int) -> bool:
        return bool(self.week[weekday])


def machine_zone() -> tuple[tzinfo, str]:
    """This machine's time zone: its IANA name when the system says it, else its fixed offset now."""
    local = datetime.now().astimezone().tzinfo
    key = getattr(local, "key", None)
    if isinstance(key, str):
        return local or ZoneInfo("UTC"), key
    try:
        link = str(Path("/etc/localtime").resolve())
        if "zoneinfo/" in link:
            name = link.split("zoneinfo/", 1)[1]
            return ZoneInfo(name), name
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    return local or ZoneInfo("UTC"), str(local)


def zone_named(name: str) -> tzinfo | None:
    """The IANA zone of this name, or None (unknown, or not a plain name)."""
    if not name or len(name) > 64 or not re.fullmatch(r"[A-Za-z0-9_+\-/]+", name) or ".." in name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def parse_working_hours(text: str) -> tuple[tuple[Range, ...], ...]:
    """`Mon-Fri 09:00-17:00; Sat 10:00-12:00` as seven weekdays' ranges; ValueError saying what is wrong.

    Groups are separated by `;` (or by a day name starting a new group after a comma); a day
    group may list several ranges separated by commas."""
    week: list[list[Range]] = [[] for _ in range(7)]
    groups = [g.strip() for g in re.split(r";|\n", text) if g.strip()]
    if not groups:
        raise ValueError("it is empty")
    for group in groups:
        days: list[int] | None = None
        for part in (p.strip() for p in group.split(",") if p.strip()):
            head, _, rest = part.partition(" ")
            if _DAY_SPEC.match(head) and not head[0].isdigit():
                days = _day_span(head)
                part = rest.strip()
            if days is None:
                raise ValueError(f"{part!r} does not start with a day (Mon-Fri 09:00-17:00)")
            if not part:
                raise ValueError(f"{head!r} has no hours")
            start, end = _clock_range(part)
            for day in days:
                week[day].append((start, end))
    return tuple(tuple(sorted(day)) for day in week)


def _day_span(spec: str) -> list[int]:
    match = _DAY_SPEC.match(spec)
    if match is None:
        raise ValueError(f"{spec!r} is not a day")
    first, last = (_day(match.group(1)), _day(match.group(2) or match.group(1)))
    span = [first]
    while span[-1] != last:
        span.append((span[-1] + 1) % 7)
    return span


def _day(name: str) -> int:
    key = name.lower()
    for length in (3, 2):
        if key[:length] in _DAYS and (length == 3 or len(key) == 2):
            return _DAYS[key[:length]]
    raise ValueError(f"{name!r} is not a day name (Mon, Tue, … or Mo, Di, …)")


def _clock_range(text: str) -> Range:
    match = _RANGE.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a range of hours like 09:00-17:00")
    h1, m1, h2, m2 = (int(g or 0) for g in match.groups())
    if h1 > 23 or h2 > 24 or m1 > 59 or m2 > 59 or (h2 == 24 and m2):
        raise ValueError(f"{text!r} is not a time of day")
    start = time(h1, m1)
    end = time(23, 59, 59) if h2 == 24 else time(h2, m2)
    if end <= start:
        raise ValueError(f"{text!r} ends before it starts")
    return start, end


def _minutes(value: Any, default: int, most: int, key: str, problems: list[H0Error], path: str) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if not 0 <= number <= most or (key == "meeting_minutes" and number < 5):
        problems.append(
            InvalidRequest(
                f"{path}: `{key}: {str(value)[:40]}` is not a number of minutes (up to {most}); H0 uses {default}.",
                path=path,
                key=key,
            )
        )
        return default
    return number


def parse_hours(fields: ProfileFields, path: str = "H0_Profile.md") -> OwnerHours:
    """The owner's hours from the profile's properties; each bad value a problem and its default used."""
    problems: list[H0Error] = []
    zone, zone_name = machine_zone()
    raw_zone = fields.timezone
    if raw_zone:
        named = zone_named(raw_zone)
        if named is None:
            problems.append(
                InvalidRequest(
                    f"{path}: `timezone: {raw_zone.strip()[:60]}` is not an IANA time zone name (like Europe/Berlin); "
                    f"H0 uses this machine's ({zone_name}).",
                    path=path,
                    key="timezone",
                )
            )
        else:
            zone, zone_name = named, raw_zone
    text = fields.working_hours
    week = parse_working_hours(DEFAULT_WORKING_HOURS)
    if text:
        try:
            week = parse_working_hours(text[:500])
        except ValueError as exc:
            problems.append(
                InvalidRequest(
                    f"{path}: `working_hours: {text[:60]}` cannot be read ({exc}); H0 uses {DEFAULT_WORKING_HOURS}.",
                    path=path,
                    key="working_hours",
                )
            )
    minutes = _minutes(
        fields.meeting_minutes,
        DEFAULT_MEETING_MINUTES,
        MAX_MEETING_MINUTES,
        "meeting_minutes",
        problems,
        path,
    )
    buffer = _minutes(fields.meeting_buffer_minutes, 0, MAX_BUFFER_MINUTES, "meeting_buffer_minutes", problems, path)
    return OwnerHours(zone, zone_name, week, minutes, buffer, tuple(problems))
