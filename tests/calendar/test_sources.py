"""Calendar sources: an http iCal feed served locally (fine, 404, slow, huge, garbage) and .ics files.
A feed that fails keeps its last good copy — in memory and on disk for the next process — and says
so in `h0 doctor` and `h0 status`; its secret address never appears in either. With a copy in memory,
a feed is read again in the background (`settled` waits for that read)."""

from __future__ import annotations

import time
from datetime import date, datetime
from pathlib import Path

import pytest

from h0.calendar.cache import calendar_states
from h0.calendar.hours import parse_hours
from h0.calendar.service import OwnerCalendar
from h0.calendar.sources import CalendarTooLarge, CalendarUnavailable, sources_for_settings
from h0.cli import main
from h0.config import load_settings
from h0.errors import ParseError
from h0.vault import init_vault
from h0.vault.profile_fields import profile_fields
from tests.calendar.conftest import BERLIN_HOURS, at, fixture_bytes
from tests.fakes.ical_feed import IcalFeed

HOURS = parse_hours(profile_fields(BERLIN_HOURS))
WEEK = date(2026, 11, 30)


@pytest.fixture
def feed():
    with IcalFeed(fixture_bytes("week.ics")) as served:
        yield served


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    init_vault(root)
    monkeypatch.setenv("VAULT_PATH", str(root))
    monkeypatch.setenv("CALENDAR_REFRESH_MINUTES", "0")
    return root


@pytest.fixture
def settings_for(vault: Path, monkeypatch: pytest.MonkeyPatch):
    """The settings with these sources (also in the environment, for `h0 doctor` and `h0 status`)."""

    def settings(ics: str, **extra):
        monkeypatch.setenv("CALENDAR_ICS", ics)
        return load_settings(**extra)

    return settings


STANDUP = (at(HOURS.zone, 2026, 11, 30, 9), at(HOURS.zone, 2026, 11, 30, 9, 30))  # week.ics's Monday standup


def busy(calendar: OwnerCalendar) -> set[tuple[datetime, datetime]]:
    return {(b.start, b.end) for b in calendar.window(WEEK, HOURS.zone, HOURS.zone_name, days=5).busy}


def test_a_feed_is_read_and_its_last_good_copy_serves_when_it_fails(feed, settings_for, tmp_path, capsys):
    settings = settings_for(feed.url)
    calendar = OwnerCalendar.for_settings(settings)
    assert calendar is not None
    assert STANDUP in busy(calendar)
    assert [s.ok for s in calendar.states()] == [True]

    feed.mode = "404"
    assert STANDUP in busy(calendar)  # the last good copy, at once; the feed is read in the background
    assert calendar.settled(10)
    assert STANDUP in busy(calendar)
    state = calendar.states()[0]
    assert not state.ok and "HTTP 404" in (state.error or "") and state.last_good_at

    # A new process starts with the feed still failing: the copy on disk serves.
    fresh = OwnerCalendar(sources_for_settings(settings), tmp_path / "elsewhere" / "calendar")
    assert busy(fresh) == set()  # a cache folder with no copy: nothing is invented
    restarted = OwnerCalendar.for_settings(settings.model_copy(update={"calendar_refresh_minutes": 0.001}))
    assert restarted is not None and STANDUP in busy(restarted)

    assert main(["doctor", "--no-servers"]) in (0, 1)
    doctor = capsys.readouterr().out
    line = next(line for line in doctor.splitlines() if "calendar http://127.0.0.1" in line)
    assert line.startswith("!") and "HTTP 404" in line and "last good copy" in line
    assert "secret-token" not in doctor

    assert main(["status"]) == 0
    status = capsys.readouterr().out
    assert "Calendar http://127.0.0.1" in status and "FAILING" in status and "last good copy" in status
    assert "secret-token" not in status


def test_a_slow_feed_times_out_as_a_typed_error(feed, settings_for, tmp_path):
    feed.mode, feed.delay = "slow", 5.0
    source = sources_for_settings(settings_for(feed.url, calendar_timeout_seconds=0.5))[0]
    started = time.monotonic()
    with pytest.raises(CalendarUnavailable) as error:
        source.read()
    assert time.monotonic() - started < 3.0
    assert "secret-token" not in error.value.message


