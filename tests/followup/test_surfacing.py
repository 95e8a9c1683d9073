"""Surfacing follow-ups (issue 25): replies owed and awaited on the note itself, in `h0 status` (text and
JSON) and on the dashboard under their own headings with their age, and in the daily briefing."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from h0.followup.workdays import add_working_days
from h0.report.collect import collect_status
from h0.report.dashboard import collect_day, render_briefing, render_dashboard
from h0.report.privacy import report_view
from h0.report.text import render_status
from h0.vault import Vault
from tests.followup.conftest import DANA, DAY, OWNER, fm, follow, ingest, synced, triage


@pytest.fixture
def surfaced(ctx, gmail, vault_dir, clock):
    """Dana's question with H0's draft waiting (owed), and the owner's own question to Bob (awaited), both
    past FOLLOW_UP_DAYS."""
    synced(ctx, gmail)
    gmail.add_message(sender=DANA, subject="Friday | review [[x]]?", body="Could we move the review to Friday?")
    gmail.add_message(
        sender=f"Owner <{OWNER}>",
        to="Bob Stone <bob@example.com>",
        subject="Invoice?",
        labels=("SENT",),
        body="Could you send me the invoice?",
    )
    (owed,) = ingest(ctx).written
    triage(ctx, owed)
    now = add_working_days(clock.now, 3) + 60
    report = follow(ctx, now)
    assert report.owed == [owed] and len(report.awaited) == 1
    return owed, report.awaited[0], now


def test_replies_owed_and_awaited_are_on_the_notes_for_obsidian_to_query(vault_dir, surfaced):
    owed, awaited, _ = surfaced
    assert fm(vault_dir, owed)["follow_up"] == "reply_owed"
    assert (
        fm(vault_dir, awaited)["follow_up"] == "reply_awaited" and fm(vault_dir, awaited)["status"] == "awaiting_reply"
    )


def test_h0_status_lists_them_under_their_own_headings_with_their_age(ctx, surfaced):
    owed, awaited, now = surfaced
    status = collect_status(ctx.settings, now=now)
    assert status["totals"]["replies_owed"] == 1 and status["totals"]["replies_awaited"] == 1
    (item,) = status["follow_ups"]["owed"]
    assert item["path"] == owed and item["working_days"] == 3 and "Dana Rivera" in item["sender"]
    (wait,) = status["follow_ups"]["awaited"]
    assert wait["path"] == awaited and wait["working_days"] == 3 and wait["waiting_on"] == "Bob Stone <bob@example.com>"
    text = render_status(status)
    assert "Replies you owe: 1" in text and f"  {owed}  Dana Rivera" in text and "3 working days" in text
    assert "Replies you are waiting for: 1" in text and "follow-up drafted: Drafts/REPLY_FOLLOWUP_" in text
    json.dumps(status)  # `h0 status --json` serialises it as it is


def test_the_dashboard_has_a_section_for_each_and_escapes_what_strangers_wrote(ctx, surfaced):
    owed, awaited, now = surfaced
    board = render_dashboard(collect_status(ctx.settings, now=now))
    assert "## Replies you owe (1)" in board and "## Replies you are waiting for (1)" in board
    row = next(line for line in board.splitlines() if line.startswith(f"| [[{owed.removesuffix('.md')}]]"))
    assert row.count(" | ") == 3 and "\\|" in row and "\\[\\[x\\]\\]" in row and row.endswith("| 3 working days |")
    assert f"[[{awaited.removesuffix('.md')}]]" in board and "[[Drafts/REPLY_FOLLOWUP_" in board


def test_the_daily_briefing_says_what_is_owed_and_awaited(ctx, surfaced):
    owed, _, now = surfaced
    today = collect_day(dt.date.today(), [], report_view(ctx.settings, Vault(ctx.settings.vault_path)))
    briefing = render_briefing(today, collect_status(ctx.settings, now=now))
    assert "## Follow-ups (1 owed, 1 awaited)" in briefing
    assert f"Reply owed: [[{owed.rsplit('/', 1)[1].removesuffix('.md')}]]" in briefing
    assert "No answer from Bob Stone" in briefing and "3 working days" in briefing


def test_nothing_owed_or_awaited_says_so(ctx, vault_dir):
    status = collect_status(ctx.settings)
    assert "Replies you owe: 0" in render_status(status)
    board = render_dashboard(status)
    assert "No reply owed." in board and "No answer is overdue." in board


def test_the_cli_prints_the_follow_ups(vault_dir, surfaced, capsys, monkeypatch):
    from h0.cli import main

    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert main(["status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["totals"]["replies_owed"] == 1 and data["follow_ups"]["owed"][0]["path"] == surfaced[0]


@pytest.mark.parametrize("days", [1, 2])
def test_follow_up_days_decides_when(ctx, gmail, vault_dir, clock, days):
    """FOLLOW_UP_DAYS=1 surfaces a day earlier than the default 2."""
    synced(ctx, gmail)
    gmail.add_message(sender=DANA, subject="Quick one?", body="Can you confirm?")
    (path,) = ingest(ctx).written
    triage(ctx, path)
    ctx.settings = ctx.settings.model_copy(update={"follow_up_days": days})
    from h0.followup.messages import epoch

    received = epoch(fm(vault_dir, path)["received"])
    assert follow(ctx, add_working_days(received, days) - 60).owed == []
    assert follow(ctx, add_working_days(received, days) + 60).owed == [path]
    assert add_working_days(received, days) - received >= days * DAY
