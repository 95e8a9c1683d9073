#!/usr/bin/env python3
"""Benchmark the calendar: free-slot computation over 5,000 events, and what proposing times adds to triage.

    .venv/bin/python scripts/bench/bench_calendar.py              # 5,000 events, 30 runs
    .venv/bin/python scripts/bench/bench_calendar.py --events 20000 --runs 50 --json out.json

The calendar is generated (seeded, the same bytes every time) as one .ics file in a temporary
folder: one-off meetings of 15–60 minutes at any hour in four time zones over the next 60 days, a few
all-day events, free and cancelled ones, and weekly recurring series, 5,000 occurrences in all.
Measured, each the median (and p95) over runs:

(a) free slots: busy times merged with the buffer, then every free 30-minute slot over the next
    10 working days and over all 60 days (`merged` + `free_slots`) — goal ≤ 50 ms;
(b) the extra triage cost of a draft that proposes times: `h0.drafting.scheduling.scheduling_for_email` (the
    phrase read, the warm calendar's window, free slots, the 2–3 picked, the sender's zone from
    the vault) plus `scheduled_reply` (the proposal written into a rules reply) — goal ≤ 20 ms;
(c) once, for scale: parsing the file and expanding it into busy times (paid when the file
    changes, not per email).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from h0.calendar.free import free_slots, merged
from h0.calendar.hours import parse_hours
from h0.calendar.proposal import Scheduling
from h0.calendar.service import OwnerCalendar
from h0.config import load_settings
from h0.drafting.scheduling import scheduled_reply, scheduling_for_email
from h0.drafting.service import Drafting
from h0.vault import init_vault
from h0.vault.model import note_facts
from h0.vault.profile_fields import profile_fields

ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC")
PROFILE = (
    "---\ntimezone: Europe/Berlin\nworking_hours: Mon-Fri 08:00-18:00\nmeeting_minutes: 30\n"
    "meeting_buffer_minutes: 10\n---\n# Profile\n"
)
EMAIL = {"from": "Dana Rivera <dana@acme.example>", "subject": "Atlas", "date": "Thu, 26 Nov 2026 09:00:00 -0500"}
TEXT = "Hi Alex, can we find 30 minutes next week, Tuesday or Wednesday, to go over the Atlas numbers?"
REPLY = "[H0 draft — edit before approving]\nHi Dana,\n\nThanks for your message.\n\nCheers,\nAlex\n"


def make_ics(events: int, start: datetime, seed: int = 33) -> str:
    rng = random.Random(seed)
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//H0 bench//calendar//EN"]
    made = 0
    series = 0
    while made < events:
        zone = ZoneInfo(rng.choice(ZONES))
        day = start + timedelta(days=rng.randrange(60))
        local = datetime(day.year, day.month, day.day, rng.randrange(0, 24), rng.choice((0, 15, 30, 45)), tzinfo=zone)
        uid = f"e{made}@bench"
        lines += ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20260101T000000Z"]
        kind = rng.random()
        if kind < 0.02:
            lines += [f"DTSTART;VALUE=DATE:{day:%Y%m%d}", f"DTEND;VALUE=DATE:{day + timedelta(days=1):%Y%m%d}"]
            made += 1
        else:
            lines += [
                f"DTSTART;TZID={zone.key}:{local:%Y%m%dT%H%M%S}",
                f"DURATION:PT{rng.choice((15, 30, 45, 60))}M",
            ]
            if kind < 0.06 and series < 40:  # a weekly series: 9 occurrences in the window
                lines.append("RRULE:FREQ=WEEKLY;COUNT=9")
                series += 1
                made += 9
            else:
                made += 1
            if 0.06 <= kind < 0.1:
                lines.append("TRANSP:TRANSPARENT")
            elif 0.1 <= kind < 0.12:
                lines.append("STATUS:CANCELLED")
        lines += [f"SUMMARY:Private meeting {made}", "END:VEVENT"]
    lines.append("END:VCALENDAR")
    return "\r\n".join(lines) + "\r\n"


def timed(fn: Callable[[], Any], runs: int) -> dict[str, float]:
    fn()  # warm
    values = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        values.append((time.perf_counter() - started) * 1000)
    values.sort()
    return {
        "median_ms": round(statistics.median(values), 3),
        "p95_ms": round(values[min(len(values) - 1, int(len(values) * 0.95))], 3),
    }


def proposal(drafting: Drafting, now: datetime) -> Scheduling | None:
    """The scheduling part of a reply to EMAIL (h0.drafting.scheduling), as `Drafting.context_for_email` asks it."""
    return scheduling_for_email(
        drafting.calendar, drafting.profile(), drafting.knowledge, note_facts("", EMAIL), TEXT, "dana@acme.example", now
    )


def draft_cost(drafting: Drafting, now: datetime, runs: int) -> dict[str, float]:
    """What proposing times adds to one rules-mode draft: the scheduling part and the proposal written in."""

    def draft_part() -> None:
        scheduling = proposal(drafting, now)
        assert scheduling is not None
        scheduled_reply(REPLY, scheduling, by_model=False, sign_off="Cheers,")

    return timed(draft_part, runs)


def working_days(start: date, count: int) -> list[date]:
    days, day = [], start
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    hours = parse_hours(
        profile_fields(
            {"timezone": "Europe/Berlin", "working_hours": "Mon-Fri 08:00-18:00", "meeting_buffer_minutes": 10}
        )
    )
    now = datetime.now(UTC)
    today = now.astimezone(hours.zone).date()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        init_vault(root)
        (root / "H0_Profile.md").write_text(PROFILE, encoding="utf-8")
        (root / "People").mkdir(exist_ok=True)
        (root / "People/Dana.md").write_text(
            "---\nemail: dana@acme.example\ntimezone: America/New_York\n---\n", encoding="utf-8"
        )
        ics = Path(tmp) / "calendar.ics"
        ics.write_text(make_ics(args.events, datetime.combine(today, datetime.min.time())), encoding="utf-8")
        settings = load_settings(vault_path=root, calendar_ics=str(ics), h0_state_dir=Path(tmp) / "state")

        started = time.perf_counter()
        calendar = OwnerCalendar.for_settings(settings, root)
        assert calendar is not None
        window = calendar.window(today, hours.zone, hours.zone_name)
        expand_ms = (time.perf_counter() - started) * 1000
        busy = window.busy
        ten = working_days(today, 10)
        sixty = [today + timedelta(days=i) for i in range(60)]
        slots_10 = timed(lambda: free_slots(merged(busy, 10), hours, ten, 30, now=now), args.runs)
        spans = window.spans(10)
        slots_cached = timed(lambda: free_slots(spans, hours, ten, 30, now=now), args.runs)
        slots_60 = timed(lambda: free_slots(merged(busy, 10), hours, sixty, 30, now=now, limit=10_000), args.runs)
        found = len(free_slots(merged(busy, 10), hours, ten, 30, now=now))

        extra = draft_cost(Drafting.build(settings, root), now, args.runs)
        # A person's calendar (~10 events a day): the same path, with free times to propose.
        ics.write_text(make_ics(600, datetime.combine(today, datetime.min.time())), encoding="utf-8")
        drafting = Drafting.build(settings, root)
        proposal(drafting, now)  # the new file's parse, once
        extra_light = draft_cost(drafting, now, args.runs)
        proposed = proposal(drafting, now)

    figures = {
        "events_in_window": len(busy),
        "parse_and_expand_ms_once": round(expand_ms, 1),
        "free_slots_10_working_days": slots_10,
        "free_slots_60_days": slots_60,
        "free_slots_10_working_days_spans_cached": slots_cached,
        "free_slots_found_10_days": found,
        "draft_with_proposed_times_extra": extra,
        "draft_with_proposed_times_extra_600_events": extra_light,
        "proposed": proposed.proposed_slots if proposed else [],
        "python": platform.python_version(),
        "runs": args.runs,
    }
    print(f"calendar: {len(busy)} busy times in the 62-day window (generated {args.events} events)")
    print(f"(c) parse + expand once:                    {expand_ms:9.1f} ms")
    print(
        f"(a) free slots, 10 working days:            {slots_10['median_ms']:9.3f} ms median, "
        f"p95 {slots_10['p95_ms']:.3f} (goal ≤ 50 ms)"
    )
    print(f"    the same, busy spans already merged:    {slots_cached['median_ms']:9.3f} ms median")
    print(
        f"    free slots, 60 days:                    {slots_60['median_ms']:9.3f} ms median, p95 {slots_60['p95_ms']:.3f}"
    )
    print(
        f"(b) extra triage cost, proposed times:      {extra['median_ms']:9.3f} ms median, "
        f"p95 {extra['p95_ms']:.3f} (goal ≤ 20 ms)"
    )
    print(
        f"    the same, a 600-event calendar:          {extra_light['median_ms']:9.3f} ms median, p95 {extra_light['p95_ms']:.3f}"
    )
    print(f"    proposed there: {', '.join(figures['proposed'])}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
