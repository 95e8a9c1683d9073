"""The commands that look and change nothing: `h0 status`, `h0 log`, `h0 doctor`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from h0.cli.common import EXIT_FAILED, EXIT_OK, h0_vault_exists, settings_for, vault_exists
from h0.vault.layout import LOGS

if TYPE_CHECKING:
    from h0.report.logread import TimeRange


def cmd_status(args: argparse.Namespace) -> int:
    from h0.report.collect import collect_status
    from h0.report.text import render_status

    settings = settings_for(args)
    if not h0_vault_exists(settings):
        return EXIT_FAILED
    status = collect_status(settings)
    if args.json:
        print(json.dumps(status, indent=2, default=str))
    else:
        print(render_status(status))
    return EXIT_OK


def cmd_log(args: argparse.Namespace) -> int:
    """`h0 log`: what H0 sent; `h0 log NOTE`: one note's trail from ingest to filing."""
    settings = settings_for(args)
    if not vault_exists(settings):
        return EXIT_FAILED
    return run_log(Path(settings.vault_path), args, sys.stdout, sys.stderr)


def run_log(root: Path, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`h0 log [NOTE]` with parsed arguments: 0 found, 1 nothing found, 2 usage; over the list of sends
    (h0.report.sends) and one note's trail (h0.report.trail), both read from `Logs/*.jsonl` (h0.report.logread)."""
    from h0.report.logread import UsageError, make_window
    from h0.report.sends import list_sends, render_sends

    try:
        window = make_window(args.since, args.until, today=args.today, days=args.days)
        if args.limit < 0:
            raise UsageError("--limit takes 0 (all) or more")
        if args.note is not None and (args.to or args.note_filter):
            raise UsageError("--to and --note filter the list of sends; with NOTE, leave them out")
        if args.note is not None:
            return _run_trace(root, args, window, out, err)
    except UsageError as exc:
        print(f"h0 log: {exc}", file=err)
        return 2
    listing = list_sends(root, window, to=args.to, note=args.note_filter, limit=args.limit)
    _say_skipped(listing.skipped, err)
    if args.json:
        print(json.dumps([s.as_json() for s in listing.sends], indent=2), file=out)
        if len(listing.sends) < listing.total:
            print(f"h0 log: showing the newest {len(listing.sends)} of {listing.total} (--limit 0 shows all)", file=err)
    if not listing.total:
        filters = " matching the filters" if args.to or args.note_filter else ""
        print(f"h0 log: no message was sent{window.describe()}{filters} (nothing in {LOGS}/ says so).", file=err)
        return 1
    if not args.json:
        print(render_sends(listing, window), file=out)
    return 0


def _run_trace(root: Path, args: argparse.Namespace, window: TimeRange, out: TextIO, err: TextIO) -> int:
    from h0.report.trail import trace_note
    from h0.report.trailtext import record_json, render_trail

    trail = trace_note(root, args.note, window, everything=args.all)
    _say_skipped(trail.skipped, err)
    if not trail.events:
        print(
            f"h0 log: nothing in {LOGS}/{window.describe()} is about {trail.asked!r}; "
            "check the name with `h0 log` (the list of sends).",
            file=err,
        )
        return 1
    if args.json:
        print(json.dumps([record_json(r) for r in trail.events], indent=2, default=str), file=out)
    else:
        print(render_trail(trail), file=out)
    return 0


def _say_skipped(count: int, err: TextIO) -> None:
    if count:
        print(f"h0 log: skipped {count} malformed line(s) in {LOGS}/ (not JSON records).", file=err)


def cmd_doctor(args: argparse.Namespace) -> int:
    from h0.cli.doctor import FAIL, run_checks
    from h0.logsetup import setup_logging

    settings = settings_for(args, vault=False)  # an unset VAULT_PATH is one of its checks
    setup_logging("WARNING")
    checks = run_checks(settings, servers=not args.no_servers)
    for check in checks:
        print(check.line())
    failed = [c for c in checks if c.mark == FAIL]
    print(f"\n{len(failed)} problem(s) to fix." if failed else "\nAll good.")
    return EXIT_FAILED if failed else EXIT_OK
