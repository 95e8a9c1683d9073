#!/usr/bin/env python3
"""The vault index (issue 21): build time, search beside ripgrep, freshness, memory, relatedness.

    .venv/bin/python scripts/bench/bench_index.py                      # 10k and 30k notes
    .venv/bin/python scripts/bench/bench_index.py --sizes 10000 30000 100000 --runs 5

For each vault size (scripts/bench/gen_vault.py, ~5 KB a note, cached in .cache/):
- build: a new index of the whole vault, in process (`VaultIndex.open`), and a reconcile of an
  unchanged one (what a server does at start);
- search: `h0 mcp vault` as a real stdio process driven by the stock `mcp` Python client, the first
  page (complete: checked against the notes' bytes) of the rare phrase planted in 3 notes and of a
  common word, p50 and p99 over the calls, beside `rg -i -F -l` over the same vault (median of runs),
  measured in turn so machine noise hits both alike;
- freshness: a note written behind the server's back, until search_notes finds it (the watcher);
- memory: the vault server's peak RSS (VmHWM) after building and searching;
- relatedness (once): recall@5 on tests/fixtures/relatedness.json, alone and inside the 10k vault.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from mcp import Client
from mcp.client.stdio import StdioServerParameters

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from gen_vault import RARE_MULTI, Params, ensure_vault

from h0.vault.disclosure import Disclosure, folder_keys
from h0.vault.index import VaultIndex

FIXTURES = REPO / "tests" / "fixtures"
COMMON = "invoice"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rg_ms(vault: Path, phrase: str, runs: int) -> float:
    rg = shutil.which("rg")
    if rg is None:
        sys.exit("ripgrep is needed for the comparison: apt-get install -y ripgrep")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([rg, "-i", "-F", "-l", "--", phrase, str(vault)], capture_output=True, check=False)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def build(vault: Path, state: Path) -> tuple[float, float, int]:
    shutil.rmtree(state, ignore_errors=True)
    started = time.perf_counter()
    index = VaultIndex.open(vault, state)
    built = time.perf_counter() - started
    started = time.perf_counter()
    VaultIndex.open(vault, state)
    return built, time.perf_counter() - started, index.count()


def server(vault: Path, state: Path) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env.update({"H0_ENV_FILE": "", "LOG_LEVEL": "WARNING", "VAULT_PATH": str(vault), "H0_STATE_DIR": str(state)})
    return StdioServerParameters(command=str(REPO / ".venv" / "bin" / "h0"), args=["mcp", "vault"], env=env)


def server_rss_mb() -> float:
    peak = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            if "mcp" in child.cmdline() and "vault" in child.cmdline():
                with open(f"/proc/{child.pid}/status") as status:
                    for line in status:
                        if line.startswith("VmHWM:"):
                            peak = max(peak, int(line.split()[1]) / 1024)
        except (psutil.Error, OSError):
            continue
    return peak


async def search_figures(vault: Path, state: Path, calls: int, rounds: int) -> dict[str, float]:
    figures: dict[str, list[float]] = {"rare_ms": [], "common_ms": [], "rg_rare_ms": [], "rg_common_ms": []}
    async with Client(server(vault, state)) as client:
        await client.list_tools()
        first = time.perf_counter()
        answer = await client.call_tool("search_notes", {"query": RARE_MULTI, "limit": 50})
        figures["first_ms"] = [(time.perf_counter() - first) * 1000]
        assert len(answer.structured_content["notes"]) == 3, answer.content[0].text[:300]
        for _ in range(rounds):
            for query, key in ((RARE_MULTI, "rare_ms"), (COMMON, "common_ms")):
                for _ in range(calls):
                    started = time.perf_counter()
                    result = await client.call_tool("search_notes", {"query": query, "limit": 50})
                    figures[key].append((time.perf_counter() - started) * 1000)
                    assert not result.is_error
            figures["rg_rare_ms"].append(rg_ms(vault, RARE_MULTI, 3))
            figures["rg_common_ms"].append(rg_ms(vault, COMMON, 3))
        # Freshness: a note written behind the server's back, until a search finds it.
        fresh = vault / "Drafts" / "bench-fresh.md"
        lag = []
        for i in range(10):
            word = f"freshmarker{i}x{int(time.time() * 1000)}"
            fresh.write_text(f"{word}\n")
            started = time.perf_counter()
            while True:
                result = await client.call_tool("search_notes", {"query": word})
                if result.structured_content["notes"]:
                    break
                if time.perf_counter() - started > 10:
                    raise RuntimeError("a written note was not found within 10 s")
            lag.append((time.perf_counter() - started) * 1000)
        fresh.unlink()
        figures["fresh_ms"] = lag
        if os.environ.get("BENCH_SERIES"):
            print("rare series:", " ".join(f"{x:.0f}" for x in figures["rare_ms"]))
            print("fresh series:", " ".join(f"{x:.0f}" for x in lag))
        rss = server_rss_mb()
    out = {
        "first_ms": figures["first_ms"][0],
        "rss_mb": rss,
        "fresh_p50_ms": statistics.median(figures["fresh_ms"]),
        "fresh_max_ms": max(figures["fresh_ms"]),
    }
    for key in ("rare_ms", "common_ms"):
        out[f"{key[:-3]}_p50_ms"] = statistics.median(figures[key])
        out[f"{key[:-3]}_p99_ms"] = pct(figures[key], 0.99)
    out["rg_rare_ms"] = statistics.median(figures["rg_rare_ms"])
    out["rg_common_ms"] = statistics.median(figures["rg_common_ms"])
    return out


def recall(vault: Path, state: Path, private_folders: str) -> float:
    spec = json.loads((FIXTURES / "relatedness.json").read_text(encoding="utf-8"))
    index = VaultIndex.open(vault, state, Disclosure(folder_keys(private_folders)))
    found = expected = 0
    for email in spec["emails"]:
        text = f"From: {email['from']}\nSubject: {email['subject']}\n\n{email['body']}"
        top = [r.path for r in index.related(text=text, limit=5)]
        found += len(set(email["expected"]) & set(top))
        expected += len(email["expected"])
    return found / expected


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000])
    ap.add_argument("--runs", type=int, default=3, help="search rounds (each: calls per query, then rg)")
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    print(f"h0 index benchmark — {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="h0-bench-index-") as tmp:
        for size in args.sizes:
            vault, manifest = ensure_vault(Params(notes=size, mb=size * 0.005))
            state = Path(tmp) / f"state-{size}"
            built, reconciled, count = build(vault, state)
            figures = asyncio.run(search_figures(vault, state, args.calls, args.runs))
            figures.update(build_s=built, reconcile_s=reconciled, notes=count, mb=manifest["bytes"] / 1e6)
            results[str(size)] = figures
            print(f"\n{count:,} notes ({figures['mb']:.0f} MB)")
            print(
                f"  build {built:.2f} s (goal ≤ {5 if size <= 10_000 else 60} s at 10k/100k); reconcile unchanged "
                f"{reconciled * 1000:.0f} ms"
            )
            for kind in ("rare", "common"):
                p50, p99, rg = figures[f"{kind}_p50_ms"], figures[f"{kind}_p99_ms"], figures[f"rg_{kind}_ms"]
                label = RARE_MULTI if kind == "rare" else COMMON
                print(
                    f"  search {label!r}: p50 {p50:.2f} ms, p99 {p99:.2f} ms; rg -i -F -l {rg:.1f} ms → "
                    f"{p50 / rg:.3f}× / {p99 / rg:.3f}× (goal ≤ 0.2×)"
                )
            print(f"  first search on a fresh server: {figures['first_ms']:.1f} ms")
            print(
                f"  a note written behind the server's back, found by search: p50 {figures['fresh_p50_ms']:.1f} ms, "
                f"max {figures['fresh_max_ms']:.1f} ms (goal ≤ 50 ms)"
            )
            print(f"  vault server peak RSS {figures['rss_mb']:.0f} MB (goal ≤ 150 MB at 100k)")
        alone = recall(
            Path(shutil.copytree(FIXTURES / "knowledge_vault", Path(tmp) / "kv")), Path(tmp) / "s-kv", "Journal"
        )
        big, _ = ensure_vault(Params())
        mixed = Path(tmp) / "mixed"
        shutil.copytree(big, mixed)
        shutil.copytree(FIXTURES / "knowledge_vault", mixed, dirs_exist_ok=True)
        inside = recall(mixed, Path(tmp) / "s-mixed", "Journal")
        print(
            f"\nrelatedness recall@5 (22 emails, 44 expected notes): {alone:.3f} on the fixture vault, "
            f"{inside:.3f} inside the 10,000-note vault (goal ≥ 0.9)"
        )
        results["recall"] = {"alone": alone, "inside_10k": inside}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
