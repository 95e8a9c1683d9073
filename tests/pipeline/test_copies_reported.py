"""A copy H0 filed instead of sending it (a sync tool's copy of a sent draft) is said wherever H0 reports what
it did: `h0 sweep`'s summary counts it, and H0_Dashboard.md and today's briefing list it — a private one (its
note private, or sent to a private person) counted there, never named (issue 40)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.report.briefing import BRIEFINGS
from h0.report.dashboard import DASHBOARD_NOTE
from h0.report.dashwriter import DashboardWriter
from h0.vault import AuditLog
from tests.pipeline.harness import events, frontmatter, write_draft

pytestmark = pytest.mark.usefixtures("loguru_restored")

LIVE = {"running": True, "pid": 4242, "started": "2026-01-01T00:00:00.000Z"}


def test_given_a_sync_copy_of_a_sent_draft_when_swept_then_the_summary_counts_the_copy(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    write_draft(vault_dir, "Approved", "lunch.md", to="ann@example.com", subject="Lunch", body="Thursday?\n")
    assert main(["sweep"]) == 0
    assert frontmatter(vault_dir, "Done/lunch.md")["status"] == "sent"
    capsys.readouterr()
    write_draft(vault_dir, "Approved", "lunch 2.md", to="ann@example.com", subject="Lunch", body="Thursday?\n")
    assert main(["sweep"]) == 0
    summary = capsys.readouterr().out.splitlines()[0]
    assert frontmatter(vault_dir, "Done/lunch 2.md")["status"] == "copy" and events(vault_dir, event="copy_filed")
    assert "1 copy filed in Done/, not sent (the same message was sent already)" in summary, summary


def copy_record(log: AuditLog, name: str, to: str, subject: str) -> None:
    log.write(
        "copy_filed",
        "warning",
        path=f"Approved/{name} 2.md",
        done_path=f"Done/{name} 2.md",
        copy_of=f"Done/{name}.md",
        sent_at="2026-11-28T09:00:00Z",
        outcome="sent",
        to=to,
        subject=subject,
        message="a copy of a reply already sent",
    )


def test_given_copies_filed_today_then_the_dashboard_and_the_briefing_list_them_and_count_a_private_one(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    """Given two copies filed today, one of a reply marked private, then both notes any agent reads list the
    public copy (its note, what it is a copy of) and count the private one, naming nothing of it."""
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    for name, to, subject, private in (
        ("lunch", "ann@example.com", "Lunch", False),
        ("zqclinic", "zq@clinic.example", "ZQRESULTS", True),
    ):
        for done in (f"Done/{name}.md", f"Done/{name} 2.md"):
            status = "sent" if " 2" not in done else "copy"
            head = {"to": to, "subject": subject, "status": status, **({"private": True} if private else {})}
            lines = "".join(f"{key}: {json.dumps(value)}\n" for key, value in head.items())
            (vault_dir / done).write_text(f"---\n{lines}---\nThursday?\n", encoding="utf-8")
        copy_record(AuditLog(vault_dir / "Logs", "h0"), name, to, subject)
    DashboardWriter(load_settings(), live=lambda: dict(LIVE)).refresh()
    dashboard = (vault_dir / DASHBOARD_NOTE).read_text(encoding="utf-8")
    briefing = (vault_dir / BRIEFINGS / f"{dt.date.today().isoformat()}.md").read_text(encoding="utf-8")
    for text, where in ((dashboard, "dashboard"), (briefing, "briefing")):
        section = text.split("## Copies filed", 1)[1].split("\n## ", 1)[0]
        assert "[[Done/lunch 2]]" in section and "[[Done/lunch]]" in section, where
        assert "1 private copy" in section, where
        assert "zq" not in text.lower(), where
