"""A calendar is hostile input, and reading it never stalls triage.

- A feed that trickles (its body, or its very headers, one byte at a time, each byte well inside the
  socket timeout) is cut at CALENDAR_TIMEOUT_SECONDS as a whole: a real HTTP server on loopback.
- Recurring series starting in the year 1000 (29 KB of them: daily, weekly, monthly, with and without
  COUNT and UNTIL) cost milliseconds, and the occurrences in the window are exactly the right ones.
- A calendar with more events than H0 reads is refused unparsed, as a typed error.
- A feed that stalls costs the scheduling lines, never the triage: with a copy in memory the window is
  served at once while the feed is read in the background; with none, an email asking to meet is
  triaged once the read's deadline passes and its draft says the calendar could not be read.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from h0.calendar import bounds, events
from h0.calendar.events import CalendarTooManyEvents, expand, parse_calendar
from h0.calendar.hours import parse_hours
from h0.calendar.service import OwnerCalendar
from h0.calendar.sources import CalendarUnavailable, sources_for_settings
from h0.cli import main
from h0.config import load_settings
from h0.vault import init_vault
from h0.vault.profile_fields import profile_fields
from tests.calendar.conftest import BERLIN_HOURS, fixture_bytes
from tests.fakes.ical_feed import IcalFeed
from tests.pipeline.harness import frontmatter

pytestmark = pytest.mark.usefixtures("loguru_restored")

BERLIN = ZoneInfo("Europe/Berlin")
HOURS = parse_hours(profile_fields(BERLIN_HOURS))
WEEK = date(2026, 11, 30)
TIMEOUT = 1.0  # CALENDAR_TIMEOUT_SECONDS in these tests
TRICKLE = 0.25  # seconds between two bytes: far inside the timeout, so only a whole-read deadline cuts it


@pytest.fixture
def feed():
    with IcalFeed(fixture_bytes("week.ics")) as served:
        served.delay = TRICKLE
        yield served


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    init_vault(root)
    monkeypatch.setenv("VAULT_PATH", str(root))
    monkeypatch.setenv("CALENDAR_TIMEOUT_SECONDS", str(TIMEOUT))
    return root


# ---------------------------------------------------------------- a whole-read deadline


@pytest.mark.parametrize("mode", ["trickle", "trickle-headers"])
def test_a_feed_trickling_one_byte_at_a_time_is_cut_at_the_timeout(feed, vault, mode):
    """Given a feed sending a byte every 0.25 s (the socket never waits 1 s), when it is read with a 1 s
    timeout, then the read ends as a typed error about 1 s later, and the server sees H0 hang up."""
    feed.mode = mode
    source = sources_for_settings(load_settings(calendar_ics=feed.url))[0]
    started = time.monotonic()
    with pytest.raises(CalendarUnavailable) as error:
        source.read()
    took = time.monotonic() - started
    assert TIMEOUT <= took < TIMEOUT + 1.5, took
    assert "within 1 s" in error.value.message and "secret-token" not in error.value.message
    assert feed.finished.wait(10), "H0 kept the connection open"
    assert feed.sent_bytes < 20


# ---------------------------------------------------------------- expansion: only the window


def ancient_calendar() -> bytes:
    """~29 KB of series starting on 1 January 1000, and one ordinary meeting."""
    rules = [
        ("FREQ=DAILY", "T100000Z"),
        ("FREQ=WEEKLY;BYDAY=MO,WE", "T120000Z"),
        ("FREQ=DAILY;INTERVAL=3", "T140000Z"),
        ("FREQ=MONTHLY;BYMONTHDAY=2", "T150000Z"),
        ("FREQ=DAILY;COUNT=5", "T160000Z"),  # over in January 1000
        ("FREQ=DAILY;UNTIL=20261202T235959Z", "T170000Z"),  # ends inside the window
        ("FREQ=DAILY;COUNT=999999999", "T180000Z"),  # a count that never ends in practice
        ("FREQ=WEEKLY;BYDAY=TU;COUNT=999999999", "T190000Z"),  # the same, with a BY rule
        ("FREQ=MINUTELY", "T000000Z"),  # a flood: left out by its frequency
    ]
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//hostile//EN"]
    n = 0
    while len("\r\n".join(lines)) < 29_000:
        rule, at = rules[n % len(rules)]
        lines += [
            "BEGIN:VEVENT",
            f"UID:ancient-{n}@h0.test",
            "DTSTAMP:20260101T000000Z",
            f"DTSTART:10000101{at}",
            "DURATION:PT10M",
            f"RRULE:{rule}",
            "END:VEVENT",
        ]
        n += 1
    lines += [
        "BEGIN:VEVENT",
        "UID:berlin@h0.test",  # a zone and an end: the end goes with the moved start
        "DTSTAMP:20260101T000000Z",
        "DTSTART;TZID=Europe/Berlin:10000101T113000",
        "DTEND;TZID=Europe/Berlin:10000101T120000",
        "RRULE:FREQ=DAILY",
        "END:VEVENT",
        "BEGIN:VEVENT",
        "UID:ordinary@h0.test",
        "DTSTAMP:20260101T000000Z",
        "DTSTART:20261201T090000Z",
        "DTEND:20261201T093000Z",
        "END:VEVENT",
        "END:VCALENDAR",
        "",
    ]
    return "\r\n".join(lines).encode()


def test_series_from_the_year_1000_cost_milliseconds_and_give_exactly_the_windows_occurrences():
    data = ancient_calendar()
    assert 28_000 < len(data) < 31_000
    calendar = parse_calendar(data, "ancient.ics")
    start = datetime(2026, 11, 30, tzinfo=UTC)  # a Monday
    started = time.perf_counter()
    found = expand(calendar, start, start + timedelta(days=7), BERLIN, "ancient.ics")
    took = time.perf_counter() - started
    assert took < 1.0, took  # before: minutes (each series walked from the year 1000, week after week)
    starts = {(b.start.weekday(), b.start.hour) for b in found.busy}
    days = [start + timedelta(days=d) for d in range(7)]
    assert {(d.weekday(), 10) for d in days} <= starts  # daily
    berlin = [(b.start, b.end - b.start) for b in found.busy if b.start.hour == 10 and b.start.minute == 30]
    assert berlin == [(d + timedelta(hours=10, minutes=30), timedelta(minutes=30)) for d in days]  # 11:30 in Berlin
    assert {(0, 12), (2, 12)} <= starts and (1, 12) not in starts  # weekly on Monday and Wednesday
    three = {d.date() for d in days if (d.date() - date(1000, 1, 1)).days % 3 == 0}
    assert {b.start.date() for b in found.busy if b.start.hour == 14} == three  # every third day, from 1000
    assert {b.start.date() for b in found.busy if b.start.hour == 15} == {date(2026, 12, 2)}  # monthly on the 2nd
    assert not any(b.start.hour == 16 for b in found.busy)  # COUNT=5 ended in the year 1000
    assert {b.start.date() for b in found.busy if b.start.hour == 17} == {
        date(2026, 11, 30),
        date(2026, 12, 1),
        date(2026, 12, 2),
    }
    assert {(d.weekday(), 18) for d in days} <= starts  # a count that cannot have run out
    assert {b.start.date() for b in found.busy if b.start.hour == 19} == {date(2026, 12, 1)}  # the same, weekly
    assert datetime(2026, 12, 1, 9, tzinfo=UTC) in {b.start for b in found.busy}  # the ordinary meeting
    assert len(found.problems) == 1 and "series repeating every second, minute or hour" in found.problems[0].message
    assert all(b.start.hour != 0 for b in found.busy)


def test_a_long_count_that_may_have_run_out_by_now_is_left_out_with_a_line():
    """A daily series from 1000 with COUNT=370000 ends around 2013: H0 cannot tell cheaply, so it is left out."""
    data = (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:long@h0.test\r\n"
        b"DTSTART:10000101T100000Z\r\nDURATION:PT10M\r\nRRULE:FREQ=DAILY;COUNT=370000\r\nEND:VEVENT\r\n"
        b"END:VCALENDAR\r\n"
    )
    start = datetime(2026, 11, 30, tzinfo=UTC)
    started = time.perf_counter()
    found = expand(parse_calendar(data, "long.ics"), start, start + timedelta(days=7), BERLIN, "long.ics")
    assert time.perf_counter() - started < 1.0
    assert found.busy == () and "COUNT it cannot follow" in found.problems[0].message


def test_a_calendar_with_more_events_than_h0_reads_is_refused_unparsed(monkeypatch):
    monkeypatch.setattr(events, "MAX_EVENTS", 50)
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:x"]
    for n in range(51):
        lines += ["BEGIN:VEVENT", f"UID:e{n}@h0.test", "DTSTART:20261201T090000Z", "DURATION:PT10M", "END:VEVENT"]
    with pytest.raises(CalendarTooManyEvents) as error:
        parse_calendar("\r\n".join([*lines, "END:VCALENDAR", ""]).encode(), "many.ics")
    assert "51 events" in error.value.message and "many.ics" in error.value.message


# ---------------------------------------------------------------- a stalled calendar never stalls triage


def test_with_a_copy_in_memory_a_stalled_feed_is_read_in_the_background(feed, vault):
    """Given a feed read once, when it starts trickling and its refresh is due, then the window is served
    from the copy at once (no triage waits on the feed), and the read fails on its own, after its deadline."""
    settings = load_settings(calendar_ics=feed.url, calendar_refresh_minutes=0)
    calendar = OwnerCalendar.for_settings(settings)
    assert calendar is not None
    first = calendar.window(WEEK, HOURS.zone, HOURS.zone_name, days=5)
    assert first.busy and first.problems == ()
    feed.mode = "trickle"
    started = time.monotonic()
    again = calendar.window(WEEK, HOURS.zone, HOURS.zone_name, days=5)
    assert time.monotonic() - started < TIMEOUT / 2
    assert [(b.start, b.end) for b in again.busy] == [(b.start, b.end) for b in first.busy]
    assert calendar.settled(TIMEOUT + 10)  # the background read, cut at its deadline
    assert "within 1 s" in (calendar.states()[0].error or "")


def test_a_stalled_feed_while_an_email_is_triaged_costs_the_proposal_never_the_triage(feed, vault, monkeypatch, capsys):
    """Given a feed that trickles and no copy of it yet, when an email asking to meet and another email are
    triaged, then both are done once the read's deadline has passed, and the scheduling draft proposes no
    time and says the calendar could not be read."""
    feed.mode = "trickle"
    monkeypatch.setenv("CALENDAR_ICS", feed.url)
    for name, body in (("EMAIL_meet", "Hi, can we find 30 minutes next week?"), ("EMAIL_q", "Hi, what is the plan?")):
        (vault / f"Needs_Action/{name}.md").write_text(
            f"---\ntype: email\nstatus: pending\nmessage_id: m-{name}\nfrom: Dana <dana@acme.example>\n"
            f"to: alex@northwind.example\nsubject: Atlas\nreceived: 2026-03-10T09:00:00Z\n---\n```text\n{body}\n```\n",
            encoding="utf-8",
        )
    started = time.monotonic()
    code = main(["sweep"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert time.monotonic() - started < 2 * TIMEOUT + 10  # the read's deadline (and its parse's), not the feed's pace
    fm = frontmatter(vault, "Drafts/REPLY_EMAIL_meet.md")
    assert "proposed_slots" not in fm
    text = (vault / "Drafts/REPLY_EMAIL_meet.md").read_text(encoding="utf-8")
    assert "Here are some times" not in text
    assert "could not read your calendar" in text and "within 1 s" in text
    assert (vault / "Drafts/REPLY_EMAIL_q.md").exists()


def test_series_past_the_bound_are_left_out_with_a_line_and_ended_ones_cost_nothing(monkeypatch):
    monkeypatch.setattr(bounds, "MAX_SERIES", 3)
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:x"]
    for n in range(10):  # ended in 2019: dropped without counting
        lines += ["BEGIN:VEVENT", f"UID:old{n}@h0.test", "DTSTART:20100101T080000Z", "DURATION:PT10M"]
        lines += ["RRULE:FREQ=DAILY;UNTIL=20190101T000000Z", "END:VEVENT"]
    for n in range(5):
        lines += ["BEGIN:VEVENT", f"UID:live{n}@h0.test", f"DTSTART:20261130T{10 + n:02d}0000Z", "DURATION:PT10M"]
        lines += ["RRULE:FREQ=DAILY", "END:VEVENT"]
    calendar = parse_calendar("\r\n".join([*lines, "END:VCALENDAR", ""]).encode(), "many.ics")
    start = datetime(2026, 11, 30, tzinfo=UTC)
    found = expand(calendar, start, start + timedelta(days=1), BERLIN, "many.ics")
    assert sorted(b.start.hour for b in found.busy) == [10, 11, 12]
    assert [p.message for p in found.problems] == ["many.ics: H0 left out 2 event series past the first 3."]
