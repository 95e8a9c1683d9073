"""With no VAULT_PATH, H0 never serves the bundled demo vault outside its own checkout: every command
that works in a vault refuses with one line saying what to set (exit 1). From the checkout the demo stays
the README's first command; `h0 mcp` registered for one's own vault (`claude mcp add … --env VAULT_PATH=…`)
serves that vault from any folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from h0.cli import main
from h0.config import BUNDLED_VAULT, load_settings, vault_unset
from tests.conftest import H0_BIN, ROOT, subprocess_env

pytestmark = pytest.mark.usefixtures("loguru_restored")

IN_PROCESS = [
    ["status"],
    ["status", "--json"],
    ["log"],
    ["sweep"],
    ["ingest"],
    ["import", "mail.mbox"],
    ["eval"],
    ["init"],
    ["demo", "reset"],
    ["service", "install", "--dry-run"],
]


def bundled_files() -> dict[str, int]:
    return {p.relative_to(BUNDLED_VAULT).as_posix(): p.stat().st_mtime_ns for p in BUNDLED_VAULT.rglob("*")}


@pytest.mark.parametrize("argv", IN_PROCESS, ids=" ".join)
def test_given_no_vault_path_outside_the_checkout_then_a_command_refuses_in_one_line(
    tmp_path: Path, capsys, argv: list[str]
):
    """The test's working folder is a temporary one (tests/conftest.py: _clean_env), outside the checkout."""
    before = bundled_files()
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith(f"h0 {argv[0]}") and ": VAULT_PATH is not set: set it to your Obsidian vault" in err
    assert "--vault" in err
    assert bundled_files() == before


@pytest.mark.parametrize("argv", [["mcp", "vault"], ["mcp", "gmail"], ["watch"]], ids=" ".join)
def test_given_no_vault_path_then_a_server_or_daemon_started_elsewhere_exits_before_serving(
    tmp_path: Path, argv: list[str]
):
    """As Claude Code starts a server registered without VAULT_PATH from another project's folder."""
    run = subprocess.run(
        [H0_BIN, *argv], cwd=tmp_path, env=subprocess_env(), input="", capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith(f"h0 {argv[0]}: VAULT_PATH is not set") and run.stderr.count("\n") == 1


def test_given_no_vault_path_then_doctor_says_it_as_its_first_problem(capsys):
    assert main(["doctor", "--no-servers"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("✗ vault — VAULT_PATH is not set") and out.rstrip().endswith("1 problem(s) to fix.")


def test_in_the_checkout_the_bundled_vault_stands_in_for_an_unset_vault_path():
    settings = load_settings()
    assert settings.vault_path == BUNDLED_VAULT
    assert vault_unset(settings, cwd=ROOT) is None
    assert vault_unset(settings, cwd=ROOT / "docs") is None
    assert vault_unset(settings, cwd=ROOT.parent) is not None
    assert vault_unset(load_settings(vault_path=BUNDLED_VAULT), cwd=ROOT.parent) is None  # named on purpose


def test_the_readme_demo_runs_from_the_checkout_with_no_env(tmp_path: Path):
    """`h0 status` (it changes nothing) from the checkout, with no VAULT_PATH and no .env: the demo vault."""
    run = subprocess.run([H0_BIN, "status"], cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "Emails that need you:" in run.stdout


def test_given_an_empty_vault_path_then_h0_says_so_rather_than_using_the_working_folder(capsys, monkeypatch):
    monkeypatch.setenv("VAULT_PATH", " ")
    assert main(["status"]) == 1
    assert "VAULT_PATH=' ': " in capsys.readouterr().err


@pytest.mark.anyio
async def test_given_vault_path_in_the_servers_environment_then_h0_mcp_serves_that_vault_from_any_folder(
    tmp_path: Path, vault_dir: Path
):
    """`claude mcp add h0-vault --env VAULT_PATH=~/Vault -- …/.venv/bin/h0 mcp vault`: Claude Code starts it in
    whatever folder it runs in, with that variable (a `~` as typed, unexpanded by any shell)."""
    home = vault_dir.parent
    (vault_dir / "Needs_Action" / "EMAIL_mine.md").write_text("---\nsubject: mine\n---\nhello\n", encoding="utf-8")
    elsewhere = tmp_path / "another-project"
    elsewhere.mkdir()
    env = subprocess_env(HOME=str(home), VAULT_PATH=f"~/{vault_dir.name}")
    server = StdioServerParameters(command=H0_BIN, args=["mcp", "vault"], env=env, cwd=str(elsewhere))
    async with Client(server) as client:
        listed = await client.call_tool("list_notes", {"directory": "Needs_Action"})
    assert not listed.is_error, listed.content
    assert listed.structured_content["notes"] == ["Needs_Action/EMAIL_mine.md"]


@pytest.fixture
def anyio_backend():
    return "asyncio"
