#!/usr/bin/env python3
"""What the disclosure gate costs an MCP client of `h0 mcp vault` (issue 40), on the generated 10,000-note vault.

    .venv/bin/python scripts/bench/bench_gate.py                       # this checkout, 5 runs
    .venv/bin/python scripts/bench/bench_gate.py --trees /tmp/old .    # two source trees, taking turns

Each run starts a fresh `h0 mcp vault` (as Claude Code's: every answer judged by the gate) and the reference
filesystem server (@modelcontextprotocol/server-filesystem, installed with npm on first use, as
bench_vault.py does), lists, reads and searches through the same stock Python client (output validation
off, as bench_vault's main rows), and reports medians:

  (a) list_notes of Done/ (2,500 notes) beside the reference's list_directory and a plain directory listing
      in this process (os.scandir, sorted, as JSON) — goal: <= 3x the reference's answer;
  (b) read_note beside the reference's read_text_file, the same 300 notes, alternating call by call — goal:
      <= the reference's; and a plain file read + JSON encode in this process, for scale;
  (c) the server's resident memory (VmRSS) and peak (VmHWM) after (a), (b) and a search of a rare phrase and
      of a word most notes hold — goal: <= 100 MB. Each tree keeps its index in a state folder of its own,
      built once before the runs, so every run is a server starting on an existing index (the usual start);
      `--fresh` measures a first start instead (the index built in the server, each run).

`--trees`: each tree's server runs from that source tree (its `h0` package first on sys.path), so a
checkout of the commit before a change and this one are measured side by side, run by run.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vault import call, ensure_fs_server, fs_params, server_env, session
from gen_vault import RARE_MULTI, Params, ensure_vault

GOAL_LIST_RATIO = 3.0
GOAL_RSS_MB = 100.0
COMMON_WORD = "invoice"


def h0_params(tree: Path, vault: Path, state: Path) -> StdioServerParameters:
    """`h0 mcp vault` from `tree`'s h0 package, with its own state folder (a fresh index: built at start)."""
    code = f"import sys; sys.path.insert(0, {str(tree)!r}); from h0.cli import main; sys.exit(main())"
    env = {**server_env(), "H0_STATE_DIR": str(state)}
    return StdioServerParameters(
        command=sys.executable, args=["-c", code, "mcp", "vault", "--vault", str(vault)], env=env
    )


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process, in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            found[line.split(":")[0]] = int(line.split()[1]) / 1024
    return found.get("VmRSS", float("nan")), found.get("VmHWM", float("nan"))


def plain_listing(folder: Path) -> float:
    start = time.perf_counter()
    names = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".md"))
    json.dumps({"notes": [f"{folder.name}/{name}" for name in names]})
    return time.perf_counter() - start


def plain_read(path: Path) -> float:
    start = time.perf_counter()
    json.dumps({"text": path.read_text(encoding="utf-8")})
    return time.perf_counter() - start


async def one_run(tree: Path, vault: Path, manifest: dict[str, Any], args: argparse.Namespace, run: int) -> dict:
    figures: dict[str, float] = {}
    big = manifest["big_folder"]
    state = Path(args.state) / (
        f"{tree.name or 'tree'}-{run}" if args.fresh else hashlib.sha1(str(tree).encode()).hexdigest()[:12]
    )
    if args.fresh:
        shutil.rmtree(state, ignore_errors=True)  # a first start each time, even after an earlier --fresh run
    fs_entry = ensure_fs_server()
    async with session(h0_params(tree, vault, state)) as (hc, pid), session(fs_params(fs_entry, vault)) as (fc, _):
        await call(hc, "search_notes", {"query": RARE_MULTI})  # waits for the index's first build
        listed, reference, plain = [], [], []
        for _ in range(args.repeats):
            elapsed, result = await call(hc, "list_notes", {"directory": big, "limit": 10_000})
            listed.append(elapsed)
            if len(result.structured_content["notes"]) != manifest["big_folder_notes"]:
                raise RuntimeError(f"list_notes returned {len(result.structured_content['notes'])} notes")
            reference.append((await call(fc, "list_directory", {"path": str(vault / big)}))[0])
            plain.append(plain_listing(vault / big))
        figures["list_ms"] = statistics.median(listed) * 1000
        figures["list_ref_ms"] = statistics.median(reference) * 1000
        figures["list_plain_ms"] = statistics.median(plain) * 1000
        sample = manifest["sample_notes"][: args.reads]
        reads, ref_reads, plain_reads = [], [], []
        for index, rel in enumerate(sample):
            pair = [("h0", rel), ("fs", rel)] if index % 2 == 0 else [("fs", rel), ("h0", rel)]
            for who, path in pair:
                if who == "h0":
                    reads.append((await call(hc, "read_note", {"path": path}))[0])
                else:
                    ref_reads.append((await call(fc, "read_text_file", {"path": str(vault / path)}))[0])
            plain_reads.append(plain_read(vault / rel))
        figures["read_ms"] = statistics.median(reads) * 1000
        figures["read_ref_ms"] = statistics.median(ref_reads) * 1000
        figures["read_plain_ms"] = statistics.median(plain_reads) * 1000
        await call(hc, "search_notes", {"query": COMMON_WORD, "limit": 50})
        await call(hc, "related_notes", {"text": f"{COMMON_WORD} {RARE_MULTI} quarterly budget review", "limit": 10})
        figures["rss_mb"], figures["hwm_mb"] = memory_mb(pid) if pid else (float("nan"), float("nan"))
    return figures


