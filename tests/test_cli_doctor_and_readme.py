"""`h0 doctor`, and the README's promises: its two commands are the ones CI and users run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import H0_BIN, ROOT, subprocess_env


def test_doctor_checks_vault_rules_backend_and_both_servers(vault_dir: Path):
    subprocess.run([H0_BIN, "init", str(vault_dir)], check=True, capture_output=True)
    result = subprocess.run(
        [H0_BIN, "doctor"], env=subprocess_env(VAULT_PATH=str(vault_dir)), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ MCP server `h0 mcp vault`: ok" in result.stdout
    assert "✓ MCP server `h0 mcp gmail`: ok" in result.stdout
    assert "! mail backend: outbox" in result.stdout and "All good." in result.stdout


def test_doctor_says_what_to_fix_and_exits_1(vault_dir: Path, tmp_path: Path):
    env = subprocess_env(VAULT_PATH=str(vault_dir), MAIL_BACKEND="gmail", GMAIL_TOKEN_PATH=str(tmp_path / "none.json"))
    result = subprocess.run([H0_BIN, "doctor", "--no-servers"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "✗ mail backend: gmail" in result.stdout and "h0 auth gmail" in result.stdout


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.+?)\n```", text)[:2]


def test_the_readme_opens_with_the_two_commands_and_ci_runs_the_second():
    run, tests = readme_commands()
    assert run.startswith("python3 -m venv .venv && ") and run.endswith(".venv/bin/h0 watch")
    assert "pytest" in tests
    assert tests in (ROOT / ".ci/run").read_text().splitlines()


def test_the_mcp_json_starts_both_servers_from_the_projects_venv():
    import json

    servers = json.loads((ROOT / ".mcp.json").read_text())["mcpServers"]
    assert {name: (s["command"], s["args"]) for name, s in servers.items()} == {
        "h0-vault": (".venv/bin/h0", ["mcp", "vault"]),
        "h0-gmail": (".venv/bin/h0", ["mcp", "gmail"]),
    }


def test_all_good_is_the_last_line_and_no_servers_banner_follows_it(vault_dir: Path):
    """The servers doctor starts to ask for their health would each say on stderr what they do with mail
    (the outbox's "NOTHING IS REALLY SENT" banner): doctor says that once, in its own line, and its verdict
    is the last thing printed — on one terminal, stdout and stderr together."""
    subprocess.run([H0_BIN, "init", str(vault_dir)], check=True, capture_output=True)
    (vault_dir / ".obsidian").mkdir()
    result = subprocess.run(
        [H0_BIN, "doctor"],
        env=subprocess_env(VAULT_PATH=str(vault_dir)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "All good."
    assert "NOTHING IS REALLY SENT" not in result.stdout and "!!" not in result.stdout
    assert "! mail backend: outbox — a dry run" in result.stdout
