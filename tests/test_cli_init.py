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
    from h0.vault.disclosure import Disclosure
    from h0.vault.private_folders import recorded_folders

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


def test_init_says_loudly_that_a_record_it_cannot_read_keeps_every_note_private_and_leaves_it(tmp_path: Path, capsys):
    """Given `.h0/private-folders` replaced by a FIFO, when `h0 init` runs, then it neither waits on it nor writes
    over it, and says that every note stays private until the file can be read."""
    import os

    (tmp_path / "Journal").mkdir()
    (tmp_path / ".h0").mkdir()
    os.mkfifo(tmp_path / ".h0/private-folders")
    assert main(["init", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert ".h0/private-folders cannot be read" in out and "every note" in out
    assert (tmp_path / ".h0/private-folders").is_fifo()


def test_init_records_the_private_folders_with_the_careful_writer(tmp_path: Path, capsys):
    """Given `.h0/private-folders` as a dangling symlink to a file outside the vault, when `h0 init` records the
    diary, then it writes a new file in the record's place (renamed into place, as every careful write), never
    through the link: nothing is created outside the vault and no temporary file is left."""
    vault = tmp_path / "vault"
    (vault / "Journal").mkdir(parents=True)
    (vault / ".h0").mkdir()
    outside = tmp_path / "outside.txt"
    (vault / ".h0/private-folders").symlink_to(outside)
    assert main(["init", str(vault)]) == 0
    capsys.readouterr()
    record = vault / ".h0/private-folders"
    assert not outside.exists() and not record.is_symlink()
    assert record.read_text(encoding="utf-8").endswith("Journal\n")
    assert sorted(p.name for p in (vault / ".h0").iterdir()) == ["private-folders"]


def test_doctor_fails_on_a_private_folders_record_it_cannot_read(vault_dir: Path):
    """`h0 doctor` says what init said: the record cannot be read, every note stays private, how to fix it."""
    import os

    from h0.cli.doctor import FAIL, run_checks
    from h0.config import load_settings

    record = vault_dir / ".h0/private-folders"
    record.parent.mkdir(exist_ok=True)
    record.unlink(missing_ok=True)
    os.mkfifo(record)
    checks = [c for c in run_checks(load_settings(vault_path=vault_dir), servers=False) if c.what == "private folders"]
    assert len(checks) == 1 and checks[0].mark == FAIL and "every note private" in checks[0].detail
