"""`h0 log [NOTE]`: the command's options, output and exit codes, over the list of sends
(`h0.report.sends`) and one note's trail (`h0.report.trail`), both read from `Logs/*.jsonl`
(`h0.report.logread`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from h0.report.logread import TimeRange, UsageError, make_window
from h0.report.sends import list_sends, render_sends
from h0.report.trail import trace_note
from h0.report.trailtext import record_json, render_trail
from h0.vault.layout import LOGS


def run_log(root: Path, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`h0 log [NOTE]` with parsed arguments: 0 found, 1 nothing found, 2 usage."""
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
