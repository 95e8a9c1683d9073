"""Calendar test helpers: the .ics fixtures (tests/fixtures/calendar) and the owner's hours."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from pathlib import Path

import pytest

from h0.calendar.hours import OwnerHours, parse_hours
from h0.vault.profile_fields import profile_fields

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "calendar"
BERLIN_HOURS = {"timezone": "Europe/Berlin", "working_hours": "Mon-Fri 09:00-17:00", "meeting_minutes": 30}


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def at(zone: tzinfo, year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    """A wall-clock time in `zone`, as UTC (what busy intervals hold)."""
    return datetime(year, month, day, hour, minute, tzinfo=zone).astimezone(UTC)


@pytest.fixture
def berlin() -> OwnerHours:
    return parse_hours(profile_fields(BERLIN_HOURS))
