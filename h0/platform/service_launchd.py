"""macOS: the launchd agent `dev.h0.watch` (~/Library/LaunchAgents) that runs `h0 watch` at login.

The property list is written by plistlib (XML escaping is its job); launchd is driven with
`launchctl bootstrap`/`bootout` in the user's GUI domain, falling back to `load -w`/`unload -w`
on systems that predate them. Output goes to ~/Library/Logs/h0/watch.log.
"""

from __future__ import annotations

import os
import plistlib
import re
import sys
from pathlib import Path

from h0.errors import NotFound
from h0.platform.service_spec import CompanionFile, Runner, ServiceSpec, Step, checked

LABEL = "dev.h0.watch"
THROTTLE_INTERVAL = 30  # seconds launchd waits before starting a crashed h0 watch again
# Folders macOS guards with privacy consent (TCC): a background agent needs the user's grant.
PROTECTED = ("Desktop", "Documents", "Downloads", "Library/Mobile Documents", "Library/CloudStorage")


def render_plist(spec: ServiceSpec, log_file: Path) -> bytes:
    """The agent's property list for `spec` (InvalidRequest for a path that cannot be carried)."""
    for value in (*spec.argv, str(spec.working_dir), str(log_file), *spec.environment.values()):
        checked(value, "the path" if value.startswith("/") else "the value")
    agent = {
        "Label": LABEL,
        "ProgramArguments": list(spec.argv),
        "WorkingDirectory": str(spec.working_dir),
        "EnvironmentVariables": {"PYTHONUNBUFFERED": "1", **spec.environment},
        "RunAtLoad": True,
        # Restart after a crash or a failure; a clean exit (SIGTERM, `h0 service uninstall`) stays stopped.
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": THROTTLE_INTERVAL,
        "StandardOutPath": str(log_file),
        "StandardErrorPath": str(log_file),
    }
    return plistlib.dumps(agent, fmt=plistlib.FMT_XML, sort_keys=True)


def privacy_note(paths: list[Path], home: Path, python: str) -> str | None:
    """What to grant when the vault (or the working folder) sits in a folder macOS guards."""
    for path in paths:
        for candidate in {path, Path(os.path.realpath(path))}:
            for folder in PROTECTED:
                guarded = home / folder
                if candidate == guarded or guarded in candidate.parents:
                    return (
                        f"macOS guards ~/{folder}, so the agent may be refused {path} "
                        '("Operation not permitted" in `h0 service logs`): grant access in System Settings → '
                        f"Privacy & Security → Full Disk Access (or Files and Folders) to {python}, the Python "
                        "that runs h0."
                    )
    return None


class LaunchAgent:
    """`dev.h0.watch` in the user's GUI launchd domain (`gui/<uid>`): no admin rights needed."""

    kind = "launchd agent"
    name = LABEL

    def __init__(self, home: Path, uid: int | None = None) -> None:
        self.home = home
        self.definition_path = home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
        self.log_dir = home / "Library" / "Logs" / "h0"
        self.log_file = self.log_dir / "watch.log"
        uid = uid if uid is not None else getattr(os, "getuid", lambda: 0)()
        self.domain = f"gui/{uid}"
        self.target = f"{self.domain}/{LABEL}"

    def render(self, spec: ServiceSpec) -> bytes:
        return render_plist(spec, self.log_file)

    def companions(self, spec: ServiceSpec) -> list[CompanionFile]:
        return [CompanionFile(self.log_dir, None, 0o700, "the agent's log")]

    def activate(self, *, replacing: bool) -> list[Step]:
        plist = str(self.definition_path)
        steps = [Step(("launchctl", "bootout", self.target), may_fail=True)] if replacing else []
        return steps + [
            # A job disabled by an earlier `unload -w` would refuse to bootstrap.
            Step(("launchctl", "enable", self.target), may_fail=True),
            Step(
                ("launchctl", "bootstrap", self.domain, plist),
                fallback=("launchctl", "load", "-w", plist),
                hint="run it as yourself in your desktop session, not with sudo",
            ),
        ]

    def deactivate(self) -> list[Step]:
        plist = str(self.definition_path)
        return [
            Step(("launchctl", "bootout", self.target), fallback=("launchctl", "unload", "-w", plist), may_fail=True)
        ]

    def after_removal(self) -> list[Step]:
        return []

    def purge_paths(self) -> list[Path]:
        return [self.log_dir]

    def status(self, runner: Runner) -> tuple[bool, list[str]]:
        printed = runner(("launchctl", "print", self.target))
        if printed.ok:
            state = _field(printed.stdout, r"^\s*state = (.+)$") or "unknown"
            pid = _field(printed.stdout, r"^\s*pid = (\d+)$")
            last_exit = _field(printed.stdout, r"^\s*last exit code = (.+)$")
        else:  # launchctl before macOS 10.10 has no `print`
            listed = runner(("launchctl", "list", LABEL))
            if not listed.ok:
                return False, [
                    f"{LABEL}: not loaded ({self.definition_path}); " + "`h0 service install --force` loads it again."
                ]
            pid = _field(listed.stdout, r'"PID" = (\d+);')
            last_exit = _field(listed.stdout, r'"LastExitStatus" = (\d+);')
            state = "running" if pid else "not running"
        running = state == "running"
        line = f"{LABEL}: {state}" + (f" (pid {pid})" if pid and running else "")
        if not running and last_exit:
            line += f", last exit code {last_exit}"
        lines = [f"{line} ({self.definition_path})", f"Log: {self.log_file}"]
        if not running:
            lines.append(f"`h0 service logs` shows why; `launchctl kickstart -k {self.target}` starts it again.")
        return running, lines

    def logs(self, follow: bool) -> Step:
        if not self.log_file.exists():
            raise NotFound(f"no log yet at {self.log_file}: `h0 service status` says whether the agent is installed.")
        return Step(("tail", "-n", "100", *(["-F"] if follow else []), str(self.log_file)))

    def notes(self, spec: ServiceSpec, secrets: list[str]) -> list[str]:
        dotenv = spec.working_dir / ".env"
        lines = [
            f"{name} is set in your shell but was not copied: launchd agents do not see your shell, so add "
            f'{name}="..." to {dotenv} (H0 reads it from its working folder), then '
            f"`launchctl kickstart -k {self.target}`."
            for name in secrets
        ]
        note = privacy_note([spec.vault, spec.working_dir], self.home, os.path.realpath(sys.executable))
        return lines + ([note] if note else [])


def _field(text: str, pattern: str) -> str | None:
    found = re.search(pattern, text, re.MULTILINE)
    return found.group(1).strip() if found else None