ROWS = (
    ("(a) list_notes Done/ (2,500)", "list_ms", "ms"),
    ("    reference list_directory", "list_ref_ms", "ms"),
    ("    plain listing in process", "list_plain_ms", "ms"),
    ("(b) read_note median", "read_ms", "ms"),
    ("    reference read_text_file", "read_ref_ms", "ms"),
    ("    plain read + JSON in process", "read_plain_ms", "ms"),
    ("(c) RSS after searches", "rss_mb", "MB"),
    ("    peak RSS (VmHWM)", "hwm_mb", "MB"),
)


async def main_async(args: argparse.Namespace) -> int:
    vault, manifest = ensure_vault(Params())
    ensure_fs_server()
    trees = [Path(t).resolve() for t in (args.trees or [str(Path(__file__).resolve().parents[2])])]
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    if not args.fresh:
        for tree in trees:  # each tree's index, built once (not measured)
            print(f"building the index for {tree}", file=sys.stderr)
            await one_run(tree, vault, manifest, argparse.Namespace(**{**vars(args), "repeats": 1, "reads": 1}), -1)
    for run in range(args.runs):
        for tree in trees:
            print(f"run {run + 1}/{args.runs}: {tree}", file=sys.stderr)
            runs[tree].append(await one_run(tree, vault, manifest, args, run))
    print(f"vault: {manifest['notes']} notes ({vault}); medians of {args.runs} runs")
    print("figure".ljust(34) + "".join(f"{str(t)[-22:]:>24}" for t in trees))
    for label, key, unit in ROWS:
        cells = [statistics.median(r[key] for r in runs[tree]) for tree in trees]
        print(label.ljust(34) + "".join(f"{c:>21.2f} {unit:<2}" for c in cells))
    for tree in trees:
        med = {key: statistics.median(r[key] for r in runs[tree]) for _, key, _ in ROWS}
        verdicts = [
            (
                f"list {med['list_ms'] / med['list_ref_ms']:.2f}x reference (goal <= {GOAL_LIST_RATIO:g}x), "
                f"{med['list_ms'] / med['list_plain_ms']:.1f}x a plain listing"
            ),
            f"read {med['read_ms'] / med['read_ref_ms']:.2f}x reference (goal <= 1x)",
            f"RSS {med['rss_mb']:.0f} MB (goal <= {GOAL_RSS_MB:.0f})",
        ]
        print(f"{tree}: " + "; ".join(verdicts))
    if args.json:
        Path(args.json).write_text(json.dumps({str(t): r for t, r in runs.items()}, indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="What the disclosure gate costs an MCP client of h0 mcp vault.")
    ap.add_argument("--trees", nargs="*", default=[], help="source trees to compare (default: this checkout)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=15, help="list_notes calls per run")
    ap.add_argument("--reads", type=int, default=300, help="read_note calls per run")
    ap.add_argument("--state", default=str(Path(__file__).resolve().parent / ".cache" / "gate-state"))
    ap.add_argument("--fresh", action="store_true", help="a fresh index each run: the server builds it")
    ap.add_argument("--json", help="also write every run's figures to this file")
    return asyncio.run(main_async(ap.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
