#!/usr/bin/env python3
"""Benchmark the vault MCP server (`h0 mcp vault`) on a generated 10,000-note vault.

    .venv/bin/python scripts/bench/bench_vault.py            # 3 runs, prints a table
    .venv/bin/python scripts/bench/bench_vault.py --runs 5 --json results.json

What it measures (each run; the table shows every run and the median of the runs):
  (a) read_note latency over one persistent stdio session, 500 notes, side by side with
      the MCP reference filesystem server's read_text_file on the same files — the two
      calls alternate, note by note, so machine noise hits both alike;
  (b) list_notes on the 2,500-note Done/ folder vs the reference server's list_directory,
      as the stock Python client sees them (with and without its output validation) and as
      the stock TypeScript client sees them (`mcp_ts_client.mjs`: @modelcontextprotocol/sdk's
      Client over StdioClientTransport, which validates with Ajv);
  (c) search_notes for a rare phrase: the first call on a fresh server (and it must
      return every planted note) and the median of repeats, vs `rg -i -F -l` on the vault
      (whole process timed, median of repeats; -l because search_notes, too, reports
      each note once, at its first match);
  (d) list_notes with a frontmatter filter (status:pending, recursive, whole vault):
      the first call on a fresh server (cold) and the median of repeats (warm);
  (e) server start to first answer: spawn `h0 mcp vault` (and `h0 mcp gmail` with
      MAIL_BACKEND=outbox, and a bare one-tool SDK server), initialize, health_check
      (bench_start.py; also runs on its own);
  (f) peak RSS (VmHWM) of the server process that served (a)–(d).

Both servers are driven by the same `mcp` Python client, so client overhead (including
its validation of structured content against the output schema) is identical in kind.
The page cache is warm for every contender: "cold" means a fresh server process, not a
cold disk. The reference server is installed with npm into scripts/bench/.cache/node on
the first run; ripgrep comes from Debian (`apt-get install ripgrep`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_start import measure as measure_starts
from gen_vault import ABSENT, CACHE, RARE_MULTI, Params, ensure_vault

REPO = Path(__file__).resolve().parents[2]
NODE_DIR = CACHE / "node"
FS_PACKAGE = "@modelcontextprotocol/server-filesystem"
TS_SDK = "@modelcontextprotocol/sdk"  # the stock TypeScript client, for mcp_ts_client.mjs
TS_DRIVER = Path(__file__).resolve().parent / "mcp_ts_client.mjs"
NPM_TIMEOUT = 300
SERVER_LOG = CACHE / "servers.log"  # the servers' stderr (the reference server prints a banner there)

GOAL_FILTER_WARM_MS = 200.0
GOAL_LIST_RATIO = 3.0
GOAL_START_S = 1.0
GOAL_RSS_MB = 100.0
GOAL_SEARCH_RATIO = 2.0


# --------------------------------------------------------------------------- tools


def ensure_fs_server() -> Path:
    """The reference filesystem server's entry script, installed with npm on first use (with the
    TypeScript SDK, whose client mcp_ts_client.mjs drives)."""
    pkg = NODE_DIR / "node_modules" / FS_PACKAGE
    missing = [p for p in (FS_PACKAGE, TS_SDK) if not (NODE_DIR / "node_modules" / p / "package.json").is_file()]
    if missing:
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("npm is needed for the reference server (apt-get install nodejs npm)")
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        print(f"installing {', '.join(missing)} into {NODE_DIR} …", file=sys.stderr)
        subprocess.run(
            [npm, "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", "--loglevel=error", *missing],
            check=True,
            timeout=NPM_TIMEOUT,
            stdout=subprocess.DEVNULL,
        )
    meta = json.loads((pkg / "package.json").read_text())
    bin_entry = meta["bin"] if isinstance(meta["bin"], str) else next(iter(meta["bin"].values()))
    return (pkg / bin_entry).resolve()


def fs_version(package: str = FS_PACKAGE) -> str:
    try:
        return json.loads((NODE_DIR / "node_modules" / package / "package.json").read_text())["version"]
    except OSError:
        return "?"


def ts_client_calls(servers: dict[str, StdioServerParameters], calls: list[dict[str, Any]], rounds: int) -> dict:
    """Run `calls` (each {label, server, tool, arguments}) `rounds` times through the stock
    TypeScript client (mcp_ts_client.mjs); {"ms": {label: [...]}, "first": {label: answer}}."""
    driver = NODE_DIR / TS_DRIVER.name  # beside node_modules, where its imports resolve
    shutil.copyfile(TS_DRIVER, driver)
    plan = {
        "servers": {name: {"command": p.command, "args": p.args, "env": p.env} for name, p in servers.items()},
        "calls": calls,
        "rounds": rounds,
    }
    done = subprocess.run(
        [shutil.which("node") or "node", str(driver), json.dumps(plan)],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{driver.name} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def find_h0(explicit: str | None) -> Path:
    for candidate in (
        explicit,
        REPO / ".venv" / "bin" / "h0",
        Path(sys.executable).with_name("h0"),
        shutil.which("h0"),
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    sys.exit("cannot find the h0 command: install the project (pip install -e .) or pass --h0")


def server_env() -> dict[str, str]:
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    env.update({"H0_ENV_FILE": "", "LOG_LEVEL": "WARNING"})
    return env


def h0_params(h0: Path, vault: Path) -> StdioServerParameters:
    return StdioServerParameters(command=str(h0), args=["mcp", "vault", "--vault", str(vault)], env=server_env())


def fs_params(entry: Path, vault: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=shutil.which("node") or "node", args=[str(entry), str(vault)], env=server_env()
    )


def _children() -> dict[int, str]:
    """Child processes of this process: pid -> command line."""
    me = os.getpid()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == me:
                found[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
    return found


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def connect(params: StdioServerParameters, *, validate: bool = False, timeout: float = 120) -> Client:
    """A client for a stdio server, exactly as `Client(params)` builds it, with the server's
    stderr sent to SERVER_LOG. Unless `validate`, the client does not re-check structured
    content against the output schema (see README: that check is a client cost, in Python's
    jsonschema, proportional to the size of the result, and would dominate list timings)."""
    SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
    log = open(SERVER_LOG, "a")  # noqa: SIM115 - lives as long as the process it is handed to
    client = Client(stdio_client(params, errlog=log), read_timeout_seconds=timeout)
    client._bench_validate = validate  # type: ignore[attr-defined]
    return client


async def _maybe_validate(client: Client) -> None:
    session = client.session
    original = session.validate_tool_result

    async def validate(name: str, result: Any) -> None:
        if client._bench_validate:  # type: ignore[attr-defined]
            await original(name, result)

    session.validate_tool_result = validate  # type: ignore[method-assign]


@asynccontextmanager
async def session(params: StdioServerParameters, *, validate: bool = False):
    """An initialized client session whose tools are listed (as real clients do), and the server's pid."""
    before = set(_children())
    async with connect(params, validate=validate) as client:
        new = [pid for pid, cmd in _children().items() if pid not in before and params.args[0] in cmd]
        await client.list_tools()
        await _maybe_validate(client)
        yield client, (new[0] if new else None)


