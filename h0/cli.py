"""`h0 …` — the command line. Each command is a thin shell over a library function.

Exit codes: 0 success, 1 the command failed (the message says why and what to do),
2 usage error, 3 another H0 daemon already holds the vault.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_LOCKED = 3

Command = Callable[[argparse.Namespace], int]


def _settings(args: argparse.Namespace):
    from h0.config import load_settings

    overrides = {}
    if getattr(args, "vault", None):
        overrides["vault_path"] = Path(args.vault)
    return load_settings(**overrides)


def _setup_logging(settings) -> None:
    from h0.logsetup import setup_logging

    setup_logging(settings.log_level)


def cmd_init(args: argparse.Namespace) -> int:
    from h0.vault import FOLDERS, init_vault

    root = Path(args.path).expanduser() if args.path else _settings(args).vault_path
    try:
        created = init_vault(root)
    except FileNotFoundError as exc:
        print(f"h0 init: {exc}", file=sys.stderr)
        return EXIT_FAILED
    from h0.triage import RULES_FILENAME, ensure_rules_file

    if ensure_rules_file(root):
        created.append(RULES_FILENAME)
    if created:
        print(f"Created in {root}:")
        for name in created:
            print(f"  {name}" if name.endswith(".md") else f"  {name}/")
    else:
        print(f"{root} already has every H0 folder ({', '.join(FOLDERS)}) and {RULES_FILENAME}; nothing to do.")
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    import gc

    # The MCP SDK builds hundreds of pydantic models at import: collecting garbage in the
    # middle of that is wasted start-up time. Freeze what was imported so later collections
    # skip it.
    gc.disable()
    try:
        settings = _settings(args)
        _setup_logging(settings)
        if args.server == "vault":
            from h0.mcp.vault_server import build_vault_server

            server = build_vault_server(settings.vault_path)
    finally:
        gc.freeze()
        gc.enable()
    if args.server == "vault":
        server.run("stdio")
        return EXIT_OK
    from h0.mcp.mail_server import main as serve_mail

    serve_mail(settings)
    return EXIT_OK


def _daemon(settings, args: argparse.Namespace):
    from h0.pipeline.daemon import Daemon

    return Daemon(settings, workers=args.workers, triager=_triager(settings), ingest=True)


def _triager(settings):
    """The triage engine for LLM_PROVIDER (ValueError with a message for a bad provider)."""
    from h0.triage import Triager

    return Triager.from_settings(settings, settings.vault_path)


def _prepared(args: argparse.Namespace, command: str):
    """Settings with logging set up, or None (after one line saying what to do) if the daemon
    must not start: the vault is missing, or H0 could not file what it sends (read-only,
    full, a folder that is a file). Checked before the daemon starts, so before any send."""
    from h0.errors import H0Error
    from h0.vault.health import check_vault_writable

    settings = _settings(args)
    _setup_logging(settings)
    try:
        check_vault_writable(Path(settings.vault_path))
    except H0Error as exc:
        print(f"h0 {command}: {exc.message}", file=sys.stderr)
        return None
    return settings


def _check_vault(settings) -> bool:
    if not Path(settings.vault_path).is_dir():
        print(
            f"h0: the vault folder {settings.vault_path} does not exist. Set VAULT_PATH (or --vault) to your "
            "Obsidian vault, then run `h0 init` to add H0's folders.",
            file=sys.stderr,
        )
        return False
    return True


def _start(daemon, command: str, why: str, **start: bool) -> int | None:
    """Start the daemon; on a locked vault print who holds it and return EXIT_LOCKED; if the
    vault refuses the lock file (it turned read-only since the check), one line and EXIT_FAILED."""
    from h0.errors import H0Error
    from h0.pipeline.lock import AlreadyRunning
    from h0.vault.fsio import typed_os_error

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


def cmd_watch(args: argparse.Namespace) -> int:
    import signal
    import threading

    from loguru import logger


    settings = _prepared(args, "watch")
    if settings is None:
        return EXIT_FAILED
    daemon = _daemon(settings, args)
    stop = threading.Event()

    def request_stop(signum, _frame) -> None:
        logger.info("{} received: finishing in-flight work, then stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    failed = _start(daemon, "watch", ". Stop it first, or use `h0 status` to see it.")
    if failed is not None:
        return failed
    _print_banner(settings, daemon)
    try:
        daemon.run(stop)
    finally:
        daemon.stop()
    logger.info("stopped")
    return EXIT_OK


def _print_banner(settings, daemon) -> None:
    from loguru import logger

    backend = settings.mail_backend
    if backend == "outbox":
        backend += " (dry run: messages are written to Outbox/, nothing is really sent)"
    triage = settings.llm_provider if daemon.triager is not None else "off"
    logger.info("H0 watching {} — mail: {}; triage: {}", settings.vault_path, backend, triage)
    logger.info("drag a draft from Drafts/ into Approved/ to send it; Ctrl-C to stop")


def cmd_sweep(args: argparse.Namespace) -> int:

    settings = _prepared(args, "sweep")
    if settings is None:
        return EXIT_FAILED
    daemon = _daemon(settings, args)
    failed = _start(daemon, "sweep", "; it already does this work.")
    if failed is not None:
        return failed
    try:
        finished = daemon.run_once(timeout=args.timeout)
    finally:
        daemon.stop()
    if not finished:
        print(f"h0 sweep: work was still running after {args.timeout:.0f}s; the next pass picks it up.", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def cmd_ingest(args: argparse.Namespace) -> int:
    from h0.pipeline.daemon import Daemon

    settings = _prepared(args, "ingest")
    if settings is None:
        return EXIT_FAILED
    daemon = Daemon(settings, workers=1)
    failed = _start(daemon, "ingest", "; it ingests every GMAIL_POLL_SECONDS already.", watch=False, sweep=False)
    if failed is not None:
        return failed
    try:
        daemon.run_ingest()
    finally:
        daemon.stop()
    report = daemon.last_ingest
    if report.unsupported:
        print(f"h0 ingest: MAIL_BACKEND={settings.mail_backend} cannot read mail; use MAIL_BACKEND=gmail.", file=sys.stderr)
        return EXIT_FAILED
    print(f"{len(report.written)} new note(s), {report.duplicates} duplicate(s), {report.failed} failed")
    for path in report.written:
        print(f"  {path}")
    return EXIT_FAILED if report.failed else EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from h0.status import collect_status, render_status

    settings = _settings(args)
    if not _check_vault(settings):
        return EXIT_FAILED
    status = collect_status(settings)
    if args.json:
        import json

        print(json.dumps(status, indent=2, default=str))
    else:
        print(render_status(status))
    return EXIT_OK


def cmd_auth(args: argparse.Namespace) -> int:
    """`h0 auth gmail`: the one-time browser consent that writes token.json (0600)."""
    from h0.errors import H0Error
    from h0.mail.auth import GMAIL_SCOPES, TESTING_APP_NOTE, run_consent_flow

    settings = _settings(args)
    credentials = Path(args.credentials).expanduser() if args.credentials else settings.gmail_credentials_path
    token = Path(args.token).expanduser() if args.token else settings.gmail_token_path
    print(f"Asking Google for access to your Gmail (scope: {', '.join(GMAIL_SCOPES)}).")
    try:
        run_consent_flow(credentials, token, open_browser=not args.no_browser, port=args.port)
    except H0Error as exc:
        print(f"h0 auth gmail: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # oauthlib / the local redirect server: say what failed, not a traceback
        print(f"h0 auth gmail: the consent did not complete: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"Saved {token} (readable by you only). H0's mail server will use and refresh it.")
    print(TESTING_APP_NOTE)
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from h0.doctor import FAIL, run_checks

    from h0.logsetup import setup_logging

    settings = _settings(args)
    setup_logging("WARNING")
    checks = run_checks(settings, servers=not args.no_servers)
    for check in checks:
        print(check.line())
    failed = [c for c in checks if c.mark == FAIL]
    print(f"\n{len(failed)} problem(s) to fix." if failed else "\nAll good.")
    return EXIT_FAILED if failed else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="h0", description="H0 — your AI employee in an Obsidian vault.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, handler: Command, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    init = add("init", cmd_init, "Create H0's folders inside an existing vault (touches nothing that exists).")
    init.add_argument("path", nargs="?", help="the vault folder (default: VAULT_PATH)")

    watch = add("watch", cmd_watch, "Run H0 in the foreground: triage new mail, send approved drafts.")
    watch.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    watch.add_argument("--workers", type=int, default=4, help="parallel handlers (default: 4)")

    sweep = add("sweep", cmd_sweep, "One pass over the vault (send approved drafts, triage, archive), then exit.")
    sweep.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    sweep.add_argument("--workers", type=int, default=4, help="parallel handlers (default: 4)")
    sweep.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds")

    ingest = add("ingest", cmd_ingest, "Look for new mail once (GMAIL_QUERY) and write it to Needs_Action/.")
    ingest.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")

    status = add("status", cmd_status, "Notes per folder, drafts waiting, recent sends and errors, daemon state.")
    status.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    status.add_argument("--json", action="store_true", help="machine-readable output")

    doctor = add("doctor", cmd_doctor, "Check configuration, vault, rules, mail backend and both MCP servers.")
    doctor.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    doctor.add_argument("--no-servers", action="store_true", help="skip starting the MCP servers")

    mcp = add("mcp", cmd_mcp, "Run an MCP server on stdio (for Claude Code and H0 itself).")
    mcp.add_argument("server", choices=["vault", "gmail"], help="vault: notes; gmail: mail (any MAIL_BACKEND)")
    mcp.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")

    auth = add("auth", cmd_auth, "Authorise H0 to use your Gmail (opens a browser once; writes token.json).")
    auth.add_argument("provider", choices=["gmail"], help="the account to authorise")
    auth.add_argument("--credentials", help="OAuth client JSON (default: GMAIL_CREDENTIALS_PATH)")
    auth.add_argument("--token", help="where to write the token (default: GMAIL_TOKEN_PATH)")
    auth.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    auth.add_argument("--port", type=int, default=0, help="local port for Google's redirect (default: any free one)")
    return parser


def _version() -> str:
    from h0 import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    from pydantic import ValidationError

    from h0.errors import H0Error

    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        print(f"h0: invalid configuration — {problems}. See .env.example.", file=sys.stderr)
        return EXIT_FAILED
    except ValueError as exc:  # e.g. an unknown LLM_PROVIDER, raised with a message for a person
        print(f"h0: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except H0Error as exc:  # a typed error already says what went wrong and what to do
        print(f"h0 {args.command}: {exc.message}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
