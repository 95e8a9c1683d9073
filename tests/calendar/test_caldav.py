"""Every calendar of a CalDAV account counts, read from a real Radicale server through `caldav`;
a wrong password is a typed error and the last good copy serves."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from h0.calendar.hours import parse_hours
from h0.calendar.service import OwnerCalendar, cache_folder
from h0.calendar.sources import CalendarUnavailable, sources_for_settings
from h0.config import load_settings
from h0.vault.profile_fields import profile_fields
from tests.calendar.conftest import BERLIN_HOURS
from tests.fakes.caldav_server import PASSWORD, USER, RadicaleServer

HOURS = parse_hours(profile_fields(BERLIN_HOURS))


@pytest.fixture(scope="module")
def radicale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RadicaleServer]:
    server = RadicaleServer(tmp_path_factory.mktemp("radicale")).start()
    yield server
    server.stop()


def event(uid: str, start: datetime, minutes: int, title: str, extra: str = "") -> str:
    end = start + timedelta(minutes=minutes)
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//H0 tests//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start:%Y%m%dT%H%M%SZ}\r\n"
        f"DTEND:{end:%Y%m%dT%H%M%SZ}\r\nSUMMARY:{title}\r\n{extra}END:VEVENT\r\nEND:VCALENDAR\r\n"
    )


def test_every_calendar_of_the_account_is_busy_time_and_a_bad_password_keeps_the_last_copy(
    radicale: RadicaleServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).replace(hour=10, minute=0, second=0, microsecond=0)
    radicale.calendar("Work").save_event(event("work-1@h0.test", tomorrow, 60, "Work review"))
    radicale.calendar("Family").save_event(
        event("family-1@h0.test", tomorrow + timedelta(hours=3), 30, "School pick-up", "RRULE:FREQ=DAILY;COUNT=3\r\n")
    )
    vault = tmp_path / "vault"
    vault.mkdir()
    settings = load_settings(
        vault_path=vault,
        caldav_url=radicale.url,
        caldav_user=USER,
        caldav_password=PASSWORD,
        calendar_refresh_minutes=0,
    )
    calendar = OwnerCalendar.for_settings(settings)
    assert calendar is not None
    window = calendar.window(tomorrow.date(), UTC, "UTC", days=4)
    review = (tomorrow, tomorrow + timedelta(hours=1))
    pickups = [
        (tomorrow + timedelta(days=d, hours=3), tomorrow + timedelta(days=d, hours=3, minutes=30)) for d in range(3)
    ]
    spans = [(b.start, b.end) for b in window.busy]
    assert review in spans and all(p in spans for p in pickups)  # both calendars, the series expanded
    assert window.problems == ()
    assert calendar.states()[0].ok and calendar.states()[0].name.startswith("CalDAV http://127.0.0.1")

    # The password changed on the server's side: a new process reads the account's last good copy from disk.
    wrong = settings.model_copy(update={"caldav_password": SecretStr("nope")})
    failing = OwnerCalendar(sources_for_settings(wrong), cache_folder(vault, settings.h0_state_dir), refresh_seconds=0)
    kept = failing.window(tomorrow.date(), UTC, "UTC", days=4)
    assert review in [(b.start, b.end) for b in kept.busy]
    assert len(kept.problems) == 1 and "CALDAV_USER/CALDAV_PASSWORD" in kept.problems[0]
    assert PASSWORD not in kept.problems[0] and not failing.states()[0].ok


def test_given_a_caldav_server_that_never_answers_when_read_then_unavailable_at_the_deadline(tmp_path: Path):
    """The caldav library keeps its sockets to itself: H0 stops waiting for its thread at the deadline."""
    with socket.create_server(("127.0.0.1", 0)) as silent:  # the kernel accepts; nobody ever answers
        settings = load_settings(
            vault_path=tmp_path,
            caldav_url=f"http://127.0.0.1:{silent.getsockname()[1]}/dav/",
            caldav_user=USER,
            caldav_password=PASSWORD,
            calendar_timeout_seconds=0.2,
        )
        [source] = sources_for_settings(settings)
        with pytest.raises(CalendarUnavailable, match=r"did not answer within 0\.2 s \(CALENDAR_TIMEOUT_SECONDS\)"):
            source.read()
        assert any(t.name == "h0-calendar-caldav" for t in threading.enumerate())  # left to end alone
