"""`h0 init`: create the folder skeleton in an existing vault without touching anything."""

from __future__ import annotations

from pathlib import Path

from h0.cli import main
from h0.vault import FOLDERS


def test_init_creates_missing_folders_and_prints_them(tmp_path: Path, capsys):
    vault = tmp_path / "MyVault"
    vault.mkdir()
    (vault / "Drafts").mkdir()
    (vault / "Drafts/mine.md").write_text("my own note")
    (vault / ".obsidian").mkdir()
    assert main(["init", str(vault)]) == 0
    out = capsys.readouterr().out
    assert "Needs_Action/" in out and "Drafts/" not in out and "H0_Rules.md" in out
    assert (vault / "H0_Rules.md").is_file()
    for name in FOLDERS:
        assert (vault / name).is_dir()
    assert (vault / "Drafts/mine.md").read_text() == "my own note"


def test_init_twice_says_there_is_nothing_to_do(tmp_path: Path, capsys):
    main(["init", str(tmp_path)])
    capsys.readouterr()
    assert main(["init", str(tmp_path)]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_init_of_a_missing_folder_fails_with_a_message(tmp_path: Path, capsys):
    assert main(["init", str(tmp_path / "typo")]) == 1
    assert "not a folder" in capsys.readouterr().err


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_init_writes_the_profile_note_that_explains_itself_and_never_replaces_the_owners(tmp_path: Path, capsys):
    from h0.drafting import DEFAULT_PROFILE_TEXT, load_profile

    assert main(["init", str(tmp_path)]) == 0
    assert "H0_Profile.md" in capsys.readouterr().out
    assert (tmp_path / "H0_Profile.md").read_text(encoding="utf-8") == DEFAULT_PROFILE_TEXT
    profile = load_profile(tmp_path)
    assert profile.exists and not profile.problems and profile.greeting == "Hi {first_name},"
    (tmp_path / "H0_Profile.md").write_text("---\nname: Alex\n---\nmine\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 0
    assert (tmp_path / "H0_Profile.md").read_text(encoding="utf-8") == "---\nname: Alex\n---\nmine\n"


def test_init_proposes_the_journal_and_obsidians_daily_notes_folder_as_private_and_says_so(tmp_path: Path, capsys):
    """Given a vault with a Journal folder and Obsidian's daily notes kept in Days/, when `h0 init` runs, then
    both are recorded as private in .h0/private-folders, the output says so, and the gate treats them so."""
    from h0.vault.disclosure import Disclosure, recorded_folders

    (tmp_path / "Journal").mkdir()
    (tmp_path / "Days").mkdir()
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian/daily-notes.json").write_text('{"folder": "Days", "format": "YYYY-MM-DD"}')
    assert main(["init", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Private folders: Journal/, Days/" in out and ".h0/private-folders" in out
    assert recorded_folders(tmp_path) == ["Journal", "Days"]
    gate = Disclosure.for_vault(tmp_path)
    assert gate.never("Journal/2026-11-24.md") and gate.never("days/x.md") and not gate.never("Projects/x.md")
    # The owner's choice is kept: the file edited, a second init changes nothing and says what is recorded.
    (tmp_path / ".h0/private-folders").write_text("# mine\nHealth\n")
    assert main(["init", str(tmp_path)]) == 0
    assert "Private folders (from .h0/private-folders): Health/" in capsys.readouterr().out
    gate = Disclosure.for_vault(tmp_path)
    assert gate.never("Health/a.md") and not gate.never("Journal/a.md")


def test_an_unrecorded_vault_keeps_its_diary_private_by_default(tmp_path: Path, capsys):
    """Given a vault where `h0 init` found no diary, when a Diary folder appears later, then it is private
    (nothing recorded: the gate looks for diary folders itself)."""
    from h0.vault.disclosure import Disclosure

    assert main(["init", str(tmp_path)]) == 0
    assert "No diary folder found" in capsys.readouterr().out
    assert not (tmp_path / ".h0/private-folders").exists()
    (tmp_path / "diary").mkdir()
    assert Disclosure.for_vault(tmp_path).never("diary/today.md")
