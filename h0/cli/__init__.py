"""`h0 …` — the command line. Each command is a thin shell over a library function.

Exit codes: 0 success, 1 the command failed (the message says why and what to do),
2 usage error, 3 another H0 daemon already holds the vault, 4 (`h0 sweep`) the pass ran but
some of its work failed — a send, a bounce, sending paused for credentials, a handler (see
h0.pipeline.pass_summary for what counts; a draft refused back to Drafts/ or a reached send cap
does not).

The commands live in h0.cli.run_commands (watch, sweep, ingest, import, mcp), h0.cli.readonly_commands (status, log,
doctor) and h0.cli.setup_commands (init, auth, service, demo); h0.cli.parser wires them to their names.
"""

from __future__ import annotations

from h0.cli.common import EXIT_FAILED, EXIT_LOCKED, EXIT_OK, EXIT_USAGE, EXIT_WORK_FAILED
from h0.cli.parser import build_parser, main

__all__ = ["EXIT_FAILED", "EXIT_LOCKED", "EXIT_OK", "EXIT_USAGE", "EXIT_WORK_FAILED", "build_parser", "main"]
