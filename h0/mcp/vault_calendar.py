"""The vault server's calendar tool: `free_slots`, the owner's free times in a date range.

It answers with times only — no event's title, place or notes, whoever asks — in the owner's
time zone and working hours from `H0_Profile.md`. Without a calendar source it says so and
lists no time: an agent gets nothing to invent from.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field

from h0.calendar.free import free_slots as free_times
from h0.drafting.profile import load_profile
from h0.errors import InvalidRequest
from h0.mcp.base import READ_ONLY, H0Server

if TYPE_CHECKING:
    from h0.calendar import OwnerCalendar

MAX_RANGE_DAYS = 60
MAX_SLOTS = 200


class FreeSlot(BaseModel):
    start: str = Field(description="ISO 8601 with the owner's UTC offset.")
    end: str = Field(description="ISO 8601 with the owner's UTC offset.")


class FreeSlots(BaseModel):
    """What free_slots returns: the owner's free times of the asked length (times only, never an event)."""

    has_calendar: bool = Field(description="False: no calendar is configured (CALENDAR_ICS, CALDAV_URL); no times.")
    timezone: str = Field(description="The owner's time zone (H0_Profile.md `timezone`).")
    minutes: int
    start: str = Field(description="The first day looked at (owner's zone).")
    end: str = Field(description="The last day looked at (owner's zone).")
    slots: list[FreeSlot]
    problems: list[str] = Field(description="Calendar sources that could not be read now, or profile problems.")


def add_calendar_tools(server: H0Server, root: Path, calendar: OwnerCalendar | None) -> None:
    """Register free_slots on the vault server."""

    @server.typed_tool(FreeSlots, annotations=READ_ONLY, title="Free times in the owner's calendar")
    def free_slots(
        start: Annotated[
            str | None, Field(default=None, description="First day, YYYY-MM-DD (default: today in the owner's zone).")
        ] = None,
        end: Annotated[
            str | None, Field(default=None, description="Last day, YYYY-MM-DD (default: 7 days after the first).")
        ] = None,
        minutes: Annotated[
            int | None,
            Field(default=None, ge=5, le=480, description="The meeting's length (default: the profile's)."),
        ] = None,
    ) -> FreeSlots:
        """The owner's free times of a given length inside their working hours, between two days. Times only:
        the owner's events are never described. Propose these in a reply draft; never another time."""
        profile = load_profile(root)
        hours = profile.hours
        now = datetime.now(UTC)
        today = now.astimezone(hours.zone).date()
        first = _day(start, "start") if start else today
        last = _day(end, "end") if end else first + timedelta(days=7)
        if last < first:
            raise InvalidRequest("`end` is before `start`.", start=str(first), end=str(last))
        if (last - first).days > MAX_RANGE_DAYS:
            raise InvalidRequest(f"At most {MAX_RANGE_DAYS} days at a time.", start=str(first), end=str(last))
        length = minutes or hours.meeting_minutes
        problems = [p.message for p in hours.problems]
        found = []
        if calendar is not None:
            window = calendar.window(min(first, today), hours.zone, hours.zone_name)
            days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
            slots = free_times(
                window.spans(hours.buffer_minutes),
                hours,
                days,
                length,
                now=now,
                horizon=window.horizon,
                limit=MAX_SLOTS,
            )
            found = [FreeSlot(start=s.iso(hours.zone), end=s.end.astimezone(hours.zone).isoformat()) for s in slots]
            problems += list(window.problems)
        return FreeSlots(
            has_calendar=calendar is not None,
            timezone=hours.zone_name,
            minutes=length,
            start=first.isoformat(),
            end=last.isoformat(),
            slots=found,
            problems=problems,
        )


def _day(text: str, what: str) -> date:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        raise InvalidRequest(f"`{what}` must be a day like 2026-12-03.", value=text[:40]) from None
