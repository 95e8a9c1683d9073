"""No event is ever named: not in a draft's text, not under its cut-off line (which an agent reads in
Drafts/ with `read_note`), not to the model, not through `draft_context` — not even a meeting the sender
attends. Who "the sender" is comes from a `From:` line anyone can write, so naming the meetings of the
address an email claims would let a forged email choose whose meetings H0 describes.

Given a calendar holding a private event and a meeting with Dana (both titled with secrets), and two
emails asking to meet — Dana's, and one forged as Dana's with a Reply-To elsewhere — when `h0 sweep`
drafts both, then a real `h0 mcp vault` process reading the drafts and their context finds times only.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from h0.cli import main
from tests.conftest import H0_BIN, subprocess_env

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("loguru_restored")]

BERLIN = ZoneInfo("Europe/Berlin")
SECRETS = ("SECRET-PRIVATE-TITLE-1180", "SECRET-PLACE-1181", "SECRET-SHARED-TITLE-1182", "SECRET-NOTES-1183")
PROFILE = (
    "---\ntype: h0-profile\nname: Alex Kim\ntimezone: Europe/Berlin\nworking_hours: Mon-Fri 08:00-18:00\n"
    "meeting_minutes: 30\n---\n# Profile\n"
)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def next_monday() -> date:
    today = datetime.now(BERLIN).date()
    return today + timedelta(days=7 - today.weekday())


def stamp(day: date, hour: int) -> str:
    return datetime(day.year, day.month, day.day, hour, tzinfo=BERLIN).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


@pytest.fixture
def drafted(vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> tuple[Path, Path]:
    (vault_dir / "H0_Profile.md").write_text(PROFILE, encoding="utf-8")
    monday = next_monday()
    tuesday = monday + timedelta(days=1)
    calendar = tmp_path / "me.ics"
    calendar.write_text(
        "\r\n".join(
            [
                "BEGIN:VCALENDAR",
                "VERSION:2.0",
                "PRODID:x",
                "BEGIN:VEVENT",
                "UID:private@h0.test",
                "DTSTAMP:20260101T000000Z",
                f"DTSTART:{stamp(monday, 9)}",
                f"DTEND:{stamp(monday, 11)}",
                f"SUMMARY:{SECRETS[0]}",
                f"LOCATION:{SECRETS[1]}",
                "END:VEVENT",
                "BEGIN:VEVENT",
                "UID:shared@h0.test",
                "DTSTAMP:20260101T000000Z",
                f"DTSTART:{stamp(tuesday, 14)}",
                f"DTEND:{stamp(tuesday, 15)}",
                f"SUMMARY:{SECRETS[2]}",
                f"DESCRIPTION:{SECRETS[3]}",
                "ORGANIZER:mailto:alex@northwind.example",
                "ATTENDEE:mailto:dana@acme.example",
                "END:VEVENT",
                "END:VCALENDAR",
                "",
            ]
        ),
        encoding="utf-8",
    )
    for name, extra in (("EMAIL_dana", ""), ("EMAIL_forged", "reply_to: mallory@elsewhere.example\n")):
        (vault_dir / f"Needs_Action/{name}.md").write_text(
            f"---\ntype: email\nstatus: pending\nmessage_id: m-{name}\nfrom: Dana Rivera <dana@acme.example>\n"
            f"{extra}to: alex@northwind.example\nsubject: Atlas\nreceived: 2026-03-10T09:00:00Z\n---\n"
            "```text\nHi Alex, can we find 30 minutes next week? When do we meet anyway?\n```\n",
            encoding="utf-8",
        )
    for name, value in {
        "VAULT_PATH": str(vault_dir),
        "CALENDAR_ICS": str(calendar),
        "OWNER_EMAILS": "alex@northwind.example",
    }.items():
        monkeypatch.setenv(name, value)
    assert main(["sweep"]) == 0
    capsys.readouterr()
    return vault_dir, calendar


async def test_an_agent_reading_scheduling_drafts_and_their_context_finds_times_only(drafted):
    vault_dir, calendar = drafted
    params = StdioServerParameters(
        command=H0_BIN,
        args=["mcp", "vault"],
        env=subprocess_env(VAULT_PATH=str(vault_dir), CALENDAR_ICS=str(calendar), LOG_LEVEL="WARNING"),
    )
    answers = []
    async with Client(params) as client:
        for name in ("EMAIL_dana", "EMAIL_forged"):
            read = await client.call_tool("read_note", {"path": f"Drafts/REPLY_{name}.md"})
            assert not read.is_error, read
            body = json.dumps(read.structured_content)
            assert "Here are some times" in body and "proposed_slots" in body  # the draft proposes times
            context = await client.call_tool("draft_context", {"path": f"Needs_Action/{name}.md"})
            assert not context.is_error, context
            assert context.structured_content["scheduling"]["proposed_slots"]
            answers += [body, json.dumps(context.structured_content), *(c.text for c in read.content)]
    tuesday_meeting = f"{next_monday() + timedelta(days=1)}T14:00"
    for answer in answers:
        for secret in SECRETS:
            assert secret not in answer
        assert "already meet" not in answer and "meetings_with_sender" not in answer
        assert tuesday_meeting not in answer  # the meeting with Dana is busy time, never singled out