async def call(client: Client, name: str, args: dict[str, Any], *, validate: bool = False) -> tuple[float, Any]:
    client._bench_validate = validate  # type: ignore[attr-defined]
    start = time.perf_counter()
    result = await client.call_tool(name, args)
    elapsed = time.perf_counter() - start
    if result.is_error:
        text = result.content[0].text if result.content else ""
        raise RuntimeError(f"{name}({args}) failed: {text[:300]}")
    return elapsed, result


def ms(seconds: float) -> float:
    return seconds * 1000.0


def median(values: list[float]) -> float:
    return statistics.median(values)


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


# --------------------------------------------------------------------------- one run


@dataclass
class Run:
    figures: dict[str, float] = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)


async def one_run(h0: Path, fs_entry: Path, vault: Path, manifest: dict, args: argparse.Namespace) -> Run:
    run = Run()
    f = run.figures
    expected = manifest["rare_phrases"][RARE_MULTI]

    # (e) start to first answer: both H0 servers and a bare SDK server, interleaved.
    with tempfile.TemporaryDirectory(prefix="h0-bench-start-") as scratch:
        starts = await measure_starts(h0, vault, Path(scratch), args.starts)
    run.checks.extend(starts.problems)
    f["start_s"] = median(starts.wall["vault"])
    f["start_mail_s"] = median(starts.wall["mail"])
    f["start_bare_s"] = median(starts.wall["bare"]) if "bare" in starts.wall else float("nan")

    # ripgrep, same phrase, same vault.
    rg = shutil.which("rg")
    rg_times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        # Blocking on purpose: rg's whole process is what is timed, with nothing else running.
        proc = subprocess.run(  # noqa: ASYNC221
            [rg, "-i", "-F", "-l", RARE_MULTI, str(vault)], capture_output=True, text=True, check=False
        )
        rg_times.append(time.perf_counter() - t0)
    rg_files = sorted(Path(line).relative_to(vault).as_posix() for line in proc.stdout.splitlines())
    if rg_files != expected:
        run.checks.append(f"rg found {rg_files}, expected {expected}")
    f["rg_ms"] = ms(median(rg_times))

    async with session(h0_params(h0, vault)) as (hc, h0_pid), session(fs_params(fs_entry, vault)) as (fc, fs_pid):
        # (c) search: the very first tool call on this fresh server.
        elapsed, result = await call(hc, "search_notes", {"query": RARE_MULTI})
        found = sorted(n["path"] for n in result.structured_content["notes"])
        if found != expected:
            run.checks.append(f"first search_notes found {found}, expected {expected}")
        f["search_first_ms"] = ms(elapsed)
        times = [ms((await call(hc, "search_notes", {"query": RARE_MULTI}))[0]) for _ in range(args.repeats)]
        f["search_warm_ms"] = median(times)
        times = [ms((await call(hc, "search_notes", {"query": ABSENT}))[0]) for _ in range(args.repeats)]
        f["search_absent_ms"] = median(times)

        # (d) filtered listing, whole vault: cold (first on this server), then warm.
        flt = {"directory": "", "filter": manifest["filter"], "recursive": True, "limit": 10_000}
        elapsed, result = await call(hc, "list_notes", flt)
        if result.structured_content["total"] != manifest["filter_matches"]:
            run.checks.append(f"filter total {result.structured_content['total']} != {manifest['filter_matches']}")
        f["filter_cold_ms"] = ms(elapsed)
        f["filter_warm_ms"] = median([ms((await call(hc, "list_notes", flt))[0]) for _ in range(args.repeats * 2)])
        f["filter_warm_val_ms"] = median(
            [ms((await call(hc, "list_notes", flt, validate=True))[0]) for _ in range(args.repeats)]
        )

        # (b) list the 2,500-note folder, alternating the two servers.
        big = manifest["big_folder"]
        h_list, f_list = [], []
        for i in range(args.repeats * 4):
            elapsed, result = await call(hc, "list_notes", {"directory": big, "limit": 10_000})
            h_list.append(ms(elapsed))
            if i == 0 and len(result.structured_content["notes"]) != manifest["big_folder_notes"]:
                run.checks.append(f"list_notes {big} returned {len(result.structured_content['notes'])} notes")
            elapsed, result = await call(fc, "list_directory", {"path": str(vault / big)})
            f_list.append(ms(elapsed))
            if i == 0 and result.content[0].text.count("[FILE]") != manifest["big_folder_notes"]:
                run.checks.append(f"list_directory {big} returned {result.content[0].text.count('[FILE]')} files")
        f["list_h0_ms"], f["list_fs_ms"] = median(h_list), median(f_list)
        h_list, f_list = [], []
        for i in range(args.repeats):
            h_list.append(ms((await call(hc, "list_notes", {"directory": big, "limit": 10_000}, validate=True))[0]))
            f_list.append(ms((await call(fc, "list_directory", {"path": str(vault / big)}, validate=True))[0]))
        f["list_h0_val_ms"], f["list_fs_val_ms"] = median(h_list), median(f_list)

        # (a) reads: the same notes, alternating servers note by note (after a short warm-up).
        sample = manifest["sample_notes"][: args.reads]
        for rel in sample[:20]:
            await call(hc, "read_note", {"path": rel})
            await call(fc, "read_text_file", {"path": str(vault / rel)})
        h_read, f_read = [], []
        for index, rel in enumerate(sample):
            order = ((hc, "h0"), (fc, "fs")) if index % 2 == 0 else ((fc, "fs"), (hc, "h0"))
            for client, who in order:
                if who == "h0":
                    elapsed, result = await call(client, "read_note", {"path": rel})
                    h_read.append(ms(elapsed))
                    body = result.structured_content["body"]
                else:
                    elapsed, result = await call(client, "read_text_file", {"path": str(vault / rel)})
                    f_read.append(ms(elapsed))
                    text = result.content[0].text
            if index < 5 and not text.endswith(body):
                run.checks.append(f"read_note {rel}: body differs from the file's tail")
        f["read_h0_med_ms"], f["read_fs_med_ms"] = median(h_read), median(f_read)
        f["read_h0_p99_ms"], f["read_fs_p99_ms"] = p99(h_read), p99(f_read)

        # (f) peak memory of both server processes after all of the above.
        f["rss_h0_mb"] = peak_rss_mb(h0_pid) if h0_pid else float("nan")
        f["rss_fs_mb"] = peak_rss_mb(fs_pid) if fs_pid else float("nan")
        run.protocols = {"h0": str(hc.protocol_version), "fs": str(fc.protocol_version)}  # type: ignore[attr-defined]

    # (b) the same listing through the stock TypeScript client, alternating the servers.
    big = manifest["big_folder"]
    ts = ts_client_calls(
        {"h0": h0_params(h0, vault), "fs": fs_params(fs_entry, vault)},
        [
            {"label": "h0", "server": "h0", "tool": "list_notes", "arguments": {"directory": big, "limit": 10_000}},
            {"label": "fs", "server": "fs", "tool": "list_directory", "arguments": {"path": str(vault / big)}},
        ],
        args.repeats * 4,
    )
    f["list_h0_ts_ms"], f["list_fs_ts_ms"] = median(ts["ms"]["h0"]), median(ts["ms"]["fs"])
    if len(ts["first"]["h0"]["notes"]) != manifest["big_folder_notes"]:
        run.checks.append(f"TS client: list_notes {big} returned {len(ts['first']['h0']['notes'])} notes")
    if json.dumps(ts["first"]["fs"]).count("[FILE]") != manifest["big_folder_notes"]:
        run.checks.append(f"TS client: list_directory {big} did not return {manifest['big_folder_notes']} files")
    return run


