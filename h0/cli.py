"""`h0 …` — the command line. Each command is a thin shell over a library function.

Exit codes: 0 success, 1 the command failed (the message says why and what to do),
2 usage error, 3 another H0 daemon already holds the vault, 4 (`h0 sweep`) the pass ran but
some of its work failed — a send, a bounce, sending paused for credentials, a handler (see
h0.pipeline.tally for what counts; a draft refused back to Drafts/ or a reached send cap
does not).
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
EXIT_WORK_FAILED = 4

Command = Callable[[argparse.Namespace], int]


def _workers(text: str) -> int:
    """--workers: 1 to 64 (0 workers would wait forever for a pass that never runs)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"{value} is out of range: use 1 to 64")
    return value


def _seconds(text: str) -> float:
    """--timeout: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds above 0")
    return value


def _settings(args: argparse.Namespace):
    from h0.config import load_settings

    overrides: dict[str, object] = {}
    if getattr(args, "vault", None):
        overrides["vault_path"] = Path(args.vault)
    if getattr(args, "log_level", None):
        overrides["log_level"] = args.log_level
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
    from h0.drafting.profile import ensure_profile_file

    if ensure_profile_file(root):
        created.append("H0_Profile.md")
    if created:
        print(f"Created in {root}:")
        for name in created:
            print(f"  {name}" if name.endswith(".md") else f"  {name}/")
    else:
        print(f"{root} already has every H0 folder ({', '.join(FOLDERS)}), {RULES_FILENAME} and H0_Profile.md; "
              "nothing to do.")
    print("\nNext:\n"
          f"  1. Point H0 at this vault: put VAULT_PATH={root} in .env (or the environment).\n"
          "  2. Try it on your own mail without an account: `h0 import mail.mbox` (or .eml files), then `h0 sweep`;\n"
          "     or connect your mailbox: MAIL_BACKEND=gmail after `h0 auth gmail` (or imap/smtp: see .env.example).\n"
          "  3. Run `h0 doctor` to check everything, then `h0 watch`.")
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

            server = build_vault_server(settings.vault_path, state_dir=settings.h0_state_dir,
                                        private_folders=settings.private_folders, watcher=settings.h0_watcher,
                                        draft_tokens=settings.draft_context_tokens)
        else:
            from h0.mcp.mail_server import main as serve_mail
    finally:
        gc.freeze()
        gc.enable()
    if args.server == "vault":
        server.run("stdio")
        return EXIT_OK
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

    from h0.config import unknown_settings, using_bundled_vault
    from h0.doctor import missing_folders
    from h0.vault.layout import FOLDERS

    settings = _settings(args)
    _setup_logging(settings)
    for name, close in unknown_settings():
        print(f"h0 {command}: {name} is not an H0 setting (did you mean {close}?); it is ignored", file=sys.stderr)
    root = Path(settings.vault_path)
    if root.is_dir() and len(missing_folders(root)) == len(FOLDERS):  # never initialised (a part missing: see below)
        print(f"h0 {command}: {root} has none of H0's folders yet: run `h0 init {root}` first (it adds them and "
              "touches nothing else)", file=sys.stderr)
        return None
    try:
        check_vault_writable(root)
    except H0Error as exc:
        print(f"h0 {command}: {exc.message}", file=sys.stderr)
        return None
    if using_bundled_vault(settings):
        print(f"h0 {command}: VAULT_PATH is not set: this runs on the demo vault bundled with H0 ({root}). Set "
              "VAULT_PATH to your Obsidian vault (in .env or the environment) to use your own.", file=sys.stderr)
    return settings


def _mail_ready(settings, command: str) -> bool:
    """False (after one line saying what to do) if the mail backend cannot send at all:
    no usable Gmail token, SMTP not configured. Better said at start than found at the first send."""
    from h0.doctor import mail_setup_problem

    problem = mail_setup_problem(settings)
    if problem is not None:
        print(f"h0 {command}: {problem}", file=sys.stderr)
        return False
    return True


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
    import threading

    from loguru import logger

    from h0.platform.proc import on_stop_signals


    settings = _prepared(args, "watch")
    if settings is None or not _mail_ready(settings, "watch"):
        return EXIT_FAILED
    daemon = _daemon(settings, args)
    stop = threading.Event()

    def request_stop(name: str) -> None:
        logger.info("{} received: finishing in-flight work, then stopping", name)
        stop.set()

    on_stop_signals(request_stop)  # SIGINT + SIGTERM on POSIX, Ctrl-C + Ctrl-Break on Windows
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
    """One pass, then a one-line summary on stdout (what it did, line by line, with -v); exit 4 if some
    of the work failed. Problems are said on stderr either way."""
    if not args.verbose:
        args.log_level = "WARNING"  # the pass's own INFO lines, and its servers', only with -v
    settings = _prepared(args, "sweep")
    if settings is None or not _mail_ready(settings, "sweep"):
        return EXIT_FAILED
    daemon = _daemon(settings, args)
    daemon.one_pass = True  # nothing is retried in this process: the next sweep does it
    # One pass over what is in the vault now: no watcher (what arrives meanwhile is the next pass's).
    failed = _start(daemon, "sweep", "; it already does this work.", watch=False)
    if failed is not None:
        return failed
    try:
        finished = daemon.run_once(timeout=args.timeout)
    finally:
        daemon.stop()
    print(daemon.tally.summary(), flush=True)
    if not finished:
        print(f"h0 sweep: work was still running after {args.timeout:.0f}s; the next pass picks it up.", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_WORK_FAILED if daemon.tally.failed else EXIT_OK


def cmd_ingest(args: argparse.Namespace) -> int:
    from h0.pipeline.daemon import Daemon

    settings = _prepared(args, "ingest")
    if settings is None or not _mail_ready(settings, "ingest"):
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
    from h0.printable import printable

    print(f"{len(report.written)} new note(s), {report.duplicates} duplicate(s), {report.failed} failed")
    for path in report.written:
        print(f"  {printable(path)}")
    return EXIT_FAILED if report.failed else EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    """`h0 import FILE…`: .eml files, .mbox mailboxes or folders of them into Needs_Action/, as ingest
    writes mail (your own sent messages into Done/ as sent mail). Exit 4 if some could not be read."""
    from h0.handlers.context import HandlerContext
    from h0.handlers.mail_import import import_messages
    from h0.mail.importer import messages_in
    from h0.printable import printable
    from h0.vault import Vault

    settings = _prepared(args, "import")
    if settings is None:
        return EXIT_FAILED
    missing = [p for p in args.files if not Path(p).exists()]
    if missing:
        print(f"h0 import: no such file or folder: {', '.join(printable(str(p)) for p in missing)}", file=sys.stderr)
        return EXIT_FAILED
    ctx = HandlerContext.local(settings, Vault(Path(settings.vault_path)))
    report = import_messages(messages_in([Path(p) for p in args.files]), ctx)
    print(report.line())
    for problem in report.problems:
        print(f"  ✗ {printable(problem.source)}: {printable(problem.reason)}")
    if report.written:
        print("Run `h0 sweep` (or `h0 watch`) to triage them.")
    return EXIT_WORK_FAILED if report.problems else EXIT_OK


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


def cmd_log(args: argparse.Namespace) -> int:
    """`h0 log`: what H0 sent; `h0 log NOTE`: one note's trail from ingest to filing."""
    from h0.logview import run_log

    settings = _settings(args)
    if not _check_vault(settings):
        return EXIT_FAILED
    return run_log(Path(settings.vault_path), args, sys.stdout, sys.stderr)


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


