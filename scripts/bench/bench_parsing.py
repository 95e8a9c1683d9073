#!/usr/bin/env python3
"""What reading strangers' text costs: frontmatter past the fast scanner, and address lists.

    .venv/bin/python scripts/bench/bench_parsing.py                      # this checkout
    .venv/bin/python scripts/bench/bench_parsing.py --trees /old /work/main --runs 5

Two public-API swaps of issue 23 sit on these paths: YAML events come from
`YAML(typ="safe").parse` (before: ruamel.yaml.clib's `_ruamel_yaml.CParser` directly), and
address lists are split by `email.utils.getaddresses` with encoded words held aside (before:
`email._header_value_parser`). With `--trees`, each run measures every tree in a fresh
process, the trees taking turns, so machine noise hits them alike; the table shows each
figure's median over the runs, in microseconds per call.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# Frontmatter the line scanner hands to the full loader (nested mappings, anchors, block text):
# check_bounds walks its YAML events, then ruamel loads it.
NESTED = """to: bob@example.com
subject: Lunch
meta:
  thread: {id: 18c2f, labels: [INBOX, IMPORTANT]}
  people:
    - name: Bob
      role: client
    - name: Ann
      role: colleague
defaults: &d {tone: warm, length: short}
reply: *d
notes: |
  first line
  second line
"""
ADDRESSES = [
    "Bob Smith <bob@example.com>",
    '"Smith, Bob" <bob@example.com>, Ann <ann@example.org>, carl@example.net',
    "=?utf-8?q?J=C3=B6rg_M=C3=BCller?= <joerg@example.de>, =?iso-8859-1?q?Andr=E9?= <andre@example.fr>",
    "=?utf-8?q?Hi=0D=0ABcc:_eve@evil.example?= <a@example.com>",
    "Team: a@example.com, b@example.com, c@example.com;",
]


def measure(loops: int) -> dict[str, float]:
    """Microseconds per call of each path, best of 5 batches (this process, this tree)."""
    from h0.mail.headers import clean_address_header
    from h0.vault.frontmatter import check_bounds, load

    def best(call, n: int) -> float:
        times = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n):
                call()
            times.append((time.perf_counter() - start) / n * 1e6)
        return min(times)

    return {
        "check_bounds (YAML events)": best(lambda: check_bounds(NESTED), loops),
        "load (events + load)": best(lambda: load(NESTED), loops),
        "clean_address_header (5 lists)": best(lambda: [clean_address_header(a) for a in ADDRESSES], loops),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="*", default=[], help="checkouts to compare (PYTHONPATH of each)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--loops", type=int, default=2000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.loops)))
        return 0
    trees = args.trees or [os.getcwd()]
    figures: dict[str, list[dict[str, float]]] = {tree: [] for tree in trees}
    for _ in range(args.runs):
        for tree in trees:
            env = {**os.environ, "PYTHONPATH": tree}
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--loops", str(args.loops)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                cwd=tree,
            ).stdout
            figures[tree].append(json.loads(out))
    names = list(figures[trees[0]][0])
    width = max(len(n) for n in names)
    print(
        f"{'µs per call, median of ' + str(args.runs) + ' runs':<{width}}  "
        + "  ".join(f"{t[-18:]:>18}" for t in trees)
    )
    for name in names:
        cells = [statistics.median(run[name] for run in figures[tree]) for tree in trees]
        ratio = f"   ×{cells[-1] / cells[0]:.2f}" if len(cells) > 1 else ""
        print(f"{name:<{width}}  " + "  ".join(f"{c:>18.1f}" for c in cells) + ratio)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
