#!/usr/bin/env python3
"""What a hostile note costs H0 to refuse, beside what an ordinary note costs to read.

    .venv/bin/python scripts/bench/bench_hostile.py            # 5 runs, prints a table
    .venv/bin/python scripts/bench/bench_hostile.py --runs 9 --json figures.json

Each case is parsed the way every H0 reader parses a note (h0.vault.note.parse: split,
bounds check on the C event parser, fast scanner or full loader). A run times `repeats`
parses of each case back to back; the table shows the median of the runs' per-parse
times (and the slowest run's, for noise), and each case's ratio to the ordinary note.
Before the bounds existed, DEEP segfaulted the process and MERGE (nested `<<` merges)
took 74 s; the goal is a refused note costing milliseconds, not the daemon.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from h0.errors import H0Error
from h0.vault.note import parse

ORDINARY = (
    "---\ntype: email\nstatus: pending\nfrom: Dana <dana@example.com>\nto: [bob@example.com]\n"
    "subject: Lunch on Thursday?\nreceived: 2026-11-22T10:00:00Z\nlabels: [INBOX, UNREAD]\n---\n"
    + "Still on for Thursday? " * 100
    + "\n"
)


def _merges(levels: int) -> str:
    lines = ["a0: &a0 {x: 1, y: 2}"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} {{<<: [*a{i - 1}, *a{i - 1}], k{i}: {i}}}")
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


CASES: dict[str, str] = {
    "ordinary note (read)": ORDINARY,
    "DEEP: 60,000 nested [": "---\nto: " + "[" * 60_000 + "\n---\nHi\n",
    "DEEP: 60,000 nested {a:": "---\nx: " + "{a: " * 60_000 + "\n---\nHi\n",
    "WIDE: 30,000 keys": "---\n" + "".join(f"k{i}: {i}\n" for i in range(30_000)) + "---\nHi\n",
    "WIDE: 9,000 keys (under the size limit)": "---\n" + "".join(f"k{i}: {i}\n" for i in range(9_000)) + "---\nHi\n",
    "HUGE: 200 KB value": "---\nsubject: " + "x" * 200_000 + "\n---\nHi\n",
    "UNCLOSED: 10 MB note": "---\nsubject: x\n" + "y: z\n" * 2_000_000,
    "ALIAS BOMB: 10 levels x 9": "---\na: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
    + "---\nHi\n",
    "MERGE: 40 levels of <<": _merges(40),
    "BLANKS: 60 K spaces before ':'": "---\nkey" + " " * 60_000 + ": v\n---\nHi\n",
}


def _time(fn: Callable[[], object], repeats: int) -> float:
    started = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - started) / repeats


def _parse(data: bytes) -> Callable[[], str]:
    def run() -> str:
        try:
            parse(data, "bench.md")
            return "read"
        except H0Error as error:
            return error.code

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    encoded = {name: text.encode() for name, text in CASES.items()}
    outcomes = {name: _parse(data)() for name, data in encoded.items()}
    runs: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, data in encoded.items():  # interleaved: noise hits every case alike
            runs[name].append(_time(_parse(data), args.repeats))

    base = statistics.median(runs["ordinary note (read)"])
    print(f"python {platform.python_version()} on {platform.platform()}; {args.runs} runs x {args.repeats} parses")
    print(f"{'case':44} {'size':>9} {'outcome':>12} {'median':>10} {'worst run':>10} {'x ordinary':>11}")
    figures = {}
    for name, times in runs.items():
        median, worst = statistics.median(times), max(times)
        figures[name] = {"bytes": len(encoded[name]), "outcome": outcomes[name], "median_s": median, "worst_s": worst}
        print(
            f"{name:44} {len(encoded[name]):>9,} {outcomes[name]:>12} {median * 1e3:>8.3f}ms "
            f"{worst * 1e3:>8.3f}ms {median / base:>10.1f}x"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
