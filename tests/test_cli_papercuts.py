"""A new user's first hour (issue 30): a mistyped command, a folder that is not an H0 vault, and
drafts named by what they are rather than by their hash file name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from h0.cli import main
from h0.vault import init_vault


def draft(vault_dir: Path, name: str, frontmatter: str) -> None:
    (vault_dir / "Drafts" / name).write_text(f"---\n{frontmatter.strip()}\n---\nHello\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("argv", "nearest"),
    [(["stauts"], "status"), (["doctr"], "doctor"), (["mcp", "vaul"], "vault"), (["imprt", "x.mbox"], "import")],
)
def test_given_a_mistyped_command_then_the_nearest_one_is_suggested(capsys, argv: list[str], nearest: str):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert f"did you mean '{nearest}'?" in capsys.readouterr().err


def test_given_a_command_far_from_any_then_no_suggestion_but_the_list(capsys):
    with pytest.raises(SystemExit):
        main(["xyzzyq"])
    err = capsys.readouterr().err
    assert "did you mean" not in err and "invalid choice: 'xyzzyq'" in err and "status" in err


@pytest.mark.parametrize("command", ["status", "doctor"])
def test_given_a_folder_that_is_not_an_h0_vault_then_status_and_doctor_say_so(tmp_path: Path, capsys, command: str):
    """A home folder, a project, an Obsidian vault without H0: exit 1 and a line saying what to do,
    never a page of zeros that reads like "all is well"."""
    folder = tmp_path / "Documents"
    folder.mkdir()
    (folder / "notes.md").write_text("# mine\n", encoding="utf-8")
    extra = ["--no-servers"] if command == "doctor" else []
    assert main([command, "--vault", str(folder), *extra]) == 1
    captured = capsys.readouterr()
    assert "not an H0 vault" in captured.out + captured.err
    assert f"h0 init {folder}" in captured.out + captured.err
    assert "Drafts waiting" not in captured.out
    assert not (folder / "Logs").exists()  # looking changed nothing


def test_given_an_initialised_vault_then_status_works(tmp_path: Path, capsys):
    folder = tmp_path / "vault"
    folder.mkdir()
    init_vault(folder)
    assert main(["status", "--vault", str(folder)]) == 0
    assert "Drafts waiting for your approval: 0" in capsys.readouterr().out


def test_given_the_bundled_vault_then_it_is_an_h0_vault():
    from h0.vault.layout import is_h0_vault

    assert is_h0_vault(Path(__file__).resolve().parent.parent / "vault")


def test_given_drafts_with_hash_names_then_status_and_dashboard_name_subject_and_recipient(vault_dir: Path, capsys):
    draft(vault_dir, "4f2a9c1e.md", "to: ann@example.com\nsubject: Quarterly numbers\nstatus: pending_approval")
    draft(vault_dir, "0b7d33aa.md", "subject: ''\nstatus: pending_approval")  # nothing filled in yet
    assert main(["status", "--vault", str(vault_dir)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "4f2a9c1e" in line or "0b7d33aa" in line]
    assert '  "Quarterly numbers" → to ann@example.com (Drafts/4f2a9c1e.md) (first message to example.com)' in lines
    assert '  "(no subject)" → no recipient yet (fill in to:) (Drafts/0b7d33aa.md)' in lines
    assert not any(line.rstrip().endswith("—") or "→ nobody" in line for line in out.splitlines())

    assert main(["status", "--vault", str(vault_dir), "--json"]) == 0
    details = json.loads(capsys.readouterr().out)["waiting_for_approval_details"]
    assert {d["path"]: d["subject"] for d in details} == {
        "Drafts/4f2a9c1e.md": "Quarterly numbers",
        "Drafts/0b7d33aa.md": "",
    }

    from h0.config import load_settings
    from h0.report.collect import collect_status
    from h0.report.dashboard import render_dashboard

    page = render_dashboard(collect_status(load_settings(vault_path=vault_dir)))
    assert "- **Quarterly numbers** → to ann@example.com ([[Drafts/4f2a9c1e]]) — **first message to**" in page
    assert "- **(no subject)** → no recipient yet (fill in to:) ([[Drafts/0b7d33aa]])" in page
    assert "→ nobody" not in page
    assert not any(line.startswith("- ") and line.rstrip().endswith("—") for line in page.splitlines())
