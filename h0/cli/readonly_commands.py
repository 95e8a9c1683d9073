"""The commands that look and change nothing: `h0 status`, `h0 log`, `h0 doctor`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from h0.cli.common import EXIT_FAILED, EXIT_OK, h0_vault_exists, settings_for, vault_exists


def cmd_status(args: argparse.Namespace) -> int:
    from h0.report.collect import collect_status
    from h0.report.text import render_status

    settings = settings_for(args)
    if not h0_vault_exists(settings):
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
    from h0.report.logview import run_log

    settings = settings_for(args)
    if not vault_exists(settings):
        return EXIT_FAILED
    return run_log(Path(settings.vault_path), args, sys.stdout, sys.stderr)


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
