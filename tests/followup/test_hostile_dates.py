"""No property blinds the reports (issue 29): a date a note carries that is out of range or
malformed is a typed error on that note, and `h0 status` (text and JSON), the dashboard, the
briefing and the follow-up pass keep working for every other note."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.errors import InvalidRequest
from h0.report.collect import collect_status
from h0.report.dashboard import collect_day, render_briefing, render_dashboard
from h0.report.privacy import report_view
from h0.vault import Vault
from h0.vault.dates import DATE_FIELDS, note_epoch
from tests.followup.conftest import context, fm, follow

HOSTILE = {
    "year 0": "0000-01-01",
    "year 1": "0001-01-01T00:00:00Z",
    "year 1, a date (local time: its zone conversion leaves the calendar)": "0001-01-01",
    "year 1, no zone": "0001-01-01 00:00",
    "year 9999, five hours west of UTC": "9999-12-31T23:59:59-05:00",
    "year 99999": "99999-01-01",
    "year 9999, west of UTC": "9999-12-31T23:59:59-12:00",
    "tomorrow-ish": "tomorrow-ish",
    "a list": "[2026-01-01, 2026-01-02]",
    "a nested map": "{a: {b: {c: 2026-01-01}}}",
    "a huge int": "999999999999999999999999999999",
    "a negative int": "-99999999999",
    "an impossible day": "2026-02-30",
    "a boolean": "true",
    "infinity": ".inf",
}
FIELDS = (*DATE_FIELDS, "snooze_until")


def write_notes(vault_dir: Path, value: str) -> None:
    for i, field in enumerate(FIELDS):
        (vault_dir / "Needs_Action" / f"EMAIL_{i}.md").write_text(
            f"---\ntype: email\nfrom: Ann <ann@example.com>\nsubject: s{i}\nstatus: needs_info\nmessage_id: m{i}\n"
            f"thread_id: t{i}\n{field}: {value}\n---\nbody\n",
            encoding="utf-8",
        )
        (vault_dir / "Drafts" / f"D_{i}.md").write_text(
            f"---\nto: ann@example.com\nsubject: s{i}\nstatus: pending_approval\n{field}: {value}\n---\nbody\n",
            encoding="utf-8",
        )
        (vault_dir / "Done" / f"S_{i}.md").write_text(
            f"---\ntype: sent\nto: ann@example.com\nsubject: s{i}\nstatus: sent\nawaiting: true\nthread_id: t{i}\n"
            f"{field}: {value}\n---\nbody\n",
            encoding="utf-8",
        )
    (vault_dir / "Needs_Action" / "EMAIL_fine.md").write_text(
        "---\ntype: email\nfrom: Bo <bo@example.com>\nsubject: fine\nstatus: needs_info\nmessage_id: ok\n"
        "received: 2026-01-05T09:00:00Z\n---\nbody\n",
        encoding="utf-8",
    )


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
def test_given_a_hostile_date_on_every_kind_of_note_then_reports_and_the_follow_up_pass_keep_working(
    vault_dir: Path, capsys, loguru_restored, value: str
):
    write_notes(vault_dir, value)
    settings = load_settings(vault_path=vault_dir)
    status = collect_status(settings)
    json.dumps(status)
    assert status["totals"]["needs_you"] == len(FIELDS) + 1
    render_dashboard(status)
    render_briefing(collect_day(dt.date.today(), [], report_view(settings, Vault(vault_dir))), status)
    assert main(["status", "--vault", str(vault_dir)]) == 0
    assert "Emails that need you:" in capsys.readouterr().out

    ctx = context(vault_dir, None)
    for now in (time.time(), time.time() + 40 * 86400):
        report = follow(ctx, now)
        assert report.failed == 0
    for i, field in enumerate(FIELDS):
        note = fm(vault_dir, f"Needs_Action/EMAIL_{i}.md")
        error_key = "snooze_error" if field == "snooze_until" else "date_error"
        assert field in note[error_key] and note[f"{error_key}_code"] == "invalid_request", (field, note)
    assert "date_error" not in fm(vault_dir, "Needs_Action/EMAIL_fine.md")


def test_a_fixed_date_clears_its_error(vault_dir: Path, loguru_restored):
    path = vault_dir / "Needs_Action" / "EMAIL_1.md"
    path.write_text("---\ntype: email\nsubject: s\nstatus: needs_info\nreceived: tomorrow-ish\n---\nb\n")
    ctx = context(vault_dir, None)
    follow(ctx, time.time())
    assert "received" in fm(vault_dir, "Needs_Action/EMAIL_1.md")["date_error"]
    text = path.read_text().replace("received: tomorrow-ish", "received: 2026-01-05T09:00:00Z")
    path.write_text(text)
    follow(ctx, time.time())
    assert "date_error" not in fm(vault_dir, "Needs_Action/EMAIL_1.md")


@pytest.mark.parametrize(
    ("value", "epoch"),
    [
        ("2026-01-05T09:00:00Z", 1767603600.0),
        ("2026-01-05 09:00:00+00:00", 1767603600.0),
        ("2026-01-05T10:00:00+01:00", 1767603600.0),
        ("2026-01-05T09:00:00.123456789Z", 1767603600.123456),
        (dt.date(2026, 1, 5), 1767571200.0),
        (None, None),
        ("", None),
    ],
)
def test_good_dates_read(value, epoch):
    assert note_epoch(value, "received") == epoch


@pytest.mark.parametrize("value", [[1], {"a": {"b": 1}}, 10**30, True, 1.5, "1969-12-31", "3000-01-01"])
def test_bad_dates_are_typed_errors_naming_the_property(value):
    with pytest.raises(InvalidRequest) as caught:
        note_epoch(value, "received")
    assert caught.value.message.startswith("received:") and caught.value.details["field"] == "received"


def test_a_bad_value_with_a_backslash_is_shown_as_written_never_doubled():
    with pytest.raises(InvalidRequest) as caught:
        note_epoch("C:\\dates\\today", "received")
    assert '"C:\\dates\\today"' in caught.value.message and "\\\\" not in caught.value.message
