"""Busy times from real .ics files: recurrences with exceptions and moved occurrences, all-day,
floating, UTC and other-zone events, free/cancelled/tentative events, DST, a ten-year series,
and a hostile calendar that costs one line."""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from h0.calendar import events
from h0.calendar.events import Busy, expand, parse_calendar
from h0.errors import ParseError
from tests.calendar.conftest import at, fixture_bytes

BERLIN = ZoneInfo("Europe/Berlin")


def week_busy() -> set[tuple[datetime, datetime]]:
    calendar = parse_calendar(fixture_bytes("week.ics"), "week.ics")
    found = expand(calendar, at(BERLIN, 2026, 11, 30), at(BERLIN, 2026, 12, 5), BERLIN, "week.ics")
    assert found.problems == () and found.horizon == at(BERLIN, 2026, 12, 5)
    return {(b.start, b.end) for b in found.busy}


def berlin(day: int, hour: int, minute: int = 0, *, minutes: int = 30) -> tuple[datetime, datetime]:
    start = at(BERLIN, 2026, 12, day, hour, minute) if day < 30 else at(BERLIN, 2026, 11, day, hour, minute)
    return start, start + timedelta(minutes=minutes)


def test_recurrences_expand_with_their_exceptions_and_moved_occurrences():
    busy = week_busy()
    # Mon, Wed (moved to 15:00), Thu, Fri; Tuesday 1 December is an EXDATE.
    assert {berlin(30, 9), berlin(2, 15), berlin(3, 9), berlin(4, 9)} <= busy
    assert berlin(1, 9) not in busy and berlin(2, 9) not in busy


def test_every_time_zone_is_converted_and_floating_times_are_the_owners_clock():
    busy = week_busy()
    new_york = ZoneInfo("America/New_York")
    assert (at(new_york, 2026, 12, 1, 8), at(new_york, 2026, 12, 1, 9)) in busy  # the board call
    assert berlin(1, 14, minutes=60) in busy  # ... which is 14:00 in Berlin
    assert berlin(4, 10, minutes=60) in busy  # the floating dentist: the owner's clock
    assert (datetime(2026, 12, 4, 13, tzinfo=UTC), datetime(2026, 12, 4, 14, tzinfo=UTC)) in busy  # UTC lunch talk


def test_an_all_day_event_blocks_the_owners_whole_day():
    assert (at(BERLIN, 2026, 12, 3), at(BERLIN, 2026, 12, 4)) in week_busy()


def test_free_and_cancelled_events_are_not_busy_and_tentative_ones_are():
    busy = week_busy()
    assert berlin(1, 13, minutes=240) not in busy  # focus time, shown as free
    assert berlin(1, 10, minutes=120) not in busy  # the cancelled review
    assert berlin(2, 10, minutes=60) in busy  # tentative blocks: proposing over it could double-book


def test_a_busy_interval_is_when_and_nothing_about_what():
    """Titles, places, notes and attendees stay in the parsed file: no interval carries them anywhere."""
    assert [f.name for f in dataclasses.fields(Busy)] == ["start", "end"]
    calendar = parse_calendar(fixture_bytes("hostile.ics"), "hostile.ics")
    found = expand(calendar, at(BERLIN, 2026, 12, 1), at(BERLIN, 2026, 12, 2), BERLIN, "hostile.ics")
    assert "SECRET" not in repr(found) and "evil@attacker" not in repr(found)
    assert berlin(2, 14) in week_busy()  # the meeting with Dana is busy like any other


@pytest.mark.parametrize(
    ("day", "utc_hour"),
    [(datetime(2026, 3, 27), 8), (datetime(2026, 3, 30), 7), (datetime(2026, 3, 29), 7)],
    ids=["before-DST", "after-DST", "the-change-day"],
)
def test_a_daily_series_keeps_its_wall_clock_across_the_DST_change(day, utc_hour):
    calendar = parse_calendar(fixture_bytes("dst.ics"), "dst.ics")
    start = at(BERLIN, day.year, day.month, day.day)
    found = expand(calendar, start, start + timedelta(days=1), BERLIN, "dst.ics")
    assert [(b.start.hour, b.end.hour) for b in found.busy] == [(utc_hour, utc_hour + 1)]
    assert [b.start.astimezone(BERLIN).hour for b in found.busy] == [9]


