#!/usr/bin/env python3
"""How many places the daemon's send step visits, and how often it returns, for each answer of a send.

    .venv/bin/python scripts/bench/send_handler_path.py          # one line per answer, then the totals
    .venv/bin/python scripts/bench/send_handler_path.py -v       # and the places of each

What counts as a place and as a return: tests/pipeline/send_path_trace.py, which traces the step.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from loguru import logger

from h0.vault.layout import init_vault
from tests.pipeline.send_path_trace import trace_ways


def main() -> int:
    logger.remove()
    with tempfile.TemporaryDirectory(prefix="h0-path-") as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        init_vault(root)
        ways = trace_ways(root)
    union: list[str] = []
    for way in ways:
        union += [p for p in way.places if p not in union]
        print(
            f"{way.name:<34} {way.action:<9} places {len(way.places):>2} "
            f"(the step's own {way.own:>2}, calls out {len(way.places) - way.own:>2})  returns {way.returns:>2}"
        )
        if "-v" in sys.argv:
            print("    " + "\n    ".join(way.places))
    rooms = {p.split(":")[0] for p in union}
    print(f"\nmost places on one way: {max(len(w.places) for w in ways)}; most returns: {max(w.returns for w in ways)}")
    print(f"places on every way together: {len(union)} in {len(rooms)} modules")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
