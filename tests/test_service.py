"""`h0 service install|uninstall|status|logs`: `h0 watch` at login, for Linux and macOS.

The unit and the plist are rendered for hostile paths and parsed back (systemd's quoting rules
re-implemented here, plus `systemd-analyze verify` when the machine has it; plistlib for the
plist). The install round trips run in a temporary HOME with a runner that records the
systemctl / launchctl calls instead of running them: nothing touches the real user session.
The platform is a parameter, never the machine the tests run on.
"""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from h0.cli import main
from h0.errors import InvalidRequest
from h0.platform import service
from h0.platform.service_launchd import LABEL, LaunchAgent, render_plist
from h0.platform.service_spec import CommandResult, ServiceSpec
from h0.platform.service_systemd import UNIT_NAME, render_env_file, render_unit
from tests.conftest import H0_BIN

UID = os.getuid() if hasattr(os, "getuid") else 0

# Folder names a vault really gets: spaces, systemd specifiers and variables, quotes, backslashes
# (legal in a Linux file name), shell metacharacters, Unicode.
HOSTILE = [
    "My Vault",
    "100% sure %n %%",
    "$HOME ${USER} $$ cost",
    'it\'s "quoted"',
    "back\\slash \\n not a line break",
    "Ünïcødé ✉ 日本語",
    "semi;colon & pipe | star* `tick`",
]


class FakeRunner:
    """Records each command; answers from `responses` (first matching argv prefix), else success."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[str, ...], bool]] = []
        self.responses: list[tuple[tuple[str, ...], CommandResult]] = []

    def answer(self, prefix: Sequence[str], result: CommandResult) -> None:
        self.responses.insert(0, (tuple(prefix), result))

    def __call__(self, argv: Sequence[str], *, capture: bool = True) -> CommandResult:
        argv = tuple(argv)
        self.calls.append((argv, capture))
        for prefix, result in self.responses:
            if argv[: len(prefix)] == prefix:
                return result
        return CommandResult(0)

    @property
    def commands(self) -> list[tuple[str, ...]]:
        return [argv for argv, _ in self.calls]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home ü"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return folder


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> FakeRunner:
    fake = FakeRunner()
    monkeypatch.setattr(service, "run_command", fake)
    return fake


def definition(platform: str, home: Path) -> Path:
    if platform == "linux":
        return home / ".config" / "systemd" / "user" / UNIT_NAME
    return home / "Library" / "LaunchAgents" / f"{LABEL}.plist"


def h0(*argv: str) -> int:
    return main(["service", *argv])


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            info = path.lstat()
            found[str(path.relative_to(root))] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


# --- systemd's rules, re-implemented to read a unit back ------------------------------------


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """Sections → key → values, as systemd's line parser sees them (no continuation lines)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for raw in text.splitlines():
        assert not raw.endswith("\\"), f"a line systemd would join to the next: {raw!r}"
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, equals, value = line.partition("=")
        assert equals, raw
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def unspecify(value: str) -> str:
    """Undo `%` specifier escaping; any other specifier would be expanded by systemd."""
    assert re.fullmatch(r"(?:[^%]|%%)*", value), f"an unescaped specifier in {value!r}"
    return value.replace("%%", "%")


def exec_words(value: str) -> list[str]:
    """ExecStart= split as systemd does (quotes, C escapes), then `$$` → `$` in the arguments."""
    words: list[str] = []
    i, text = 0, unspecify(value)
    while i < len(text):
        while i < len(text) and text[i] in " \t":
            i += 1
        if i == len(text):
            break
        word, quote = "", None
        while i < len(text) and (quote or text[i] not in " \t"):
            ch = text[i]
            if ch == "\\":
                i += 1
                assert text[i] in "\\\"'", f"an escape this test does not expect: \\{text[i]}"
                word += text[i]
            elif quote and ch == quote:
                quote = None
            elif not quote and ch in "\"'":
                quote = ch
            else:
                word += ch
            i += 1
        assert quote is None, f"unterminated quote in {value!r}"
        words.append(word)
    for index, word in enumerate(words[1:], 1):
        assert re.fullmatch(r"(?:[^$]|\$\$)*", word), f"a variable systemd would expand in {word!r}"
        words[index] = word.replace("$$", "$")
    return words


def env_file_values(text: str) -> dict[str, str]:
    """An EnvironmentFile= read back: double-quoted values, backslash escapes `\\ " $ ``."""
    values = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, quoted = line.partition("=")
        assert quoted.startswith('"') and quoted.endswith('"'), line
        values[name] = re.sub(r'\\([\\"$`])', r"\1", quoted[1:-1])
    return values


