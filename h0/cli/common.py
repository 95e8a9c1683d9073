"""What every `h0` command shares: the exit codes, settings from the arguments, and the checks made
before the daemon starts (so a command that cannot work says why in one line, before any send)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from h0.config import Settings
    from h0.pipeline.daemon import Daemon
    from h0.triage import Triager

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_LOCKED = 3
EXIT_WORK_FAILED = 4

Command = Callable[[argparse.Namespace], int]


def settings_for(args: argparse.Namespace, *, vault: bool = True) -> Settings:
    """The settings for a command (--vault and the log level of its arguments win). A command that works in
    a vault (`vault`) refuses settings that name none (h0.config.vault_unset) with a typed error."""
    from h0.config import load_settings, vault_unset
    from h0.errors import InvalidRequest

    overrides: dict[str, object] = {}
    if getattr(args, "vault", None):
        overrides["vault_path"] = Path(args.vault)
    if getattr(args, "log_level", None):
        overrides["log_level"] = args.log_level
    settings = load_settings(**overrides)
    problem = vault_unset(settings) if vault else None
    if problem is not None:
        raise InvalidRequest(problem)
    return settings


def setup_logging_for(settings: Settings) -> None:
    from h0.logsetup import setup_logging

    setup_logging(settings.log_level)


def build_daemon(settings: Settings, args: argparse.Namespace) -> Daemon:
    from h0.pipeline.daemon import Daemon
    from h0.report.dashwriter import start_dashboard

    return Daemon(
        settings, workers=args.workers, triager=triager_for(settings), ingest=True, companions=[start_dashboard]
    )


def triager_for(settings: Settings) -> Triager:
    """The triage engine for LLM_PROVIDER (ValueError with a message for a bad provider)."""
    from h0.triage import Triager

    return Triager.from_settings(settings, settings.vault_path)


def prepared(args: argparse.Namespace, command: str) -> Settings | None:
    """Settings with logging set up, or None (after one line saying what to do) if the daemon
    must not start: the vault is missing, or H0 could not file what it sends (read-only,
    full, a folder that is a file). Checked before the daemon starts, so before any send."""
    from h0.cli.doctor import missing_folders
    from h0.config import unknown_settings, using_bundled_vault
    from h0.errors import H0Error
    from h0.vault.health import check_vault_writable
    from h0.vault.layout import FOLDERS

    settings = settings_for(args)
    setup_logging_for(settings)
    for name, close in unknown_settings():
        print(f"h0 {command}: {name} is not an H0 setting (did you mean {close}?); it is ignored", file=sys.stderr)
    root = Path(settings.vault_path)
    if root.is_dir() and len(missing_folders(root)) == len(FOLDERS):  # never initialised (a part missing: see below)
        print(
            f"h0 {command}: {root} has none of H0's folders yet: run `h0 init {root}` first (it adds them and "
            "touches nothing else)",
            file=sys.stderr,
        )
        return None
    try:
        check_vault_writable(root)
    except H0Error as exc:
        print(f"h0 {command}: {exc.message}", file=sys.stderr)
        return None
    seed_demo_vault(root, settings)
    if using_bundled_vault(settings):
        print(
            f"h0 {command}: VAULT_PATH is not set: this runs on the demo vault bundled with H0 ({root}). Set "
            "VAULT_PATH to your Obsidian vault (in .env or the environment) to use your own.",
            file=sys.stderr,
        )
    return settings


def seed_demo_vault(root: Path, settings: Settings) -> None:
    """In the demo vault, put its examples in place the first time it runs (h0.cli.demo.seed_demo), and
    forget the demo sends H0's state still holds for this path (a former clone's, recorded outside the vault:
    the example would be answered "a copy of a reply already sent"), as `h0 demo reset` does and under its
    rules (the outbox backend, no real send ever)."""
    from loguru import logger

    from h0.cli.demo import forget_former_demo, seed_demo

    written = seed_demo(root)
    if written:
        logger.info("the demo vault's first run: put {} in place", ", ".join(written))
        forgotten = forget_former_demo(root, settings)
        if forgotten:
            logger.info("the demo vault's first run: forgot {} send(s) a former demo at this path recorded", forgotten)


def mail_ready(settings: Settings, command: str) -> bool:
    """False (after one line saying what to do) if the mail backend cannot send at all:
    no usable Gmail token, SMTP not configured. Better said at start than found at the first send."""
    from h0.cli.doctor import mail_setup_problem

    problem = mail_setup_problem(settings)
    if problem is not None:
        print(f"h0 {command}: {problem}", file=sys.stderr)
        return False
    return True


def vault_exists(settings: Settings) -> bool:
    if not Path(settings.vault_path).is_dir():
        print(
            f"h0: the vault folder {settings.vault_path} does not exist. Set VAULT_PATH (or --vault) to your "
            "Obsidian vault, then run `h0 init` to add H0's folders.",
            file=sys.stderr,
        )
        return False
    return True


def h0_vault_exists(settings: Settings) -> bool:
    """Like `vault_exists`, and the folder must be an H0 vault (h0.vault.layout.is_h0_vault): a report
    on any other folder would print zeros that look like "all is well"."""
    from h0.vault.layout import WORK_FOLDERS, is_h0_vault

    if not vault_exists(settings):
        return False
    if not is_h0_vault(Path(settings.vault_path)):
        print(not_an_h0_vault(Path(settings.vault_path), WORK_FOLDERS), file=sys.stderr)
        return False
    return True


def not_an_h0_vault(root: Path, folders: tuple[str, ...]) -> str:
    return (
        f"h0: {root} is not an H0 vault (it has none of {', '.join(f + '/' for f in folders)}). "
        f"Point VAULT_PATH (or --vault) at your vault, or run `h0 init {root}` to make this one."
    )


def start_daemon(daemon: Daemon, command: str, why: str, **start: bool) -> int | None:
    """Start the daemon; on a locked vault print who holds it and return EXIT_LOCKED; if the
    vault refuses the lock file (it turned read-only since the check), one line and EXIT_FAILED."""
    from h0.errors import H0Error
    from h0.pipeline.lock import AlreadyRunning
    from h0.platform.fileio import typed_os_error

    try:
        daemon.start(**start)
    except AlreadyRunning as exc:
        print(f"h0 {command}: {exc}{why}", file=sys.stderr)
        return EXIT_LOCKED
    except H0Error as exc:
        print(f"h0 {command}: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        print(f"h0 {command}: {typed_os_error(exc, 'start the daemon').message}", file=sys.stderr)
        return EXIT_FAILED
    return None
