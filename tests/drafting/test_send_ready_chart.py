"""The send-ready rate week by week: is H0 learning? A Mermaid chart on the dashboard.

Given drafting log records of drafts sent (send-ready or edited) and rejected over several weeks,
when the status is collected, then `drafts.weekly` counts each ISO week and the dashboard draws
the rate as a bar chart Obsidian renders; a quiet week is labelled as such, never drawn as a bad one.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from h0.config import Settings
from h0.drafting.learning import WEEKS, quality
from h0.report.chart import send_ready_chart
from h0.report.collect import collect_status
from h0.report.dashboard import render_dashboard

NOW = dt.datetime(2026, 11, 26, 12, 0, tzinfo=dt.UTC)  # a Thursday of ISO week 48


def outcome(logs: Path, when: dt.datetime, draft_id: str, outcome: str, send_ready: bool = False) -> None:
    path = logs / f"drafting_{when:%Y-%m-%d}.jsonl"
    record = {
        "timestamp": when.isoformat().replace("+00:00", "Z"),
        "event": "draft_outcome",
        "severity": "info",
        "draft_id": draft_id,
        "outcome": outcome,
        "send_ready": send_ready,
        "similarity": 0.9 if send_ready else 0.4,
    }
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


def test_given_three_weeks_of_outcomes_then_each_week_has_its_rate_and_the_chart_draws_them(vault_dir: Path):
    logs = vault_dir / "Logs"
    logs.mkdir(exist_ok=True)
    outcome(logs, NOW - dt.timedelta(weeks=2), "a", "sent", send_ready=False)
    outcome(logs, NOW - dt.timedelta(weeks=2), "b", "rejected")
    outcome(logs, NOW - dt.timedelta(weeks=1), "c", "sent", send_ready=True)
    outcome(logs, NOW - dt.timedelta(weeks=1), "d", "sent", send_ready=False)
    outcome(logs, NOW - dt.timedelta(days=1), "e", "sent", send_ready=True)
    outcome(logs, NOW - dt.timedelta(weeks=20), "old", "sent", send_ready=True)  # outside the chart
    weekly = quality(vault_dir, now=NOW)["weekly"]
    assert len(weekly) == WEEKS and weekly[-1]["week"] == "2026-W48"
    assert [(w["resolved"], w["send_ready"]) for w in weekly[-3:]] == [(2, 0), (2, 1), (1, 1)]
    assert [w["send_ready_rate"] for w in weekly[-3:]] == [0.0, 0.5, 1.0]
    assert weekly[0]["resolved"] == 0 and weekly[0]["send_ready_rate"] is None

    chart = send_ready_chart({"weekly": weekly})
    assert chart[0] == "```mermaid" and chart[1] == "xychart-beta" and chart[-2] == "```"
    assert '"W46", "W47", "W48"]' in chart[3] and '"W41 (none)"' in chart[3]
    assert chart[5].endswith("0, 50, 100]")


def test_given_no_resolved_draft_then_no_chart_and_the_dashboard_shows_it_once_there_is_one(
    vault_dir: Path, monkeypatch
):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert send_ready_chart(quality(vault_dir)) == []
    assert "xychart-beta" not in render_dashboard(collect_status(Settings()))
    logs = vault_dir / "Logs"
    logs.mkdir(exist_ok=True)
    outcome(logs, dt.datetime.now(dt.UTC), "x", "sent", send_ready=True)
    page = render_dashboard(collect_status(Settings()))
    assert page.count("```mermaid\nxychart-beta") == 1 and "bar [" in page