def hostile_spec(tmp_path: Path, name: str) -> ServiceSpec:
    """A spec whose vault and working folder are named `name`, and whose program lives in a folder
    as hostile as systemd allows for a program path (no quotes or backslashes)."""
    bin_dir = tmp_path / "bin dir %n $HOME ü;x"
    bin_dir.mkdir(exist_ok=True)
    program = bin_dir / "h0"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    vault = tmp_path / "vaults" / name
    vault.mkdir(parents=True)
    return ServiceSpec(
        program=(str(program),),
        vault=vault,
        working_dir=vault,
        environment={"VAULT_PATH": str(vault), "GMAIL_QUERY": 'is:unread $x `y` "z" \\w 100%'},
    )


@pytest.mark.parametrize("name", HOSTILE)
def test_the_unit_for_a_hostile_path_reads_back_as_the_same_command(tmp_path: Path, name: str):
    """Given a vault folder with spaces, %, $, quotes, backslashes or Unicode in its name,
    when the unit is rendered, then systemd's own rules give back exactly the command, folder and
    settings file — and `systemd-analyze verify` (when installed) accepts it."""
    spec = hostile_spec(tmp_path, name)
    env_file = tmp_path / "config %h" / "h0" / "h0.env"
    unit = parse_unit(render_unit(spec, env_file))

    service_section = unit["Service"]
    assert exec_words(service_section["ExecStart"][0]) == [spec.program[0], "watch", "--vault", str(spec.vault)]
    assert unspecify(service_section["WorkingDirectory"][0]) == str(spec.vault)
    assert unspecify(service_section["EnvironmentFile"][0]) == f"-{env_file}"
    assert service_section["Restart"] == ["on-failure"] and int(service_section["RestartSec"][0]) > 0
    assert int(unit["Unit"]["StartLimitBurst"][0]) > 0 and int(unit["Unit"]["StartLimitIntervalSec"][0]) > 0
    assert unit["Install"]["WantedBy"] == ["default.target"]
    assert env_file_values(render_env_file(spec.environment)) == dict(spec.environment)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed on this machine")
def test_systemd_analyze_verify_accepts_the_units_for_hostile_paths(tmp_path: Path):
    for index, name in enumerate(HOSTILE):
        spec = hostile_spec(tmp_path, name)
        unit = tmp_path / f"unit{index}" / UNIT_NAME
        unit.parent.mkdir()
        unit.write_text(render_unit(spec, tmp_path / "h0.env"), encoding="utf-8")
        result = subprocess.run(
            ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False
        )
        assert result.returncode == 0 and UNIT_NAME not in result.stderr, (name, result.stderr)


@pytest.mark.parametrize("name", HOSTILE)
def test_the_plist_for_a_hostile_path_reads_back_as_the_same_agent(tmp_path: Path, name: str):
    spec = hostile_spec(tmp_path, name)
    log = tmp_path / "Logs" / "h0" / "watch.log"
    agent = plistlib.loads(render_plist(spec, log))  # what `plutil -lint` checks: a well-formed plist
    assert agent["Label"] == LABEL
    assert agent["ProgramArguments"] == [spec.program[0], "watch", "--vault", str(spec.vault)]
    assert agent["WorkingDirectory"] == str(spec.vault)
    assert agent["EnvironmentVariables"] == {"PYTHONUNBUFFERED": "1", **spec.environment}
    assert agent["RunAtLoad"] is True and agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["StandardOutPath"] == agent["StandardErrorPath"] == str(log)


@pytest.mark.skipif(shutil.which("plutil") is None, reason="plutil exists on macOS only")
def test_plutil_lints_the_plist(tmp_path: Path):
    path = tmp_path / "agent.plist"
    path.write_bytes(render_plist(hostile_spec(tmp_path, HOSTILE[3]), tmp_path / "watch.log"))
    lint = subprocess.run(["plutil", "-lint", str(path)], capture_output=True, text=True)
    assert lint.returncode == 0 and "OK" in lint.stdout, lint.stdout + lint.stderr