# --------------------------------------------------------------------------- report

ROWS: list[tuple[str, str, str]] = [
    # (label, figure key, unit)
    ("(a) read_note median", "read_h0_med_ms", "ms"),
    ("    reference read_text_file median", "read_fs_med_ms", "ms"),
    ("(a) read_note p99", "read_h0_p99_ms", "ms"),
    ("    reference read_text_file p99", "read_fs_p99_ms", "ms"),
    ("(b) list_notes Done/ (2,500)", "list_h0_ms", "ms"),
    ("    reference list_directory Done/", "list_fs_ms", "ms"),
    ("(b) same, client validates output", "list_h0_val_ms", "ms"),
    ("    reference, client validates", "list_fs_val_ms", "ms"),
    ("(b) same, TypeScript client (validates)", "list_h0_ts_ms", "ms"),
    ("    reference, TypeScript client", "list_fs_ts_ms", "ms"),
    ("(c) search_notes first call", "search_first_ms", "ms"),
    ("(c) search_notes warm median", "search_warm_ms", "ms"),
    ("    search_notes, phrase absent", "search_absent_ms", "ms"),
    ("    rg -i -F -l (whole process)", "rg_ms", "ms"),
    ("(d) list_notes status:pending cold", "filter_cold_ms", "ms"),
    ("(d) list_notes status:pending warm", "filter_warm_ms", "ms"),
    ("(d) same, client validates output", "filter_warm_val_ms", "ms"),
    ("(e) start to first answer, vault", "start_s", "s"),
    ("(e) same, mail server (outbox)", "start_mail_s", "s"),
    ("    bare mcp SDK server, same", "start_bare_s", "s"),
    ("(f) peak RSS h0 server", "rss_h0_mb", "MB"),
    ("    peak RSS reference server", "rss_fs_mb", "MB"),
]


