"""The owner's hours live in H0_Profile.md: `h0 init` writes them with comments, drafting reads them,
and a bad value is reported by `h0 doctor` while its default is used."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.cli import main
from h0.drafting.profile import DEFAULT_PROFILE_TEXT, default_profile, load_profile


def test_the_default_profile_names_every_hours_property_with_a_comment():
    for key in ("timezone:", "working_hours:", "meeting_minutes:", "meeting_buffer_minutes:"):
        line = next(line for line in DEFAULT_PROFILE_TEXT.splitlines() if line.startswith(key))
        assert "#" in line  # says what it is, right there
    hours = default_profile().hours
    assert hours.problems == () and hours.meeting_minutes == 30 and hours.week[0] and not hours.week[6]


def test_h0_init_writes_them_and_drafting_reads_them(tmp_path: Path, capsys):
    vault = tmp_path / "vault"
    vault.mkdir()
    assert main(["init", str(vault)]) == 0
    capsys.readouterr()
    text = (vault / "H0_Profile.md").read_text(encoding="utf-8")
    assert "working_hours: Mon-Fri 09:00-17:00" in text
    text = text.replace('timezone: ""', "timezone: America/Chicago").replace(
        "meeting_minutes: 30", "meeting_minutes: 45"
    )
    (vault / "H0_Profile.md").write_text(text, encoding="utf-8")
    profile = load_profile(vault)
    assert profile.hours.zone_name == "America/Chicago" and profile.hours.meeting_minutes == 45
    assert profile.problems == ()


def test_a_bad_value_is_reported_by_doctor_and_the_default_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    vault = tmp_path / "vault"
    vault.mkdir()
    assert main(["init", str(vault)]) == 0
    text = (vault / "H0_Profile.md").read_text(encoding="utf-8")
    text = text.replace('timezone: ""', "timezone: Atlantis/Lost").replace(
        "working_hours: Mon-Fri 09:00-17:00", "working_hours: all day every day"
    )
    (vault / "H0_Profile.md").write_text(text, encoding="utf-8")
    monkeypatch.setenv("VAULT_PATH", str(vault))
    capsys.readouterr()
    main(["doctor", "--no-servers"])
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "profile" in line)
    assert line.startswith("!") and "Atlantis/Lost" in line and "working_hours" in line
    hours = load_profile(vault).hours
    assert hours.week == default_profile().hours.week and len(hours.problems) == 2