@pytest.mark.parametrize("where", ["vault", "program", "working_dir"])
@pytest.mark.parametrize("render", ["unit", "plist"])
def test_a_line_break_in_a_path_is_refused(tmp_path: Path, where: str, render: str):
    spec = hostile_spec(tmp_path, "ok")
    bad = str(tmp_path / "two\nlines")
    spec = ServiceSpec(
        program=(bad,) if where == "program" else spec.program,
        vault=Path(bad) if where == "vault" else spec.vault,
        working_dir=Path(bad) if where == "working_dir" else spec.working_dir,
    )
    with pytest.raises(InvalidRequest, match="line break"):
        render_unit(spec, tmp_path / "h0.env") if render == "unit" else render_plist(spec, tmp_path / "w.log")


def test_what_systemd_cannot_carry_is_refused_and_launchd_takes_it(tmp_path: Path):
    spec = hostile_spec(tmp_path, "ok")
    quoted_program = ServiceSpec(program=(str(tmp_path / "it's" / "h0"),), vault=spec.vault, working_dir=spec.vault)
    with pytest.raises(InvalidRequest, match="quotes and backslashes in a program path"):
        render_unit(quoted_program, tmp_path / "h0.env")
    assert plistlib.loads(render_plist(quoted_program, tmp_path / "w.log"))["ProgramArguments"][0].endswith("it's/h0")
    trailing = ServiceSpec(program=spec.program, vault=spec.vault, working_dir=tmp_path / "ends with space ")
    with pytest.raises(InvalidRequest, match="starts or ends with a space"):
        render_unit(trailing, tmp_path / "h0.env")


def test_install_refuses_a_vault_path_with_a_line_break_in_one_line(home, runner, tmp_path, capsys):
    bad = tmp_path / "two\nlines"
    bad.mkdir()
    assert h0("install", "--platform", "linux", "--vault", str(bad)) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "line break" in err and "Traceback" not in err
    assert runner.calls == [] and not definition("linux", home).exists()


# --- install / uninstall through `h0.cli.main` ----------------------------------------------


@pytest.mark.parametrize("platform", ["linux", "macos"])
def test_install_status_logs_uninstall_round_trip(platform, home, runner, vault_dir, tmp_path, capsys):
    """Given a temporary HOME, when the service is installed, reinstalled, queried, its logs shown
    and uninstalled, then each step writes or removes the right files and runs the right commands."""
    path = definition(platform, home)
    assert h0("install", "--platform", platform, "--vault", str(vault_dir)) == 0
    out = capsys.readouterr().out
    argv = [H0_BIN, "watch", "--vault", str(vault_dir)]
    if platform == "linux":
        unit = parse_unit(path.read_text())["Service"]
        assert exec_words(unit["ExecStart"][0]) == argv and unspecify(unit["WorkingDirectory"][0]) == str(tmp_path)
        env_file = home / ".config" / "h0" / "h0.env"
        assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        assert env_file_values(env_file.read_text())["VAULT_PATH"] == str(vault_dir)
        assert runner.commands == [
            ("systemctl", "--user", "daemon-reload"),
            ("systemctl", "--user", "enable", "--now", UNIT_NAME),
        ]
        assert "loginctl enable-linger $USER" in out
    else:
        agent = plistlib.loads(path.read_bytes())
        assert agent["ProgramArguments"] == argv and agent["WorkingDirectory"] == str(tmp_path)
        assert agent["EnvironmentVariables"]["VAULT_PATH"] == str(vault_dir)
        assert (home / "Library" / "Logs" / "h0").is_dir()
        assert runner.commands == [
            ("launchctl", "enable", f"gui/{UID}/{LABEL}"),
            ("launchctl", "bootstrap", f"gui/{UID}", str(path)),
        ]
    assert f"Wrote {path}." in out
    installed = path.read_bytes()

    runner.calls.clear()
    assert h0("install", "--platform", platform, "--vault", str(vault_dir)) == 0
    assert "already installed with this content; nothing to do" in capsys.readouterr().out
    assert runner.calls == [] and path.read_bytes() == installed

    if platform == "linux":
        runner.answer(("systemctl", "--user", "is-active"), CommandResult(0, "active\n"))
        runner.answer(("systemctl", "--user", "status"), CommandResult(0, "● h0.service - H0\n   Active: active\n"))
    else:
        runner.answer(("launchctl", "print"), CommandResult(0, "\tstate = running\n\tpid = 4242\n"))
    assert h0("status", "--platform", platform) == 0
    out = capsys.readouterr().out
    assert ("h0.service: active" in out) if platform == "linux" else ("dev.h0.watch: running (pid 4242)" in out)

    if platform == "macos":
        (home / "Library" / "Logs" / "h0" / "watch.log").write_text("H0 watching\n")
    runner.calls.clear()
    assert h0("logs", "--platform", platform, "-f") == 0
    logs_argv, captured = runner.calls[-1]
    assert captured is False  # the output goes straight to the terminal
    if platform == "linux":
        assert logs_argv == ("journalctl", "--user", "-u", UNIT_NAME, "-n", "100", "--no-pager", "-f")
    else:
        assert logs_argv == ("tail", "-n", "100", "-F", str(home / "Library" / "Logs" / "h0" / "watch.log"))

    runner.calls.clear()
    assert h0("uninstall", "--platform", platform) == 0
    out = capsys.readouterr().out
    assert not path.exists() and f"Removed {path}" in out
    kept = home / ".config" / "h0" / "h0.env" if platform == "linux" else home / "Library" / "Logs" / "h0"
    assert kept.exists() and f"Kept {kept}" in out
    if platform == "linux":
        assert runner.commands == [
            ("systemctl", "--user", "disable", "--now", UNIT_NAME),
            ("systemctl", "--user", "daemon-reload"),
            ("systemctl", "--user", "reset-failed", UNIT_NAME),
        ]
    else:
        assert runner.commands == [("launchctl", "bootout", f"gui/{UID}/{LABEL}")]

    runner.calls.clear()
    assert h0("uninstall", "--platform", platform, "--purge") == 0
    assert not kept.exists() and runner.calls == []
    assert h0("uninstall", "--platform", platform) == 0
    assert "Nothing to uninstall" in capsys.readouterr().out
    assert h0("status", "--platform", platform) == 1
    assert "Not installed" in capsys.readouterr().out