def test_a_ten_year_series_is_expanded_only_in_the_window_and_fast():
    calendar = parse_calendar(fixture_bytes("decade.ics"), "decade.ics")
    started = time.perf_counter()
    found = expand(calendar, at(BERLIN, 2029, 6, 1), at(BERLIN, 2029, 7, 1), BERLIN, "decade.ics")
    elapsed = time.perf_counter() - started
    assert [b.start.astimezone(BERLIN).day for b in found.busy] == [4, 11, 18, 25]
    assert all(b.start.astimezone(BERLIN).hour == 11 for b in found.busy)
    assert elapsed < 2.0


def test_a_series_repeating_every_second_costs_one_line_never_a_crash():
    calendar = parse_calendar(fixture_bytes("hostile.ics"), "hostile.ics")
    start = at(BERLIN, 2026, 12, 1)
    started = time.perf_counter()
    found = expand(calendar, start, start + timedelta(days=7), BERLIN, "hostile.ics")
    assert time.perf_counter() - started < 2.0
    assert len(found.problems) == 1 and isinstance(found.problems[0], ParseError)
    assert "every second, minute or hour" in found.problems[0].message
    assert [b.start for b in found.busy] == [at(BERLIN, 2026, 12, 1, 9)]  # the other event still counts


def test_more_occurrences_than_the_bound_stop_the_window_where_they_stop(monkeypatch):
    """Daily series with an absurd COUNT: read up to the bound; what it did not reach is not free time."""
    monkeypatch.setattr(events, "MAX_OCCURRENCES", 500)  # the bound, small: the test stays fast
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:x"]
    for n in range(20):
        lines += [
            "BEGIN:VEVENT",
            f"UID:daily-{n}@h0.test",
            f"DTSTART:20261201T{n:02d}0000Z",
            "DURATION:PT10M",
            "RRULE:FREQ=DAILY;COUNT=999999999",
            "END:VEVENT",
        ]
    calendar = parse_calendar("\r\n".join([*lines, "END:VCALENDAR", ""]).encode(), "daily.ics")
    start = datetime(2026, 12, 1, tzinfo=UTC)
    found = expand(calendar, start, start + timedelta(days=90), BERLIN, "daily.ics")
    assert len(found.problems) == 1 and "than H0 reads (500" in found.problems[0].message
    assert len(found.busy) == 500
    assert found.horizon < start + timedelta(days=90)


@pytest.mark.parametrize(
    "data",
    [b"", b"not a calendar at all", b"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:garbage\n", b"\xff\xfe\x00"],
    ids=["empty", "text", "truncated", "binary"],
)
def test_a_malformed_calendar_is_a_typed_parse_error(data):
    try:
        calendar = parse_calendar(data, "bad.ics")
    except ParseError as error:
        assert "bad.ics" in error.message
        return
    found = expand(calendar, datetime(2026, 12, 1, tzinfo=UTC), datetime(2026, 12, 2, tzinfo=UTC), BERLIN, "bad.ics")
    assert found.busy == () or found.problems


def test_a_daily_series_firing_every_minute_by_its_by_rules_is_left_out():
    data = (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:byminute@h0.test\r\n"
        b"DTSTART:20261201T000000Z\r\nDURATION:PT1M\r\n"
        b"RRULE:FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11;BYMINUTE=0,10,20,30,40,50\r\n"
        b"END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    start = datetime(2026, 12, 1, tzinfo=UTC)
    found = expand(parse_calendar(data, "by.ics"), start, start + timedelta(days=30), BERLIN, "by.ics")
    assert found.busy == () and len(found.problems) == 1 and "left out 1 event series" in found.problems[0].message