def goals(m: dict[str, float]) -> dict[str, tuple[str, bool | None]]:
    """Goal text and verdict for each figure key (None: reported for comparison only)."""
    rg2 = GOAL_SEARCH_RATIO * m["rg_ms"]
    return {
        "read_h0_med_ms": (
            f"<= ref ({m['read_h0_med_ms'] / m['read_fs_med_ms']:.2f}x)",
            m["read_h0_med_ms"] <= m["read_fs_med_ms"],
        ),
        "read_h0_p99_ms": (f"({m['read_h0_p99_ms'] / m['read_fs_p99_ms']:.2f}x ref)", None),
        "list_h0_ms": (f"({m['list_h0_ms'] / m['list_fs_ms']:.2f}x ref)", None),
        "list_h0_val_ms": _ratio_goal(m["list_h0_val_ms"], m["list_fs_val_ms"], GOAL_LIST_RATIO),
        "list_h0_ts_ms": _ratio_goal(m["list_h0_ts_ms"], m["list_fs_ts_ms"], GOAL_LIST_RATIO),
        "search_first_ms": (f"<= 2x rg ({m['search_first_ms'] / m['rg_ms']:.2f}x)", m["search_first_ms"] <= rg2),
        "search_warm_ms": (f"<= 2x rg ({m['search_warm_ms'] / m['rg_ms']:.2f}x)", m["search_warm_ms"] <= rg2),
        "search_absent_ms": (f"({m['search_absent_ms'] / m['rg_ms']:.2f}x rg)", None),
        "filter_warm_ms": (f"<= {GOAL_FILTER_WARM_MS:.0f} ms", m["filter_warm_ms"] <= GOAL_FILTER_WARM_MS),
        "start_s": (f"<= {GOAL_START_S:g} s", m["start_s"] <= GOAL_START_S),
        "start_mail_s": (f"<= {GOAL_START_S:g} s", m["start_mail_s"] <= GOAL_START_S),
        "rss_h0_mb": (f"<= {GOAL_RSS_MB:.0f} MB", m["rss_h0_mb"] <= GOAL_RSS_MB),
    }