@pytest.mark.parametrize("platform", ["linux", "macos"])
def test_a_dry_run_prints_the_file_and_commands_and_touches_nothing(
    platform, home, runner, vault_dir, tmp_path, capsys
):
    before = snapshot(tmp_path)
    assert h0("install", "--platform", platform, "--vault", str(vault_dir), "--dry-run") == 0
    out = capsys.readouterr().out
    assert snapshot(tmp_path) == before and runner.calls == []
    assert f"# would write {definition(platform, home)}:" in out and str(vault_dir) in out
    assert (
        ("systemctl --user enable --now h0.service" in out)
        if platform == "linux"
        else (f"launchctl bootstrap gui/{UID}" in out and "launchctl load -w" in out)
    )

    assert h0("install", "--platform", platform, "--vault", str(vault_dir)) == 0
    capsys.readouterr()
    runner.calls.clear()
    before = snapshot(tmp_path)
    assert h0("uninstall", "--platform", platform, "--purge", "--dry-run") == 0
    out = capsys.readouterr().out
    assert snapshot(tmp_path) == before and runner.calls == []
    assert f"# would remove {definition(platform, home)}" in out
    assert (
        ("systemctl --user disable --now h0.service" in out)
        if platform == "linux"
        else (f"launchctl bootout gui/{UID}/{LABEL}" in out)
    )


@pytest.mark.parametrize("platform", ["linux", "macos"])
def test_different_content_is_refused_without_force_and_replaced_with_it(platform, home, runner, vault_dir, capsys):
    path = definition(platform, home)
    path.parent.mkdir(parents=True)
    path.write_text("someone else's service\n")
    assert h0("install", "--platform", platform, "--vault", str(vault_dir)) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "different content" in err and "--force" in err
    assert path.read_text() == "someone else's service\n" and runner.calls == []

    assert h0("install", "--platform", platform, "--vault", str(vault_dir), "--force") == 0
    assert "replacing the old one" in capsys.readouterr().out
    assert path.read_text() != "someone else's service\n"
    if platform == "linux":
        assert runner.commands[-1] == ("systemctl", "--user", "restart", UNIT_NAME)
    else:
        assert runner.commands[0] == ("launchctl", "bootout", f"gui/{UID}/{LABEL}")


@pytest.mark.parametrize("action", ["install", "uninstall", "status", "logs"])
def test_windows_gets_one_line_saying_what_to_do_instead(action, home, runner, vault_dir, capsys):
    extra = ["--vault", str(vault_dir)] if action == "install" else []
    assert h0(action, "--platform", "windows", *extra) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert ("schtasks" in captured.err) if action != "logs" else ("h0 watch" in captured.err)
    if action == "install":
        assert "/SC ONLOGON" in captured.err and str(vault_dir) in captured.err
    assert runner.calls == []


