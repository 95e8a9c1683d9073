"""`h0 service`'s vocabulary: what runs at login, the commands that manage it, a backend.

`ServiceSpec` is the command, vault, working folder and environment; a `Step` is one command
(with its fallback); the runner runs one without a shell (tests pass their own). A backend
(service_systemd, service_launchd) turns a spec into its definition file and its steps.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from h0.config import Settings
from h0.errors import H0Error, InvalidRequest, NotFound


class ServiceCommandFailed(H0Error):
    """systemctl, launchctl or journalctl said no; the message quotes what it said."""


@dataclass(frozen=True)
class ServiceSpec:
    """What runs at login: `<program> watch --vault <vault>`, in `working_dir`, with `environment`."""

    program: tuple[str, ...]
    vault: Path
    working_dir: Path
    environment: Mapping[str, str] = field(default_factory=dict)

    @property
    def argv(self) -> tuple[str, ...]:
        return (*self.program, "watch", "--vault", str(self.vault))


@dataclass(frozen=True)
class Step:
    """One command of a plan. `fallback` runs when it fails (an older launchctl); a `may_fail`
    step's failure is expected (stopping what is not running) and ignored; `hint` is added to
    the message when it fails."""

    argv: tuple[str, ...]
    fallback: tuple[str, ...] | None = None
    may_fail: bool = False
    hint: str = ""

    def describe(self) -> str:
        text = shlex.join(self.argv)
        if self.fallback:
            text += f"    # if that fails: {shlex.join(self.fallback)}"
        if self.may_fail:
            text += "    # a failure is ignored" if not self.fallback else "; a failure is ignored"
        return text


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def reason(self) -> str:
        """The last thing the command said (stderr first), for a one-line message."""
        for text in (self.stderr, self.stdout):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if lines:
                return lines[-1]
        return f"exit status {self.returncode}"


class Runner(Protocol):
    def __call__(self, argv: Sequence[str], *, capture: bool = True) -> CommandResult: ...


def run_command(argv: Sequence[str], *, capture: bool = True) -> CommandResult:
    """Run `argv` without a shell. `capture=False` lets its output through to this terminal."""
    try:
        if not capture:
            sys.stdout.flush()
            return CommandResult(subprocess.run(list(argv), check=False).returncode)
        done = subprocess.run(list(argv), capture_output=True, text=True, errors="replace", timeout=120, check=False)
        return CommandResult(done.returncode, done.stdout or "", done.stderr or "")
    except FileNotFoundError:
        return CommandResult(127, stderr=f"{argv[0]}: command not found")
    except subprocess.TimeoutExpired:
        return CommandResult(124, stderr=f"{argv[0]}: no answer after 120 s")
    except OSError as exc:
        return CommandResult(126, stderr=f"{argv[0]}: {exc.strerror or exc}")


@dataclass(frozen=True)
class CompanionFile:
    """A file (or, with `content` None, a folder) a backend needs beside its definition file.
    Created only when absent: the user may have edited it."""

    path: Path
    content: str | None
    mode: int
    purpose: str


class Backend(Protocol):
    """One OS's way of running a program at login (see service_systemd, service_launchd)."""

    kind: str  # "systemd user unit", "launchd agent"
    name: str  # what its tools call it: "h0.service", "dev.h0.watch"
    definition_path: Path

    def render(self, spec: ServiceSpec) -> bytes: ...

    def companions(self, spec: ServiceSpec) -> list[CompanionFile]: ...

    def activate(self, *, replacing: bool) -> list[Step]: ...

    def deactivate(self) -> list[Step]: ...

    def after_removal(self) -> list[Step]: ...

    def purge_paths(self) -> list[Path]: ...

    def status(self, runner: Runner) -> tuple[bool, list[str]]: ...

    def logs(self, follow: bool) -> Step: ...

    def notes(self, spec: ServiceSpec, secrets: list[str]) -> list[str]: ...


def checked(text: str, what: str) -> str:
    """`text` if a service definition can carry it: no line break or other control character
    (a unit file is line-based; nothing legitimate needs one), valid Unicode."""
    bad = next((ch for ch in text if ord(ch) < 0x20 or ord(ch) == 0x7F), None)
    if bad is not None:
        kind = "a line break" if bad in "\r\n" else f"the control character {bad!r}"
        raise InvalidRequest(f"{what} {text!r} contains {kind}, which a login service cannot carry; rename it.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequest(f"{what} {text!r} is not valid UTF-8, which a login service needs; rename it.") from None
    return text


def find_entry_point(executable: str | None = None) -> tuple[str, ...]:
    """The absolute command that starts H0: the `h0` script pip installed beside this Python,
    else `python -I -m h0` when H0 is installed in it (-I: a folder named h0/ in the working
    directory is never imported). NotFound when neither is there."""
    python = Path(os.path.abspath(executable or sys.executable or "python"))
    for name in ("h0", "h0.exe"):
        script = python.with_name(name)
        if script.is_file() and os.access(script, os.X_OK):
            return (str(script),)
    if python.is_file() and _h0_installed():
        return (str(python), "-I", "-m", "h0")
    raise NotFound(
        f"no installed `h0` command beside {python}: install H0 into that Python first "
        "(`pip install -e .` in the project, or `pipx install`), then run its `h0 service install`."
    )


def _h0_installed() -> bool:
    from importlib import metadata

    try:
        metadata.distribution("h0")
    except metadata.PackageNotFoundError:
        return False
    return True


def settings_from_environment(environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The H0 settings set in `environ` that the service must carry (a service does not see your
    shell), and the names of the secrets among them, which are never copied: the user puts them
    where the backend says. `.env` files are not copied: the service reads them from its working
    folder as `h0 watch` does, and a copy would override later edits of them."""
    given = {name.upper(): value for name, value in environ.items()}
    copied: dict[str, str] = {}
    secrets: list[str] = []
    for field_name, info in Settings.model_fields.items():
        name = field_name.upper()
        if name == "VAULT_PATH" or name not in given:
            continue
        if _is_secret(info.annotation):
            secrets.append(name)
        else:
            copied[name] = checked(given[name], f"the setting {name}")
    if "H0_ENV_FILE" in given:  # which .env H0 reads: keep it, made absolute
        value = given["H0_ENV_FILE"]
        copied["H0_ENV_FILE"] = checked(os.path.abspath(value) if value.strip() else value, "H0_ENV_FILE")
    return dict(sorted(copied.items())), sorted(secrets)


def _is_secret(annotation: object) -> bool:
    from typing import get_args

    from pydantic import SecretStr

    return annotation is SecretStr or SecretStr in get_args(annotation)