def _ratio_goal(h0: float, ref: float, most: float) -> tuple[str, bool]:
    return f"<= {most:g}x ref ({h0 / ref:.2f}x)", h0 <= most * ref


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.3f}"
    if unit == "MB":
        return f"{value:.1f}"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def report(runs: list[Run], manifest: dict, vault: Path, fs_ver: str) -> tuple[str, dict[str, float], bool]:
    keys = runs[0].figures.keys()
    med = {k: median([r.figures[k] for r in runs]) for k in keys}
    verdicts = goals(med)
    head = ["figure", *[f"run {i + 1}" for i in range(len(runs))], "median", "unit", "goal", "verdict"]
    body = []
    for label, key, unit in ROWS:
        goal, ok = verdicts.get(key, ("", None))
        verdict = "" if ok is None else ("PASS" if ok else "MISS")
        body.append([label, *[fmt(r.figures[key], unit) for r in runs], fmt(med[key], unit), unit, goal, verdict])
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [
        f"vault: {manifest['notes']} notes, {manifest['bytes'] / 1e6:.1f} MB ({vault})",
        (
            f"reference: {FS_PACKAGE} {fs_ver} on node {_node_version()}; TypeScript client {TS_SDK} "
            f"{fs_version(TS_SDK)}; {_rg_version()}; python {platform.python_version()}; {os.cpu_count()} cores"
        ),
        "",
        "  ".join(h.ljust(w) for h, w in zip(head, widths)),
        "  ".join("-" * w for w in widths),
    ]
    for row in body:
        lines.append(
            "  ".join(c.rjust(w) if 0 < i < len(row) - 3 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
        )
    problems = [c for r in runs for c in r.checks]
    all_pass = all(ok for _, ok in verdicts.values() if ok is not None) and not problems
    lines.append("")
    lines.append(
        "Client-side output validation is off except in the rows saying so (the Python client's jsonschema "
        "check grows with the result). 'cold' = fresh server process; the page cache is warm for all."
    )
    protocols = getattr(runs[0], "protocols", {})
    if protocols:
        lines.append(f"protocol versions negotiated: h0 {protocols.get('h0')}, reference {protocols.get('fs')}")
    lines.append("answer checks: " + ("all answers correct and complete" if not problems else "; ".join(problems)))
    return "\n".join(lines), med, all_pass


def _node_version() -> str:
    try:
        return subprocess.run(
            ["node", "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except OSError:
        return "?"


def _rg_version() -> str:
    try:
        done = subprocess.run(["rg", "--version"], capture_output=True, text=True, timeout=10, check=False)
        return done.stdout.split("\n")[0]
    except OSError:
        return "rg ?"


async def main_async(args: argparse.Namespace) -> int:
    vault, manifest = ensure_vault(Params(args.notes, args.mb, args.seed, args.done))
    fs_entry = ensure_fs_server()
    h0 = find_h0(args.h0)
    if shutil.which("rg") is None:
        sys.exit("ripgrep is needed for the comparison: apt-get install -y ripgrep")
    runs = []
    for index in range(args.runs):
        print(f"run {index + 1}/{args.runs} …", file=sys.stderr)
        runs.append(await one_run(h0, fs_entry, vault, manifest, args))
    table, med, all_pass = report(runs, manifest, vault, fs_version())
    print(table)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"median": med, "runs": [r.figures for r in runs], "checks": [c for r in runs for c in r.checks]},
                indent=2,
            )
            + "\n"
        )
    return 0 if all_pass or not args.strict else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark h0 mcp vault against the reference filesystem server and rg.")
    ap.add_argument("--runs", type=int, default=3, help="independent runs; the table shows each and their median")
    ap.add_argument("--reads", type=int, default=500, help="read_note calls per run (each server)")
    ap.add_argument("--repeats", type=int, default=5, help="repeats for search, rg and listings")
    ap.add_argument("--starts", type=int, default=5, help="server starts per run")
    ap.add_argument("--notes", type=int, default=Params.notes)
    ap.add_argument("--mb", type=float, default=Params.mb)
    ap.add_argument("--seed", type=int, default=Params.seed)
    ap.add_argument("--done", type=int, default=Params.done)
    ap.add_argument("--h0", help="the h0 command (default: .venv/bin/h0 of this checkout)")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    return asyncio.run(main_async(ap.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