@pytest.mark.parametrize("mode", ["huge-declared", "huge-streamed"])
def test_a_100_mb_feed_is_refused_unread_and_the_last_good_copy_kept(feed, settings_for, tmp_path, mode):
    settings = settings_for(feed.url, calendar_max_mb=2)
    calendar = OwnerCalendar.for_settings(settings)
    assert calendar is not None and STANDUP in busy(calendar)
    feed.mode = mode
    with pytest.raises(CalendarTooLarge):
        sources_for_settings(settings)[0].read()
    assert feed.sent_bytes < 50 * 1024 * 1024  # H0 stopped reading long before the end
    assert STANDUP in busy(calendar)
    assert calendar.settled(10) and "larger than 2 MB" in (calendar.states()[0].error or "")


def test_a_malformed_feed_is_a_parse_error_and_the_last_good_copy_kept(feed, settings_for, tmp_path):
    settings = settings_for(feed.url)
    calendar = OwnerCalendar.for_settings(settings)
    assert calendar is not None and STANDUP in busy(calendar)
    feed.mode = "garbage"
    calendar.window(WEEK, HOURS.zone, HOURS.zone_name, days=5)  # the copy answers; the feed is read meanwhile
    assert calendar.settled(10)
    window = calendar.window(WEEK, HOURS.zone, HOURS.zone_name, days=5)
    assert STANDUP in {(b.start, b.end) for b in window.busy}
    assert any("not an iCalendar file" in p for p in window.problems)
    assert "not an iCalendar file" in (calendar.states()[0].error or "")


def test_a_feed_is_not_fetched_again_before_its_refresh_is_due(feed, settings_for, tmp_path):
    settings = settings_for(feed.url).model_copy(update={"calendar_refresh_minutes": 60})
    calendar = OwnerCalendar.for_settings(settings)
    assert calendar is not None
    for _ in range(5):
        busy(calendar)
    assert feed.requests == 1


def test_ics_files_are_read_again_when_they_change_and_a_missing_one_is_said(settings_for, tmp_path):
    path = tmp_path / "mine.ics"
    path.write_bytes(fixture_bytes("week.ics"))
    settings = settings_for(f"{path}, {tmp_path / 'gone.ics'}")
    calendar = OwnerCalendar.for_settings(settings)
    assert calendar is not None and STANDUP in busy(calendar)
    path.write_bytes(fixture_bytes("week.ics").replace(b"20261102T090000", b"20261102T083000", 1))
    assert STANDUP not in busy(calendar) and (at(HOURS.zone, 2026, 11, 30, 8, 30), STANDUP[1]) in busy(calendar)
    states = calendar_states(settings)
    assert states[0].ok and "gone.ics" in (states[1].error or "")


def test_no_source_means_no_calendar(settings_for, tmp_path):
    assert OwnerCalendar.for_settings(settings_for("")) is None


def test_a_malformed_file_is_a_parse_error_on_that_source_only(settings_for, tmp_path):
    bad, good = tmp_path / "bad.ics", tmp_path / "good.ics"
    bad.write_bytes(b"BEGIN:VCALENDAR\nthis is not\n")
    good.write_bytes(fixture_bytes("week.ics"))
    calendar = OwnerCalendar.for_settings(settings_for(f"{bad},{good}"))
    assert calendar is not None
    window = calendar.window(WEEK, HOURS.zone, HOURS.zone_name, days=5)
    assert STANDUP in {(b.start, b.end) for b in window.busy}
    assert len(window.problems) == 1 and "bad.ics" in window.problems[0]
    assert not window.read and window.horizon == window.start  # nothing of bad.ics is known: no time is free
    assert ParseError.code == "parse_error"


def test_a_feed_redirecting_to_a_local_file_is_refused(feed, settings_for):
    feed.mode = "redirect-file"
    with pytest.raises(CalendarUnavailable) as error:
        sources_for_settings(settings_for(feed.url))[0].read()
    assert "root:" not in error.value.message
