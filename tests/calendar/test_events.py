"""Busy times from real .ics files: recurrences with exceptions and moved occurrences, all-day,
floating, UTC and other-zone events, free/cancelled/tentative events, DST, a ten-year series,
and a hostile calendar that costs one line."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from h0.calendar.events import MAX_OCCURRENCES, expand, parse_calendar
from h0.errors import ParseError
from tests.calendar.conftest import at, fixture_bytes

BERLIN = ZoneInfo("Europe/Berlin")


def week_busy() -> list[tuple[datetime, datetime, str]]:
    calendar = parse_calendar(fixture_bytes("week.ics"), "week.ics")
    found = expand(calendar, at(BERLIN, 2026, 11, 30), at(BERLIN, 2026, 12, 5), BERLIN, "week.ics")
    assert found.problems == () and found.horizon == at(BERLIN, 2026, 12, 5)
    return [(b.start, b.end, b.title) for b in found.busy]


def test_recurrences_expand_with_their_exceptions_and_moved_occurrences():
    busy = week_busy()
    standups = [(s, e) for s, e, title in busy if title.startswith("Team standup")]
    # Mon, Wed (moved to 15:00), Thu, Fri; Tuesday 1 December is an EXDATE.
    assert standups == [
        (at(BERLIN, 2026, 11, 30, 9), at(BERLIN, 2026, 11, 30, 9, 30)),
        (at(BERLIN, 2026, 12, 2, 15), at(BERLIN, 2026, 12, 2, 15, 30)),
        (at(BERLIN, 2026, 12, 3, 9), at(BERLIN, 2026, 12, 3, 9, 30)),
        (at(BERLIN, 2026, 12, 4, 9), at(BERLIN, 2026, 12, 4, 9, 30)),
    ]


def test_every_time_zone_is_converted_and_floating_times_are_the_owners_clock():
    busy = {title: (s, e) for s, e, title in week_busy()}
    new_york = ZoneInfo("America/New_York")
    assert busy["Board call (New York)"] == (at(new_york, 2026, 12, 1, 8), at(new_york, 2026, 12, 1, 9))
    assert busy["Board call (New York)"][0] == at(BERLIN, 2026, 12, 1, 14)
    assert busy["Dentist"] == (at(BERLIN, 2026, 12, 4, 10), at(BERLIN, 2026, 12, 4, 11))  # floating
    assert busy["Lunch talk"] == (datetime(2026, 12, 4, 13, tzinfo=UTC), datetime(2026, 12, 4, 14, tzinfo=UTC))


def test_an_all_day_event_blocks_the_owners_whole_day():
    busy = {title: (s, e) for s, e, title in week_busy()}
    assert busy["Offsite"] == (at(BERLIN, 2026, 12, 3), at(BERLIN, 2026, 12, 4))


def test_free_and_cancelled_events_are_not_busy_and_tentative_ones_are():
    titles = {title for _, _, title in week_busy()}
    assert "Focus time (shown as free)" not in titles
    assert "Cancelled review" not in titles
    assert "Maybe: vendor demo" in titles  # tentative blocks: proposing over it could double-book


def test_attendees_are_kept_by_address_for_naming_a_meeting_with_the_sender():
    calendar = parse_calendar(fixture_bytes("week.ics"), "week.ics")
    found = expand(calendar, at(BERLIN, 2026, 12, 2), at(BERLIN, 2026, 12, 3), BERLIN, "week.ics")
    dana = [b for b in found.busy if "dana@acme.example" in b.attendees]
    assert [b.title for b in dana] == ["Atlas sync with Dana"]


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
    assert "every second or minute" in found.problems[0].message
    assert [b.start for b in found.busy] == [at(BERLIN, 2026, 12, 1, 9)]  # the other event still counts


def test_more_occurrences_than_the_bound_stop_the_window_where_they_stop():
    """An hourly series with an absurd COUNT: read up to the bound; what it did not reach is not free time."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:x"]
    for n in range(3):
        lines += [
            "BEGIN:VEVENT",
            f"UID:hourly-{n}@h0.test",
            f"DTSTART:20261201T0{n}0000Z",
            "DURATION:PT10M",
            "RRULE:FREQ=HOURLY;COUNT=999999999",
            "END:VEVENT",
        ]
    calendar = parse_calendar("\r\n".join([*lines, "END:VCALENDAR", ""]).encode(), "hourly.ics")
    start = datetime(2026, 12, 1, tzinfo=UTC)
    found = expand(calendar, start, start + timedelta(days=90), BERLIN, "hourly.ics")
    assert len(found.problems) == 1 and "than H0 reads" in found.problems[0].message
    assert len(found.busy) <= MAX_OCCURRENCES
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
