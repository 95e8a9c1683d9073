"""The owner's calendar: busy times from .ics files, iCal feeds and CalDAV, and the free times a reply proposes.

    sources.py   where a calendar comes from (file, http feed, CalDAV), read as bytes, size-bound
    cache.py     the last good copy of each source and how its last read went (doctor, status)
    bounds.py    a hostile calendar made cheap to expand: floods left out, ancient series moved to the window
    events.py    iCalendar → busy intervals: recurrences, exceptions, zones, all-day, free/cancelled
    service.py   OwnerCalendar: every source merged, kept warm per process, read in the background
    hours.py     the owner's time zone, working hours and meeting length (H0_Profile.md)
    free.py      working hours minus busy times, cut into slots
    phrases.py   does an email ask to meet (en/de/fr): which sentences request a meeting
    when.py      the days, part of day and length a request names ("Donnerstagnachmittag", "one-hour")
    proposal.py  the scheduling part of a reply: the times to propose, in whose zones
    checks.py    times a model wrote, checked against the free times (unbacked ones block sending)

An event leaves this room as a busy interval and nothing else: no title, place, note or attendee
reaches a prompt, a draft or an MCP answer, whoever the email says it is from (docs/calendar.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from h0.lazy import lazy_names

if TYPE_CHECKING:
    from h0.calendar.hours import OwnerHours, parse_hours
    from h0.calendar.proposal import Scheduling, plan_meeting
    from h0.calendar.service import OwnerCalendar

__all__ = ["OwnerCalendar", "OwnerHours", "Scheduling", "parse_hours", "plan_meeting"]

# Loaded when first asked for (PEP 562): `h0 status` reads the calendar cache's state
# (h0.calendar.cache) without loading the iCalendar parser.
_HOMES = {
    "OwnerCalendar": "h0.calendar.service",
    "OwnerHours": "h0.calendar.hours",
    "Scheduling": "h0.calendar.proposal",
    "parse_hours": "h0.calendar.hours",
    "plan_meeting": "h0.calendar.proposal",
}

__getattr__ = lazy_names(__name__, _HOMES)
