"""Linux: the systemd user unit `h0.service` that runs `h0 watch` at login, and its settings file.

systemd reads a unit line by line and expands `%` specifiers in every value; in ExecStart= it
also splits words on quotes with C escapes and expands `$VAR` in arguments. Each value is
written for exactly the rule that applies to it, and what no escape can carry is refused
(a line break anywhere; a quote or backslash in the program path, which systemd rejects).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from h0.errors import InvalidRequest
from h0.platform.service_spec import CommandResult, CompanionFile, Runner, ServiceSpec, Step, checked

UNIT_NAME = "h0.service"
RESTART_SEC = 10
START_LIMIT_BURST = 5
START_LIMIT_INTERVAL_SEC = 300
SYSTEMCTL = ("systemctl", "--user")
SESSION_HINT = "`systemctl --user` needs your own login session: a desktop terminal or an ssh login, not sudo or su"


def exec_program(path: str) -> str:
    """The program path of ExecStart=: quoted for spaces, `%` doubled; `$` is literal there."""
    checked(path, "the program path")
    if any(ch in path for ch in "\"'\\"):
        raise InvalidRequest(
            f"systemd refuses quotes and backslashes in a program path, and {path!r} has one: "
            "install H0 in a folder without them."
        )
    return '"' + path.replace("%", "%%") + '"'


def exec_argument(value: str) -> str:
    """One ExecStart= argument: double-quoted with C escapes, `%%` for `%`, `$$` for `$`."""
    checked(value, "the argument")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def path_setting(path: Path | str, what: str) -> str:
    """A path setting (WorkingDirectory=, EnvironmentFile=), taken verbatim but for `%`. The unit
    parser strips whitespace around a value and joins a line ending in a backslash to the next."""
    text = checked(str(path), what)
    if text != text.strip() or text.endswith("\\"):
        raise InvalidRequest(
            f"{what} {text!r} starts or ends with a space or a backslash, which a systemd unit "
            "cannot carry; rename it (or run `h0 service install` from another folder)."
        )
    return text.replace("%", "%%")


def env_file_value(value: str) -> str:
    """A value in an EnvironmentFile=: double-quoted, with `\\ " $ `` escaped."""
    checked(value, "the setting")
    for ch in '\\"$`':
        value = value.replace(ch, "\\" + ch)
    return f'"{value}"'


def render_unit(spec: ServiceSpec, env_file: Path) -> str:
    """The unit file text for `spec`; InvalidRequest for a path no escape can carry."""
    exec_start = " ".join([exec_program(spec.program[0]), *map(exec_argument, spec.argv[1:])])
    return f"""\
# Written by `h0 service install`; `h0 service uninstall` removes it.
[Unit]
Description=H0, your AI employee in an Obsidian vault (h0 watch)
# A crash loop stops after {START_LIMIT_BURST} starts in {START_LIMIT_INTERVAL_SEC} s (`h0 service status`: failed).
StartLimitIntervalSec={START_LIMIT_INTERVAL_SEC}
StartLimitBurst={START_LIMIT_BURST}

[Service]
Type=simple
ExecStart={exec_start}
WorkingDirectory={path_setting(spec.working_dir, "the working folder")}
EnvironmentFile=-{path_setting(env_file, "the settings file")}
Environment=PYTHONUNBUFFERED=1
Restart=on-failure
RestartSec={RESTART_SEC}
# 2: a usage error; 3: another h0 watch holds the vault. Restarting changes neither.
RestartPreventExitStatus=2 3

[Install]
WantedBy=default.target
"""


def render_env_file(environment: Mapping[str, str]) -> str:
    lines = [
        "# H0's settings for `h0 watch` run by systemd (written by `h0 service install`; readable by you only).",
        '# Secrets are never copied here for you: add them yourself, e.g. SMTP_PASS="..." or LLM_API_KEY="...",',
        "# then `systemctl --user restart h0.service`. These win over .env files, as your shell's variables do.",
    ]
    lines += [f"{name}={env_file_value(value)}" for name, value in environment.items()]
    return "\n".join(lines) + "\n"


class SystemdUserService:
    """`h0.service` in the user's systemd instance (`systemctl --user`): no root needed."""

    kind = "systemd user unit"
    name = UNIT_NAME

    def __init__(self, home: Path, environ: Mapping[str, str]) -> None:
        configured = environ.get("XDG_CONFIG_HOME", "")
        config = Path(configured) if os.path.isabs(configured) else home / ".config"  # XDG: relative is ignored
        self.definition_path = config / "systemd" / "user" / UNIT_NAME
        self.env_file = config / "h0" / "h0.env"

    def render(self, spec: ServiceSpec) -> bytes:
        return render_unit(spec, self.env_file).encode("utf-8")

    def companions(self, spec: ServiceSpec) -> list[CompanionFile]:
        names = ", ".join(spec.environment)
        return [
            CompanionFile(self.env_file, render_env_file(spec.environment), 0o600, f"readable by you only: {names}")
        ]

    def activate(self, *, replacing: bool) -> list[Step]:
        steps = [
            Step((*SYSTEMCTL, "daemon-reload"), hint=SESSION_HINT),
            Step((*SYSTEMCTL, "enable", "--now", UNIT_NAME), hint=SESSION_HINT),
        ]
        if replacing:  # a running service keeps its old command line until restarted
            steps.append(Step((*SYSTEMCTL, "restart", UNIT_NAME), hint=SESSION_HINT))
        return steps

    def deactivate(self) -> list[Step]:
        return [Step((*SYSTEMCTL, "disable", "--now", UNIT_NAME), may_fail=True)]

    def after_removal(self) -> list[Step]:
        return [
            Step((*SYSTEMCTL, "daemon-reload"), may_fail=True),
            Step((*SYSTEMCTL, "reset-failed", UNIT_NAME), may_fail=True),
        ]

    def purge_paths(self) -> list[Path]:
        return [self.env_file]

    def status(self, runner: Runner) -> tuple[bool, list[str]]:
        state: CommandResult = runner((*SYSTEMCTL, "is-active", UNIT_NAME))
        active = state.stdout.strip() or state.reason()
        details = runner((*SYSTEMCTL, "status", UNIT_NAME, "--no-pager", "--lines=5"))
        lines = [f"{UNIT_NAME}: {active} ({self.definition_path})"]
        lines += [line.rstrip() for line in (details.stdout or details.stderr).splitlines()]
        if active != "active":
            lines.append("`h0 service logs` shows why; `systemctl --user restart h0.service` starts it again.")
        return active == "active", lines

    def logs(self, follow: bool) -> Step:
        return Step(("journalctl", "--user", "-u", UNIT_NAME, "-n", "100", "--no-pager", *(["-f"] if follow else [])))

    def notes(self, spec: ServiceSpec, secrets: list[str]) -> list[str]:
        lines = [
            f"The service reads its settings from {self.env_file}, and .env files from {spec.working_dir} "
            + "as `h0 watch` run there does."
        ]
        lines += [
            f'{name} is set in your shell but was not copied: add {name}="..." to {self.env_file} yourself, '
            "then `systemctl --user restart h0.service`."
            for name in secrets
        ]
        lines.append(
            "It stops when you log out: `loginctl enable-linger $USER` keeps it running without a login "
            "session (and starts it at boot)."
        )
        return lines
