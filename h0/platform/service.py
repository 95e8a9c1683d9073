"""`h0 service`: run `h0 watch` at login — one plan for every OS, one backend module per OS.

A backend (`service_systemd` on Linux, `service_launchd` on macOS) renders its definition file
from a `ServiceSpec` and says which commands activate it, stop it, report on it and show its
logs. This module checks the inputs, compares with what is installed, writes the files and runs
those commands through a runner that never uses a shell (tests pass their own). The
vocabulary (spec, step, runner, backend) is in service_spec.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from h0.config import BUNDLED_VAULT
from h0.errors import Conflict, H0Error, InvalidRequest, NotFound, NotSupported
from h0.platform import LINUX, MACOS, WINDOWS, current_platform
from h0.platform.service_spec import (
    Backend,
    CompanionFile,
    Runner,
    ServiceCommandFailed,
    ServiceSpec,
    Step,
    checked,
    find_entry_point,
    run_command,
    settings_from_environment,
)


@dataclass
class Report:
    """What a command did, as lines for a person; `ok` False makes the command exit 1."""

    lines: list[str]
    ok: bool = True


def backend_for(
    platform: str | None,
    action: str,
    *,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    vault: Path | None = None,
) -> Backend:
    """The backend of `platform` (LINUX or MACOS; None: this machine's), with its files under `home`; on any
    other OS, NotSupported saying what to do instead of `action`."""
    platform = platform or current_platform()
    home = Path(home) if home is not None else Path.home()
    environ = os.environ if environ is None else environ
    if platform == LINUX:
        from h0.platform.service_systemd import SystemdUserService

        return SystemdUserService(home, environ)
    if platform == MACOS:
        from h0.platform.service_launchd import LaunchAgent

        return LaunchAgent(home)
    raise unsupported(platform, action, vault)


def unsupported(platform: str, action: str, vault: Path | None = None) -> NotSupported:
    """One line saying what to do instead on an OS without a backend (Windows: Task Scheduler)."""
    if platform != WINDOWS:
        return NotSupported(f"no login service for {platform}; start `h0 watch` with your system's own autostart.")
    if action == "uninstall":
        return NotSupported(
            "H0 installs no Windows service; remove your Task Scheduler task: schtasks /Delete /TN H0 /F"
        )
    if action == "status":
        return NotSupported("H0 installs no Windows service; see your Task Scheduler task: schtasks /Query /TN H0")
    if action == "logs":
        return NotSupported(
            "H0 installs no Windows service; run `h0 watch` in a terminal to see its output "
            "(what it sent is in the vault's Logs/ folder)."
        )
    try:
        program = find_entry_point()
    except H0Error:
        program = ("h0",)
    command = subprocess.list2cmdline([*program, "watch", "--vault", str(vault or "C:\\path\\to\\vault")])
    quoted = command.replace('"', '\\"')
    return NotSupported(
        "not available on Windows yet; start H0 at login with Task Scheduler instead (from an administrator "
        f'prompt): schtasks /Create /SC ONLOGON /TN H0 /TR "{quoted}"'
    )


def install(
    vault: Path,
    *,
    platform: str | None = None,
    force: bool = False,
    dry_run: bool = False,
    runner: Runner | None = None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    executable: str | None = None,
    working_dir: Path | None = None,
) -> Report:
    """Install and start the login service for `vault`; a no-op when the same one is installed.

    The service runs in `working_dir` (default: the current folder), so `./.env` and relative
    paths such as `token.json` resolve as when you run `h0 watch` there yourself."""
    environ = os.environ if environ is None else environ
    vault = Path(os.path.abspath(Path(vault).expanduser()))
    backend = backend_for(platform, "install", home=home, environ=environ, vault=vault)
    if not vault.is_dir():
        raise NotFound(
            f"the vault folder {vault} does not exist: pass --vault (or set VAULT_PATH) to your "
            "Obsidian vault, and run `h0 init` there first."
        )
    copied, secrets = settings_from_environment(environ)
    spec = ServiceSpec(
        program=find_entry_point(executable),
        vault=vault,
        working_dir=Path(os.path.abspath(working_dir or os.getcwd())),
        environment={"VAULT_PATH": checked(str(vault), "the vault path"), **copied},
    )
    content = backend.render(spec)
    path = backend.definition_path
    existing = _read(path)
    if existing == content:
        return Report(
            [
                f"The {backend.kind} {path} is already installed with this content; nothing to do "
                + "(`h0 service status` says whether it runs)."
            ]
        )
    replacing = existing is not None
    if replacing and not force and not dry_run:
        raise Conflict(
            f"{path} exists with different content (another or an older H0 install): "
            "`h0 service install --force` replaces it; `--dry-run` shows the new one."
        )
    companions = backend.companions(spec)
    kept = [c for c in companions if c.content is not None and os.path.lexists(c.path)]
    companions = [c for c in companions if not os.path.lexists(c.path)]
    steps = backend.activate(replacing=replacing)
    notes = backend.notes(spec, secrets)
    if vault == BUNDLED_VAULT:
        notes.insert(0, "Note: that is the example vault bundled with H0; `--vault` (or VAULT_PATH) picks your own.")
    if dry_run:
        return Report(_dry_run_install(path, content, replacing, force, companions, steps) + notes)
    try:
        _write_atomic(path, content, 0o644)
        for companion in companions:
            _create(companion)
    except OSError as exc:
        raise InvalidRequest(f"cannot write {exc.filename or path}: {exc.strerror or exc}.") from None
    try:
        ran = _run(steps, runner)
    except ServiceCommandFailed as exc:
        if replacing:
            raise ServiceCommandFailed(
                f"{exc.message}. The new {path} is in place: fix that, then run the "
                "command again (or `h0 service uninstall`)."
            ) from None
        path.unlink(missing_ok=True)
        for companion in companions:
            _remove_created(companion)
        raise ServiceCommandFailed(f"{exc.message}. Nothing is installed ({path} removed again).") from None
    lines = [f"Wrote {path}" + (" (replacing the old one)." if replacing else ".")]
    lines += [f"Created {c.path} ({c.purpose})." for c in companions]
    lines += [f"Kept {c.path} as it is (edit it to change what the service gets)." for c in kept]
    lines += [f"$ {command}" for command in ran]
    lines.append(
        f"H0 now runs `{shlex.join(spec.argv)}` at login and restarts it after a crash "
        "(`h0 service status`, `h0 service logs`)."
    )
    return Report(lines + notes)


def uninstall(
    *,
    platform: str | None = None,
    purge: bool = False,
    dry_run: bool = False,
    runner: Runner | None = None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Report:
    """Stop the service, disable it and remove its definition; `purge` also removes the settings
    file or log folder install created."""
    backend = backend_for(platform, "uninstall", home=home, environ=environ)
    path = backend.definition_path
    installed = os.path.lexists(path)
    extras = [p for p in backend.purge_paths() if os.path.lexists(p)]
    purged = extras if purge else []
    if not installed and not purged:
        return Report([f"Nothing to uninstall: there is no {path}."])
    before = backend.deactivate() if installed else []
    after = backend.after_removal() if installed else []
    if dry_run:
        lines = ["# h0 service uninstall --dry-run: nothing is run or removed.", "# would run:"]
        lines += [step.describe() for step in before]
        lines += [f"# would remove {p}" for p in ([path] if installed else []) + purged]
        lines += [step.describe() for step in after]
        return Report(lines)
    ran = _run(before, runner)
    try:
        if installed:
            path.unlink()
        ran += _run(after, runner)
        for extra in purged:
            if extra.is_dir() and not extra.is_symlink():
                shutil.rmtree(extra)
            else:
                extra.unlink()
    except OSError as exc:
        raise InvalidRequest(f"cannot remove {exc.filename or path}: {exc.strerror or exc}.") from None
    lines = [f"$ {command}" for command in ran]
    if installed:
        lines.append(f"Removed {path}: H0 no longer starts at login.")
    lines += [f"Removed {p}." for p in purged]
    lines += [f"Kept {p} (`h0 service uninstall --purge` removes it)." for p in extras if p not in purged]
    return Report(lines)


def status(
    *,
    platform: str | None = None,
    runner: Runner | None = None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Report:
    """Whether the service is installed and running; `ok` only when it runs."""
    backend = backend_for(platform, "status", home=home, environ=environ)
    if not os.path.lexists(backend.definition_path):
        return Report(
            [f"Not installed (no {backend.definition_path}); `h0 service install` runs `h0 watch` at login."], ok=False
        )
    running, lines = backend.status(runner or run_command)
    return Report(lines, ok=running)


def logs(
    *,
    platform: str | None = None,
    follow: bool = False,
    runner: Runner | None = None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Report:
    """Show the service's last 100 log lines (and follow them), straight to this terminal."""
    step = backend_for(platform, "logs", home=home, environ=environ).logs(follow)
    result = (runner or run_command)(step.argv, capture=False)
    if result.returncode in (126, 127) and result.stderr:
        raise ServiceCommandFailed(result.reason())
    return Report([], ok=result.ok)


def _run(steps: Sequence[Step], runner: Runner | None) -> list[str]:
    """Run a plan in order; the commands that ran, as text. ServiceCommandFailed at the first
    required step that fails (after its fallback)."""
    runner = runner or run_command
    ran: list[str] = []
    for step in steps:
        argv = step.argv
        result = runner(argv)
        ran.append(shlex.join(argv))
        if not result.ok and step.fallback:
            argv = step.fallback
            result = runner(argv)
            ran.append(shlex.join(argv))
        if not result.ok and not step.may_fail:
            hint = f" ({step.hint})" if step.hint else ""
            raise ServiceCommandFailed(f"`{shlex.join(argv)}` failed: {result.reason()}{hint}")
    return ran


def _dry_run_install(
    path: Path, content: bytes, replacing: bool, force: bool, companions: list[CompanionFile], steps: list[Step]
) -> list[str]:
    lines = ["# h0 service install --dry-run: nothing is written or run."]
    if replacing:
        lines.append(
            f"# {path} exists with different content: "
            + ("--force replaces it." if force else "install needs --force to replace it.")
        )
    lines += [f"# would write {path}:", content.decode("utf-8").rstrip("\n")]
    for companion in companions:
        if companion.content is None:
            lines.append(f"# would create the folder {companion.path} ({companion.purpose})")
        else:
            lines += [
                f"# would create {companion.path} (mode {companion.mode:04o}, {companion.purpose}):",
                companion.content.rstrip("\n"),
            ]
    return lines + ["# would run:"] + [step.describe() for step in steps]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidRequest(f"cannot read {path}: {exc.strerror or exc}.") from None


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(temp, mode)  # whatever the umask
    os.replace(temp, path)


def _remove_created(companion: CompanionFile) -> None:
    """Undo `_create` after a failed first install (a folder only while it is still empty)."""
    try:
        if companion.content is None:
            companion.path.rmdir()
        else:
            companion.path.unlink()
    except OSError:
        pass


def _create(companion: CompanionFile) -> None:
    if companion.content is None:
        companion.path.mkdir(mode=companion.mode, parents=True, exist_ok=True)
        return
    companion.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(os.open(companion.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, companion.mode), "wb") as handle:
        handle.write(companion.content.encode("utf-8"))
    os.chmod(companion.path, companion.mode)  # whatever the umask
