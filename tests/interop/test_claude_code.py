"""The project's `.mcp.json` as Claude Code sees it: `claude mcp list` shows every server Connected.

Claude Code runs in a copy of the project as a user who followed the README has it
(`.mcp.json` at the root, the virtualenv in `.venv/` there, *not* activated: its bin/ is
not on PATH), with a temporary HOME so the developer's own Claude configuration is never
read or touched. Project-scoped servers must be approved before Claude Code starts them:
the temporary `~/.claude.json` marks the folder trusted and lists the servers in
`enabledMcpjsonServers` (what answering the approval prompt records), and the project's
`.claude/settings.local.json` says the same. No API key is needed for `claude mcp list`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from h0.vault import init_vault
from tests.conftest import ROOT, subprocess_env

pytestmark = pytest.mark.interop

# H0_INTEROP_MCP_JSON checks another candidate file in the project's place (to try a change first).
MCP_JSON = Path(os.environ.get("H0_INTEROP_MCP_JSON") or ROOT / ".mcp.json")
SERVERS: dict[str, dict] = json.loads(MCP_JSON.read_text())["mcpServers"] if MCP_JSON.is_file() else {}
# The module each `h0 mcp <name>` command serves; a server whose module is not written yet is skipped.
MODULES = {"vault": "h0.mcp.vault_server", "gmail": "h0.mcp.mail_server"}


def user_path() -> str:
    """PATH as a user who did not activate the venv has it: no folder that holds an `h0` command."""
    venv_bin = str(Path(sys.prefix) / "bin")
    keep = [
        folder
        for folder in os.environ.get("PATH", "").split(os.pathsep)
        if folder and folder != venv_bin and not (Path(folder) / "h0").exists()
    ]
    return os.pathsep.join(keep)


def server_module(config: dict) -> str | None:
    args = config.get("args", [])
    if "mcp" in args and args.index("mcp") + 1 < len(args):
        return MODULES.get(args[args.index("mcp") + 1])
    return None


@pytest.fixture(scope="module")
def claude_mcp_list(claude_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Run `claude mcp list` once in a copy of the project; return what it printed."""
    base = tmp_path_factory.mktemp("claude")
    project, home, vault = base / "project", base / "home", base / "vault"
    project.mkdir()
    home.mkdir()
    vault.mkdir()
    init_vault(vault)
    shutil.copy(MCP_JSON, project / ".mcp.json")
    (project / ".venv").symlink_to(sys.prefix, target_is_directory=True)  # the README's .venv/
    approved = {"enabledMcpjsonServers": sorted(SERVERS), "enableAllProjectMcpServers": True}
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(json.dumps(approved, indent=2))
    key = str(project.resolve())
    (home / ".claude.json").write_text(
        json.dumps({"projects": {key: {"hasTrustDialogAccepted": True, **approved}}}, indent=2)
    )
    env = subprocess_env(
        HOME=str(home),
        PATH=user_path(),
        TERM="dumb",
        VAULT_PATH=str(vault),  # servers work on a scratch vault, not the bundled one
        MAIL_BACKEND="outbox",
        LOG_LEVEL="WARNING",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    proc = subprocess.run(
        [str(claude_bin), "mcp", "list"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    output = proc.stdout + proc.stderr
    print(f"[interop] claude mcp list ({MCP_JSON}):\n{output}")
    assert proc.returncode == 0, f"claude mcp list exited {proc.returncode}:\n{output}"
    return output


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_claude_mcp_list_shows_server_connected(name: str, claude_mcp_list: str) -> None:
    module = server_module(SERVERS[name])
    if module is not None and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not written yet")
    line = next((ln for ln in claude_mcp_list.splitlines() if ln.startswith(f"{name}:")), None)
    assert line is not None, f"{name} missing from `claude mcp list`:\n{claude_mcp_list}"
    assert re.search(r"✔ Connected\s*$", line), (
        f"Claude Code cannot start {name} from .mcp.json: {line!r}\n"
        f"(a command that is not on PATH fails: the README's user has no activated venv; "
        f"use the project-relative '.venv/bin/h0')\n{claude_mcp_list}"
    )


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_mcp_json_command_resolves_without_an_activated_venv(name: str) -> None:
    """Cheap twin of the test above: the command is project-relative (or on a plain PATH)."""
    command = SERVERS[name]["command"]
    relative = not os.path.isabs(command) and "/" in command
    # In this checkout the README's `.venv/` is whatever virtualenv runs the tests.
    local = Path(sys.prefix) / command.removeprefix(".venv/") if command.startswith(".venv/") else ROOT / command
    assert (relative and local.exists()) or shutil.which(command, path=user_path()), (
        f".mcp.json runs {command!r} for {name}, which a user who followed the README cannot run "
        f"(their .venv/bin is not on PATH); use '.venv/bin/h0'"
    )


def test_mcp_json_lists_the_vault_server() -> None:
    assert "h0-vault" in SERVERS
    assert SERVERS["h0-vault"]["args"] == ["mcp", "vault"]


@pytest.fixture(scope="module")
def claude_user_servers(claude_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """docs/mcp.md's registration for one's own vault, done with Claude Code itself: `claude mcp add
    --scope user --env VAULT_PATH=…` for both servers (and one registered without VAULT_PATH), then
    `claude mcp list` in a folder that is not H0's checkout."""
    base = tmp_path_factory.mktemp("claude-user")
    home, elsewhere, vault = base / "home", base / "another-project", base / "MyVault"
    for folder in (home, elsewhere, vault):
        folder.mkdir()
    init_vault(vault)
    env = subprocess_env(
        HOME=str(home),
        PATH=user_path(),
        TERM="dumb",
        LOG_LEVEL="WARNING",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    h0 = str(Path(sys.prefix) / "bin" / "h0")
    commands = [
        ["h0-vault", "--scope", "user", "--env", f"VAULT_PATH={vault}", "--", h0, "mcp", "vault"],
        ["h0-gmail", "--scope", "user", "--env", f"VAULT_PATH={vault}", "--", h0, "mcp", "gmail"],
        ["h0-unset", "--scope", "user", "--", h0, "mcp", "vault"],
    ]
    for args in commands:
        added = subprocess.run(
            [str(claude_bin), "mcp", "add", *args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=90
        )
        assert added.returncode == 0, added.stdout + added.stderr
    proc = subprocess.run(
        [str(claude_bin), "mcp", "list"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    output = proc.stdout + proc.stderr
    print(f"[interop] claude mcp list (user scope, outside the checkout):\n{output}")
    return output


def test_servers_registered_with_vault_path_connect_from_any_folder_and_one_without_it_does_not(
    claude_user_servers: str,
) -> None:
    lines = {ln.split(":", 1)[0]: ln for ln in claude_user_servers.splitlines() if ln.startswith("h0-")}
    assert re.search(r"✔ Connected\s*$", lines["h0-vault"]), claude_user_servers
    assert re.search(r"✔ Connected\s*$", lines["h0-gmail"]), claude_user_servers
    assert "Connected" not in lines["h0-unset"], claude_user_servers  # refused: VAULT_PATH is not set