def cmd_service(args: argparse.Namespace) -> int:
    """`h0 service install|uninstall|status|logs`: `h0 watch` at login (h0/platform/service.py)."""
    from h0.errors import H0Error
    from h0.platform import service

    try:
        if args.action == "install":
            vault = Path(args.vault).expanduser() if args.vault else _settings(args).vault_path
            report = service.install(vault, platform=args.platform, force=args.force, dry_run=args.dry_run)
        elif args.action == "uninstall":
            report = service.uninstall(platform=args.platform, purge=args.purge, dry_run=args.dry_run)
        elif args.action == "status":
            report = service.status(platform=args.platform)
        else:
            report = service.logs(platform=args.platform, follow=args.follow)
    except H0Error as exc:
        print(f"h0 service {args.action}: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    for line in report.lines:
        print(line)
    return EXIT_OK if report.ok else EXIT_FAILED


def cmd_demo(args: argparse.Namespace) -> int:
    """`h0 demo reset`: the demo vault as shipped again (h0/demo.py says what it refuses)."""
    from h0.demo import refusal, reset_demo
    from h0.pipeline.lock import AlreadyRunning, VaultLock

    settings = _settings(args)
    root = Path(settings.vault_path)
    if not _check_vault(settings):
        return EXIT_FAILED
    refused = refusal(root, settings)
    if refused is not None:
        print(f"h0 demo reset: {refused}", file=sys.stderr)
        return EXIT_FAILED
    lock = VaultLock(root)
    try:
        lock.acquire()  # no daemon may file notes while the demo is put back
    except AlreadyRunning as exc:
        print(f"h0 demo reset: {exc}. Stop it first (Ctrl-C), then reset.", file=sys.stderr)
        return EXIT_LOCKED
    try:
        report = reset_demo(root, settings)
    finally:
        lock.release()
    print(report.line(root))
    print("Drag Drafts/reply-example-001.md into Approved/ (with `h0 watch` running) to watch a send again.")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="h0", description="H0 — your AI employee in an Obsidian vault.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, handler: Command, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    init = add("init", cmd_init, "Create H0's folders, H0_Rules.md and H0_Profile.md inside an existing vault "
                                  "(touches nothing that exists).")
    init.add_argument("path", nargs="?", help="the vault folder (default: VAULT_PATH)")

    watch = add("watch", cmd_watch, "Run H0 in the foreground: triage new mail, send approved drafts.")
    watch.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    watch.add_argument("--workers", type=_workers, default=4, help="parallel handlers (default: 4)")

    sweep = add("sweep", cmd_sweep, "One pass over the vault (send approved drafts, triage, archive), then exit.")
    sweep.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    sweep.add_argument("--workers", type=_workers, default=4, help="parallel handlers (default: 4)")
    sweep.add_argument("-v", "--verbose", action="store_true", help="say what the pass does, line by line (stderr)")
    sweep.add_argument("--timeout", type=_seconds, default=600.0,
                       help="stop waiting for the pass after this many seconds (default: 600; exit 1)")

    ingest = add("ingest", cmd_ingest, "Look for new mail once (GMAIL_QUERY) and write it to Needs_Action/.")
    ingest.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")

    imp = add("import", cmd_import, "Import mail from files (.eml, .mbox, or folders of them) into Needs_Action/, "
              "as if it had just arrived; messages you sent go to Done/ as sent mail.")
    imp.add_argument("files", nargs="+", metavar="FILE", help=".eml files, .mbox mailboxes, or folders of them")
    imp.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")

    status = add("status", cmd_status, "What needs you, drafts waiting, why approved drafts wait, send caps, "
                 "recent sends and errors, daemon state (the data of H0_Dashboard.md).")
    status.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    status.add_argument("--json", action="store_true", help="machine-readable output")

    log = add("log", cmd_log, "What H0 sent (oldest first, the newest last), or with NOTE that note's trail "
              "from ingest to filing.")
    log.add_argument("note", nargs="?", metavar="NOTE", help="a note's path or name (Done/x.md, x, [[x]])")
    log.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    log.add_argument("--since", metavar="DATE", help="from this local date (YYYY-MM-DD) or time")
    log.add_argument("--until", metavar="DATE", help="up to this local date (the whole day) or time")
    log.add_argument("--today", action="store_true", help="since midnight")
    log.add_argument("--days", type=int, metavar="N", help="the last N days")
    log.add_argument("--to", metavar="TEXT", help="sends to a recipient containing TEXT (any case)")
    log.add_argument("--note", dest="note_filter", metavar="TEXT", help="sends whose note's path contains TEXT")
    log.add_argument("--limit", type=int, default=50, help="show the newest N sends (default 50; 0: all)")
    log.add_argument("--all", action="store_true", help="NOTE: also the vault server's writes and moves")
    log.add_argument("--json", action="store_true", help="machine-readable output (a JSON array)")

    doctor = add("doctor", cmd_doctor, "Check configuration, vault, rules, mail backend and both MCP servers.")
    doctor.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    doctor.add_argument("--no-servers", action="store_true", help="skip starting the MCP servers")

    service = add("service", cmd_service,
                  "Run `h0 watch` at login: a systemd user unit (Linux) or launchd agent (macOS).")
    service_common = argparse.ArgumentParser(add_help=False)
    service_common.add_argument("--platform", choices=["linux", "macos", "windows"],
                                help="act as on this OS (default: this machine's); with --dry-run, a preview")
    service_actions = service.add_subparsers(dest="action", metavar="ACTION", required=True)
    service_install = service_actions.add_parser("install", parents=[service_common],
                                                 help="write the unit/agent for `h0 watch --vault VAULT` and start it")
    service_install.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    service_install.add_argument("--force", action="store_true", help="replace a unit/agent with different content")
    service_install.add_argument("--dry-run", action="store_true",
                                 help="print what would be written and run; touch nothing")
    service_uninstall = service_actions.add_parser("uninstall", parents=[service_common],
                                                   help="stop, disable and remove it")
    service_uninstall.add_argument("--purge", action="store_true", help="also remove its settings file / log folder")
    service_uninstall.add_argument("--dry-run", action="store_true", help="print what would be run; touch nothing")
    service_actions.add_parser("status", parents=[service_common], help="installed? running?")
    service_logs = service_actions.add_parser("logs", parents=[service_common], help="its last 100 log lines")
    service_logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")

    mcp = add("mcp", cmd_mcp, "Run an MCP server on stdio (for Claude Code and H0 itself).")
    mcp.add_argument("server", choices=["vault", "gmail"], help="vault: notes; gmail: mail (any MAIL_BACKEND)")
    mcp.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")

    auth = add("auth", cmd_auth, "Authorise H0 to use your Gmail (opens a browser once; writes token.json).")
    auth.add_argument("provider", choices=["gmail"], help="the account to authorise")
    auth.add_argument("--credentials", help="OAuth client JSON (default: GMAIL_CREDENTIALS_PATH)")
    auth.add_argument("--token", help="where to write the token (default: GMAIL_TOKEN_PATH)")
    auth.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    auth.add_argument("--port", type=int, default=0, help="local port for Google's redirect (default: any free one)")

    demo = add("demo", cmd_demo, "The bundled demo vault: `h0 demo reset` puts its examples back as shipped.")
    demo.add_argument("action", choices=["reset"], help="reset: restore the examples, delete what the demo wrote, "
                      "forget its sends (only in H0's demo vault)")
    demo.add_argument("--vault", help="the demo vault (default: VAULT_PATH, i.e. the bundled vault/)")
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
        from h0.config import setting_problems

        lines = setting_problems(exc)
        print(f"h0: {len(lines)} setting(s) to fix (environment or .env; .env.example explains each):", file=sys.stderr)
        for line in lines:
            print(f"  {line}", file=sys.stderr)
        return EXIT_FAILED
    except ValueError as exc:  # e.g. an unknown LLM_PROVIDER, raised with a message for a person
        print(f"h0: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except H0Error as exc:  # a typed error already says what went wrong and what to do
        print(f"h0 {args.command}: {exc.message}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
