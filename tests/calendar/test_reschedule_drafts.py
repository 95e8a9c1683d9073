"""A calendar set, or changed, after a reply to "can we meet?" was drafted: the next `h0 sweep` makes the
times of the drafts still waiting current (h0.handlers.reschedule) — and leaves alone a draft the owner
edited, a draft whose times are still free, and every draft while there is no calendar to read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from h0.cli import main
from tests.calendar.test_scheduling_drafts import answer, draft, email, llm, local, next_monday, vault

__all__ = ["llm", "vault"]  # the fixtures, shared with test_scheduling_drafts
ASK = "Hi Alex, can we find 30 minutes next week to go over Atlas?"
DRAFT = "Drafts/REPLY_EMAIL_meet.md"


def sweep(capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["sweep"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    return out


def slots_at(*moments: datetime) -> list[str]:
    return [moment.isoformat(timespec="minutes") for moment in moments]


def booked(calendar: Path, start: datetime, end: datetime) -> None:
    """One more event in the owner's .ics file (a change the calendar service sees by the file's stamp)."""
    stamp = "%Y%m%dT%H%M%SZ"
    event = (
        f"BEGIN:VEVENT\r\nUID:new@h0.test\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start.astimezone(UTC):{stamp}}\r\n"
        f"DTEND:{end.astimezone(UTC):{stamp}}\r\nSUMMARY:booked since\r\nEND:VEVENT\r\n"
    )
    calendar.write_text(calendar.read_text(encoding="utf-8").replace("END:VCALENDAR", event + "END:VCALENDAR"))


@pytest.fixture
def no_calendar_yet(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The owner's calendar file exists, but H0 is not told of it yet."""
    calendar = vault.parent / "me.ics"
    monkeypatch.delenv("CALENDAR_ICS")
    return calendar


def test_given_a_draft_written_without_a_calendar_when_one_is_set_then_the_next_sweep_proposes_its_times(
    vault, no_calendar_yet, capsys, monkeypatch
):
    email(vault, "EMAIL_meet", ASK)
    sweep(capsys)
    fm, above, below = draft(vault, "REPLY_EMAIL_meet.md")
    assert fm["meeting_request"] is True and "proposed_slots" not in fm
    assert "Here are some times" not in above and "Which times suit you?" in below

    monkeypatch.setenv("CALENDAR_ICS", str(no_calendar_yet))
    out = sweep(capsys)
    fm, above, below = draft(vault, "REPLY_EMAIL_meet.md")
    monday = next_monday()
    assert fm["proposed_slots"] == slots_at(
        local(monday, 12), local(monday + timedelta(days=1), 8), local(monday + timedelta(days=2), 8)
    )
    assert above.count("Here are some times") == 1 and above.index("Here are some times") < above.index("Cheers,")
    assert "12:00–12:30 (Europe/Berlin" in above
    assert (
        "Which times suit you?" not in below and "_Calendar: the times above were updated from your calendar" in below
    )
    assert "1 with their proposed times updated from your calendar" in out

    before = (vault / DRAFT).read_bytes()
    sweep(capsys)  # nothing changed since: the draft is left byte for byte
    assert (vault / DRAFT).read_bytes() == before


def test_given_a_proposed_time_booked_since_when_swept_then_the_proposal_is_made_again(vault, capsys):
    email(vault, "EMAIL_meet", ASK)
    sweep(capsys)
    monday = next_monday()
    assert draft(vault, "REPLY_EMAIL_meet.md")[0]["proposed_slots"][0] == slots_at(local(monday, 12))[0]

    booked(vault.parent / "me.ics", local(monday, 12), local(monday, 13))
    sweep(capsys)
    fm, above, _below = draft(vault, "REPLY_EMAIL_meet.md")
    assert fm["proposed_slots"][0] == slots_at(local(monday, 13))[0]
    assert above.count("Here are some times") == 1 and "Monday" in above and "12:00–12:30" not in above


def test_a_draft_the_owner_edited_keeps_the_owners_words_and_times(vault, no_calendar_yet, capsys, monkeypatch):
    email(vault, "EMAIL_meet", ASK)
    sweep(capsys)
    path = vault / DRAFT
    path.write_text(path.read_text(encoding="utf-8").replace("Cheers,", "Thursday at 10 works for me.\n\nCheers,"))
    edited = path.read_bytes()
    monkeypatch.setenv("CALENDAR_ICS", str(no_calendar_yet))
    sweep(capsys)
    assert path.read_bytes() == edited


def test_while_there_is_no_calendar_a_waiting_draft_is_left_as_it_is(vault, no_calendar_yet, capsys):
    email(vault, "EMAIL_meet", ASK)
    sweep(capsys)
    before = (vault / DRAFT).read_bytes()
    sweep(capsys)
    assert (vault / DRAFT).read_bytes() == before


def test_given_a_models_draft_without_a_calendar_when_one_is_set_then_its_placeholder_gets_the_times(
    vault, no_calendar_yet, llm, capsys, monkeypatch
):
    email(vault, "EMAIL_meet", ASK)
    llm.queue(answer("Hi Dana,\n\nHappy to. How about [FILL: the times that suit you]?\n\nCheers,\nAlex"))
    sweep(capsys)
    assert "[FILL: the times that suit you]" in draft(vault, "REPLY_EMAIL_meet.md")[1]

    monkeypatch.setenv("CALENDAR_ICS", str(no_calendar_yet))
    sweep(capsys)
    fm, above, _below = draft(vault, "REPLY_EMAIL_meet.md")
    assert "[FILL:" not in above and "How about Monday" in above and "12:00–12:30 (Europe/Berlin" in above
    assert fm["proposed_slots"][0] == slots_at(local(next_monday(), 12))[0]
    assert len(llm.requests) == 1  # no model call: the times come from the calendar
