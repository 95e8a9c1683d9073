"""Free times: working hours in the owner's zone minus busy times, cut into slots; the phrases an
email asks for days with; the owner's hours read from the profile, bad values a typed error."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from h0.calendar.events import Busy, expand, parse_calendar
from h0.calendar.free import free_slots, merged, spread
from h0.calendar.hours import DEFAULT_WORKING_HOURS, parse_hours, parse_working_hours
from h0.calendar.phrases import asks_to_meet, meeting_ask, requested_minutes
from h0.calendar.proposal import plan_meeting
from h0.calendar.service import OwnerCalendar
from h0.calendar.sources import Source
from h0.errors import InvalidRequest
from h0.vault.profile_fields import profile_fields
from tests.calendar.conftest import at, fixture_bytes

BERLIN = ZoneInfo("Europe/Berlin")
THURSDAY = date(2026, 11, 26)  # "today" in these tests
NOW = at(BERLIN, 2026, 11, 26, 8)


def week_slots(berlin, days, minutes=30, buffer=0):
    calendar = parse_calendar(fixture_bytes("week.ics"), "week.ics")
    found = expand(calendar, at(BERLIN, 2026, 11, 30), at(BERLIN, 2026, 12, 5), BERLIN, "week.ics")
    return free_slots(merged(found.busy, buffer), berlin, days, minutes, now=NOW)


def local(slot):
    start = slot.start.astimezone(BERLIN)
    return f"{start:%a %H:%M}"


def test_free_slots_lie_in_working_hours_and_never_overlap_a_busy_time(berlin):
    days = [date(2026, 11, 30) + timedelta(days=i) for i in range(5)]
    slots = week_slots(berlin, days)
    shown = [local(s) for s in slots]
    assert "Mon 09:00" not in shown and "Mon 09:15" not in shown and "Mon 09:30" in shown  # standup 09:00-09:30
    assert "Tue 09:00" in shown  # the standup's EXDATE
    assert "Tue 14:00" not in shown and "Tue 15:00" in shown  # New York board call, 14:00-15:00 Berlin
    assert "Tue 13:00" in shown  # focus time is marked free
    assert "Tue 10:00" in shown  # the cancelled review
    assert "Wed 10:00" not in shown and "Wed 10:30" not in shown  # tentative vendor demo blocks
    assert not any(s.startswith("Thu") for s in shown)  # the all-day offsite
    assert "Fri 10:00" not in shown and "Fri 14:00" not in shown  # floating dentist, UTC lunch talk
    assert "Fri 16:30" in shown and "Fri 16:45" not in shown  # a slot ends by 17:00
    for slot in slots:
        assert slot.end - slot.start == timedelta(minutes=30)


def test_the_buffer_keeps_time_free_around_every_busy_time(berlin):
    slots = week_slots(berlin, [date(2026, 11, 30)], buffer=15)
    assert local(slots[0]) == "Mon 09:45"


def test_no_slot_is_proposed_in_the_past_or_within_the_hour(berlin):
    slots = free_slots([], berlin, [THURSDAY], 30, now=at(BERLIN, 2026, 11, 26, 13, 5))
    assert local(slots[0]) == "Thu 14:15"


def test_working_hours_keep_their_wall_clock_across_DST(berlin):
    before, after = date(2026, 3, 27), date(2026, 3, 30)
    now = at(BERLIN, 2026, 3, 1)
    first = [free_slots([], berlin, [d], 30, now=now)[0] for d in (before, after)]
    assert [s.start.astimezone(BERLIN).hour for s in first] == [9, 9]
    assert [s.start.hour for s in first] == [8, 7]  # in UTC the day moved


def test_the_horizon_of_a_cut_expansion_is_never_free_time(berlin):
    horizon = at(BERLIN, 2026, 11, 30, 12)
    slots = free_slots([], berlin, [date(2026, 11, 30), date(2026, 12, 1)], 30, now=NOW, horizon=horizon)
    assert slots and all(s.end <= horizon for s in slots)


def test_spread_proposes_times_on_different_days_first(berlin):
    days = [date(2026, 11, 30) + timedelta(days=i) for i in range(5)]
    chosen = spread(week_slots(berlin, days), BERLIN, 3)
    assert [local(s) for s in chosen] == ["Mon 09:30", "Tue 09:00", "Wed 09:00"]


def test_five_thousand_busy_times_cost_milliseconds(berlin):
    start = at(BERLIN, 2026, 12, 1)
    busy = [Busy(start + timedelta(minutes=17 * i), start + timedelta(minutes=17 * i + 10)) for i in range(5000)]
    days = [date(2026, 12, 1) + timedelta(days=i) for i in range(60)]
    merged_busy = merged(busy)
    slots = free_slots(merged_busy, berlin, days, 5, now=NOW)
    assert slots and all(not (b[0] < s.end and s.start < b[1]) for s in slots[:50] for b in merged_busy)


# --------------------------------------------------------------------------------- phrases


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("Can we find 30 minutes next week?", [date(2026, 11, 30) + timedelta(days=i) for i in range(7)]),
        ("Could we have a quick call Thursday or Friday?", [date(2026, 11, 26), date(2026, 11, 27)]),
        ("Are you free for a call tomorrow?", [date(2026, 11, 27)]),
        ("Can we meet next week, Tuesday or Wednesday?", [date(2026, 12, 1), date(2026, 12, 2)]),
        (
            "Hättest du nächste Woche Zeit für ein Telefonat?",
            [date(2026, 11, 30) + timedelta(days=i) for i in range(7)],
        ),
        ("Guten Morgen, können wir am Freitag telefonieren?", [date(2026, 11, 27)]),
        ("Let's schedule a call to go over the plan.", None),
    ],
)
def test_the_days_an_email_asks_for(text, days):
    ask = meeting_ask(text, THURSDAY)
    assert ask is not None
    assert (list(ask.days) if ask.days is not None else None) == days


def test_mail_that_does_not_ask_to_meet_is_not_read_as_asking():
    assert not asks_to_meet("Here is the invoice for November. Thanks!")
    assert not asks_to_meet("Our newsletter: call for papers now open")
    assert meeting_ask("Please send me the report.", THURSDAY) is None


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        # ASCII text is lowered and matched without IGNORECASE: capitals must not change the answer.
        ("CAN WE MEET next week?", True),
        ("Could I Grab 20 minutes?", True),
        ("LET'S Catch-Up soon", True),
        ("Are You Free on Friday?", True),
        ("What is Your Availability?", True),
        ("WHEN WOULD YOU BE AVAILABLE", True),
        ("What Time Works?", True),
        ("30 MIN call", True),
        ("Schedule A quick Meeting", True),
        ("Can we meet? UNSUBSCRIBE here", False),
        ("Can we talk about the INVOICE", False),
        ("Scan we meet", False),  # no word boundary before "can"
        ("We can meet", False),
        # Beyond ASCII the patterns run with IGNORECASE as written.
        ("KÖNNEN WIR am Freitag TELEFONIEREN?", True),
        ("Hast Du nächste Woche ZEIT?", True),
        ("Café? Can we MEET", True),
        ("Café? Can we meet — NEWSLETTER", False),
    ],
)
def test_whether_an_email_asks_to_meet_whatever_its_case(text, asks):
    assert asks_to_meet(text) is asks


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("30 minutes?", 30), ("a 45-minute call", 45), ("half an hour", 30), ("1.5 hours", 90), ("an hour", 60)],
)
def test_the_length_an_email_asks_for(text, minutes):
    assert requested_minutes(text) == minutes


def test_an_absurd_length_is_ignored():
    assert requested_minutes("can we take 900 minutes") is None


# --------------------------------------------------------------------------------- hours


def test_working_hours_with_several_ranges_and_day_groups():
    week = parse_working_hours("Mon-Thu 09:00-12:00, 13:00-17:00; Fri 09:00-13:00")
    assert len(week[0]) == 2 and len(week[4]) == 1 and week[5] == () and week[6] == ()
    assert parse_working_hours("Mo-Fr 8-16")[4][0][0].hour == 8


@pytest.mark.parametrize(
    ("properties", "key"),
    [
        ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
        ({"timezone": "../../etc/passwd"}, "timezone"),
        ({"working_hours": "whenever"}, "working_hours"),
        ({"working_hours": "Mon-Fri 17:00-09:00"}, "working_hours"),
        ({"meeting_minutes": "lots"}, "meeting_minutes"),
        ({"meeting_minutes": 100000}, "meeting_minutes"),
        ({"meeting_buffer_minutes": -5}, "meeting_buffer_minutes"),
    ],
)
def test_a_bad_value_is_a_typed_error_and_its_default_is_used(properties, key):
    hours = parse_hours(profile_fields(properties))
    assert len(hours.problems) == 1
    problem = hours.problems[0]
    assert isinstance(problem, InvalidRequest) and problem.details["key"] == key
    default = parse_hours(profile_fields({}))
    if key == "working_hours":
        assert hours.week == parse_working_hours(DEFAULT_WORKING_HOURS)
    if key == "meeting_minutes":
        assert hours.meeting_minutes == default.meeting_minutes == 30
    if key == "timezone":
        assert hours.zone_name == default.zone_name


def test_slots_are_written_with_their_utc_offset(berlin):
    slot = free_slots([], berlin, [date(2026, 12, 1)], 30, now=NOW)[0]
    assert slot.iso(BERLIN) == "2026-12-01T09:00+01:00"
    assert datetime.fromisoformat(slot.iso(BERLIN)).astimezone(UTC) == slot.start


def calendar_of(name: str):
    return OwnerCalendar([Source(name, name, lambda: fixture_bytes(name))], None)


def test_a_german_email_gets_its_proposal_in_german(berlin):
    text = "Hallo Alex, hättest du nächste Woche Zeit für ein kurzes Gespräch? Danke und viele Grüße"
    scheduling = plan_meeting(calendar_of("week.ics"), berlin, text, now=NOW)
    assert scheduling is not None and scheduling.ask.language == "de"
    reply = scheduling.reply_text()
    assert reply.startswith("Folgende Zeiten passen mir:")
    assert "- Montag, 30. November, 09:30–10:00 (Europe/Berlin)" in reply


def test_an_english_email_with_a_sender_elsewhere_gets_both_zones(berlin):
    zone = ZoneInfo("America/New_York")
    scheduling = plan_meeting(
        calendar_of("week.ics"),
        berlin,
        "Can we find 30 minutes next week?",
        now=NOW,
        sender_zone=(zone, "America/New_York"),
    )
    assert scheduling is not None
    assert "- Monday 30 November, 09:30–10:00 (Europe/Berlin; Monday 30 November, 03:30–04:00 for you" not in (
        scheduling.reply_text()
    )
    assert "- Monday 30 November, 09:30–10:00 (Europe/Berlin; 03:30–04:00 for you, America/New_York)" in (
        scheduling.reply_text()
    )
    assert scheduling.proposed_slots[0] == "2026-11-30T09:30+01:00"
