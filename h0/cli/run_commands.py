"""The commands that do H0's work: `h0 watch`, `h0 sweep`, `h0 ingest`, `h0 import`, `h0 mcp`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from h0.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_WORK_FAILED,
    build_daemon,
    mail_ready,
    prepared,
    seed_demo_vault,
    settings_for,
    setup_logging_for,
    start_daemon,
)

if TYPE_CHECKING:
    from h0.config import Settings
    from h0.pipeline.daemon import Daemon


def cmd_watch(args: argparse.Namespace) -> int:
    import threading

    from loguru import logger

    from h0.platform.proc import on_stop_signals

    settings = prepared(args, "watch")
    if settings is None or not mail_ready(settings, "watch"):
        return EXIT_FAILED
    daemon = build_daemon(settings, args)
    stop = threading.Event()

    def request_stop(name: str) -> None:
        logger.info("{} received: finishing in-flight work, then stopping", name)
        stop.set()

    on_stop_signals(request_stop)  # SIGINT + SIGTERM on POSIX, Ctrl-C + Ctrl-Break on Windows
    failed = start_daemon(daemon, "watch", ". Stop it first, or use `h0 status` to see it.")
    if failed is not None:
        return failed
    _print_banner(settings, daemon)
    try:
        daemon.run(stop)
    finally:
        daemon.stop()
    logger.info("stopped")
    return EXIT_OK


def _print_banner(settings: Settings, daemon: Daemon) -> None:
    from loguru import logger

    backend: str = settings.mail_backend
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
    settings = prepared(args, "sweep")
    if settings is None or not mail_ready(settings, "sweep"):
        return EXIT_FAILED
    daemon = build_daemon(settings, args)
    daemon.one_pass = True  # nothing is retried in this process: the next sweep does it
    # One pass over what is in the vault now: no watcher (what arrives meanwhile is the next pass's).
    failed = start_daemon(daemon, "sweep", "; it already does this work.", watch=False)
    if failed is not None:
        return failed
    try:
        finished = daemon.run_once(timeout=args.timeout)
    finally:
        daemon.stop()
    print(daemon.tally.summary(), flush=True)
    if not finished:
        print(
            f"h0 sweep: work was still running after {args.timeout:.0f}s; the next pass picks it up.", file=sys.stderr
        )
        return EXIT_FAILED
    return EXIT_WORK_FAILED if daemon.tally.failed else EXIT_OK


def cmd_ingest(args: argparse.Namespace) -> int:
    from h0.pipeline.daemon import Daemon
    from h0.report.dashwriter import start_dashboard

    settings = prepared(args, "ingest")
    if settings is None or not mail_ready(settings, "ingest"):
        return EXIT_FAILED
    daemon = Daemon(settings, workers=1, companions=[start_dashboard])
    failed = start_daemon(daemon, "ingest", "; it ingests every GMAIL_POLL_SECONDS already.", watch=False, sweep=False)
    if failed is not None:
        return failed
    try:
        daemon.run_ingest()
    finally:
        daemon.stop()
    report = daemon.last_ingest
    assert report is not None  # run_ingest() sets it or raises
    if report.unsupported:
        print(
            f"h0 ingest: MAIL_BACKEND={settings.mail_backend} cannot read mail; use MAIL_BACKEND=gmail.",
            file=sys.stderr,
        )
        return EXIT_FAILED
    from h0.printable import printable

    print(f"{len(report.written)} new note(s), {report.duplicates} duplicate(s), {report.failed} failed")
    if report.history:
        print(report.history_line(settings.work_window_days))
    for path in report.written:
        print(f"  {printable(path)}")
    return EXIT_FAILED if report.failed else EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    """`h0 import FILE…`: .eml files, .mbox mailboxes or folders of them: recent mail nobody answered into
    Needs_Action/, the rest kept as history (docs/mail-in.md). Exit 4 if some could not be read, 130 when
    stopped by Ctrl-C (the same command resumes), 3 when another import of this vault is running."""
    from h0.cli.importing import run_import

    if not args.verbose:
        args.log_level = "WARNING"  # a line per note written only with -v; problems are in the summary
    settings = prepared(args, "import")
    if settings is None:
        return EXIT_FAILED
    return run_import(settings, [Path(p) for p in args.files], as_notes=args.as_notes)


def cmd_mcp(args: argparse.Namespace) -> int:
    import gc

    # The MCP SDK builds hundreds of pydantic models at import: collecting garbage in the
    # middle of that is wasted start-up time. Freeze what was imported so later collections
    # skip it.
    gc.disable()
    try:
        settings = settings_for(args)
        setup_logging_for(settings)
        # Claude Code's servers from .mcp.json: the demo as `h0 watch` has it
        seed_demo_vault(Path(settings.vault_path), settings)
        # The same factory builds the servers the tests run in process (h0.mcp.servers). The mail stack only
        # for the mail server: a vault server never loads it.
        from h0.mcp.servers import mail_service, vault_server
        from h0.mcp.vault_server import daemon_filing_from_env

        daemon_child = daemon_filing_from_env()
        if args.server == "vault":
            server = vault_server(settings, daemon_child=daemon_child)
        else:
            service = mail_service(settings, daemon_child=daemon_child)
    finally:
        gc.freeze()
        gc.enable()
    if args.server == "vault":
        server.serve("stdio")
        return EXIT_OK
    from h0.mcp.mail_server import main as serve_mail

    serve_mail(settings, service)
    return EXIT_OK