def test_install_refuses_a_missing_vault_and_a_missing_h0_command(
    home, runner, vault_dir, tmp_path, monkeypatch, capsys
):
    assert h0("install", "--platform", "linux", "--vault", str(tmp_path / "nowhere")) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "does not exist" in err

    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-venv" / "bin" / "python"))
    assert h0("install", "--platform", "macos", "--vault", str(vault_dir)) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no installed `h0` command" in err
    assert runner.calls == [] and not any(home.iterdir())


@pytest.mark.parametrize("platform", ["linux", "macos"])
def test_settings_from_the_shell_are_carried_and_secrets_are_not(
    platform, home, runner, vault_dir, monkeypatch, capsys
):
    monkeypatch.setenv("MAIL_BACKEND", "smtp")
    monkeypatch.setenv("SMTP_HOST", "mail.example.com")
    monkeypatch.setenv("SMTP_PASS", "hunter2-secret")
    assert h0("install", "--platform", platform, "--vault", str(vault_dir)) == 0
    out = capsys.readouterr().out
    if platform == "linux":
        env_file = home / ".config" / "h0" / "h0.env"
        values = env_file_values(env_file.read_text())
        assert "SMTP_PASS is set in your shell but was not copied" in out and str(env_file) in out
    else:
        values = plistlib.loads(definition(platform, home).read_bytes())["EnvironmentVariables"]
        assert "SMTP_PASS is set in your shell but was not copied" in out and ".env" in out
    assert values["MAIL_BACKEND"] == "smtp" and values["SMTP_HOST"] == "mail.example.com"
    assert "SMTP_PASS" not in values
    assert not any("hunter2-secret" in p.read_text(errors="replace") for p in home.rglob("*") if p.is_file())


def test_xdg_config_home_is_where_the_unit_and_settings_go(home, runner, vault_dir, tmp_path, monkeypatch):
    config = tmp_path / "xdg config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    assert h0("install", "--platform", "linux", "--vault", str(vault_dir)) == 0
    assert (config / "systemd" / "user" / UNIT_NAME).is_file() and (config / "h0" / "h0.env").is_file()
    assert not (home / ".config").exists()


def test_a_failed_enable_says_why_in_one_line_and_leaves_nothing_installed(home, runner, vault_dir, capsys):
    no_bus = CommandResult(1, stderr="Failed to connect to bus: No medium found")
    runner.answer(("systemctl", "--user", "enable"), no_bus)
    assert h0("install", "--platform", "linux", "--vault", str(vault_dir)) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "`systemctl --user enable --now h0.service` failed: Failed to connect to bus" in err
    assert "Nothing is installed" in err and "login session" in err
    assert not definition("linux", home).exists() and not (home / ".config" / "h0" / "h0.env").exists()
    runner.responses.clear()
    assert h0("install", "--platform", "linux", "--vault", str(vault_dir)) == 0


def test_launchctl_without_bootstrap_falls_back_to_load(home, runner, vault_dir, capsys):
    runner.answer(("launchctl", "bootstrap"), CommandResult(1, stderr="Unrecognized subcommand: bootstrap"))
    assert h0("install", "--platform", "macos", "--vault", str(vault_dir)) == 0
    assert runner.commands[-1] == ("launchctl", "load", "-w", str(definition("macos", home)))


def test_a_vault_in_documents_gets_the_full_disk_access_note(home, runner, capsys):
    vault = home / "Documents" / "My Vault"
    vault.mkdir(parents=True)
    assert h0("install", "--platform", "macos", "--vault", str(vault)) == 0
    out = capsys.readouterr().out
    assert "macOS guards ~/Documents" in out and "Full Disk Access" in out
    elsewhere = LaunchAgent(home).notes(ServiceSpec(program=(H0_BIN,), vault=home / "vault", working_dir=home), [])
    assert not any("Full Disk Access" in line for line in elsewhere)


def test_status_says_when_the_service_is_not_running(home, runner, vault_dir, capsys):
    assert h0("install", "--platform", "linux", "--vault", str(vault_dir)) == 0
    capsys.readouterr()
    runner.answer(("systemctl", "--user", "is-active"), CommandResult(3, "failed\n"))
    assert h0("status", "--platform", "linux") == 1
    out = capsys.readouterr().out
    assert "h0.service: failed" in out and "h0 service logs" in out


def test_logs_before_the_agent_wrote_any_say_so(home, runner, capsys):
    assert h0("logs", "--platform", "macos") == 1
    assert "no log yet" in capsys.readouterr().err and runner.calls == []
