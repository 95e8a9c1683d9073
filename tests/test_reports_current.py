"""Reports say what is true now (issue 24): a refused draft that was fixed and sent drops out of the
current errors of `h0 status` and the briefing (the log keeps it); sends are listed where the note is
now (Done/); a note written by hand shows its title, not `— | —`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.report.collect import AuditTail, collect_status
from h0.report.dashboard import collect_day, render_briefing, render_dashboard
from h0.report.privacy import report_view
from h0.vault import Vault
from tests.pipeline.harness import write_draft

pytestmark = pytest.mark.usefixtures("loguru_restored")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, vault_dir: Path) -> Path:
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("APPROVAL_SETTLE_SECONDS", "0")
    return vault_dir


def status_json(capsys) -> dict:
    assert main(["status", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_refused_draft_fixed_and_sent_leaves_the_current_lists_and_stays_in_the_log(env: Path, capsys):
    write_draft(env, "Approved", "fix.md", body="[H0 draft — edit before approving]\nHi Bob,\n")
    assert main(["sweep"]) == 0
    capsys.readouterr()
    before = status_json(capsys)
    assert before["totals"]["errors_24h"] == 1 and before["recent_errors"][0]["path"] == "Approved/fix.md"
    assert before["totals"]["returned_to_drafts"] == 1
    # The human fixes it and approves again: it goes out.
    draft = env / "Drafts/fix.md"
    draft.write_text(
        draft.read_text(encoding="utf-8").replace("[H0 draft — edit before approving]\n", ""), encoding="utf-8"
    )
    draft.rename(env / "Approved/fix.md")
    assert main(["sweep"]) == 0
    capsys.readouterr()
    after = status_json(capsys)
    assert after["totals"]["errors_24h"] == 0 and after["recent_errors"] == []
    assert after["totals"]["returned_to_drafts"] == 0
    assert [s["done_path"] for s in after["recent_sends"]] == ["Done/fix.md"]
    assert main(["status"]) == 0
    text = capsys.readouterr().out
    assert "Done/fix.md → to bob@example.com" in text and "Approved/fix.md" not in text
    settings = load_settings()
    status = collect_status(settings)
    records = AuditTail(env / "Logs").refresh()
    briefing = render_briefing(collect_day(dt.date.today(), records, report_view(settings, Vault(env))), status)
    assert "## Not sent" not in briefing and "Not sent, back in Drafts/ to fix: 0" in briefing
    assert "[[Done/fix" in briefing
    assert "Approved/fix" not in render_dashboard(status)
    assert main(["log"]) == 0  # the log still tells the whole story
    assert "fix.md" in capsys.readouterr().out


def test_a_note_written_by_hand_shows_its_title_in_the_briefing(env: Path, capsys):
    (env / "Needs_Action/call plumber.md").write_text(
        "# Call the plumber about the leak\n\nBefore Friday.\n", encoding="utf-8"
    )
    assert main(["sweep"]) == 0
    capsys.readouterr()
    records = AuditTail(env / "Logs").refresh()
    settings = load_settings()
    today = collect_day(dt.date.today(), records, report_view(settings, Vault(env)))
    briefing = render_briefing(today, collect_status(settings))
    row = next(line for line in briefing.splitlines() if "call plumber" in line)
    assert "Call the plumber about the leak" in row and "| — | — |" not in row
