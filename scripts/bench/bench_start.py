#!/usr/bin/env python3
"""Cold start of H0's two MCP servers: spawn, initialize, first tool answered.

    .venv/bin/python scripts/bench/bench_start.py                  # 10 starts of each, medians
    .venv/bin/python scripts/bench/bench_start.py --starts 20 --json start.json

Each start is a fresh process, driven by the stock `mcp` Python client (`Client` over
`stdio_client`): the clock runs from spawn until `health_check` has answered. Contenders,
interleaved start by start so machine noise hits them alike:

  vault  `h0 mcp vault` on a fresh vault;
  mail   `h0 mcp gmail` with MAIL_BACKEND=outbox on the same vault (no network);
  bare   a one-tool server on the SDK's own `MCPServer`: what the SDK alone costs to start.

Also reported: CPU seconds (user + system) of each server process, less sensitive to a
busy machine than the wall clock. `bench_vault.py` runs the same measurement (row (e)).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(__file__).resolve().parent / ".cache"
SERVER_LOG = CACHE / "servers.log"
GOAL_START_S = 1.0

# A bare MCP server with one tool, to show what the SDK alone costs to start.
BARE_SERVER = """\
from mcp.server.mcpserver import MCPServer
server = MCPServer("bare")
@server.tool()
def health_check() -> dict:
    return {"status": "ok"}
server.run("stdio")
"""


def server_env(**extra: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    env.update({"H0_ENV_FILE": "", "LOG_LEVEL": "WARNING", **extra})
    return env


def python_of(h0: Path) -> Path:
    return h0.with_name("python")


def contenders(h0: Path, vault: Path, scratch: Path) -> dict[str, StdioServerParameters]:
    """name -> how to start it. The mail server gets a fresh vault and state folder of its own
    in `scratch`: its outbox writes there, never into `vault`."""
    bare = CACHE / "bare_server.py"
    CACHE.mkdir(parents=True, exist_ok=True)
    bare.write_text(BARE_SERVER)
    mail_vault = scratch / "mail-vault"
    if not mail_vault.is_dir():
        mail_vault.parent.mkdir(parents=True, exist_ok=True)
        fresh_vault(mail_vault)
    mail_env = server_env(MAIL_BACKEND="outbox", H0_STATE_DIR=str(scratch / "mail-state"))
    return {
        "vault": StdioServerParameters(command=str(h0), args=["mcp", "vault", "--vault", str(vault)], env=server_env()),
        "mail": StdioServerParameters(command=str(h0), args=["mcp", "gmail", "--vault", str(mail_vault)], env=mail_env),
        "bare": StdioServerParameters(command=str(python_of(h0)), args=[str(bare)], env=server_env()),
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _server_log() -> TextIO:
    SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
    return open(SERVER_LOG, "a")


async def start_once(params: StdioServerParameters) -> tuple[float, float, str | None]:
    """Seconds from spawn to health_check answered, CPU seconds of the server, and a problem (or None)."""
    cpu0 = _children_cpu()
    with _server_log() as log:
        t0 = time.perf_counter()
        async with Client(stdio_client(params, errlog=log), read_timeout_seconds=60) as client:
            result = await client.call_tool("health_check", {})
            elapsed = time.perf_counter() - t0
    # The server has exited (the client waits for it) and was reaped: its CPU time is counted.
    cpu = _children_cpu() - cpu0
    problem = None
    status = (result.structured_content or {}).get("status", "ok")  # the bare server's dict comes wrapped
    if result.is_error or status not in ("ok", "degraded"):
        text = result.content[0].text if result.content else ""
        problem = f"{params.args[:2]}: health_check said {text[:200]}"
    return elapsed, cpu, problem


@dataclass
class Starts:
    wall: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def medians(self) -> dict[str, float]:
        out = {f"start_{k}_s": statistics.median(v) for k, v in self.wall.items()}
        out.update({f"start_{k}_cpu_s": statistics.median(v) for k, v in self.cpu.items()})
        return out


async def measure(h0: Path, vault: Path, scratch: Path, starts: int, only: tuple[str, ...] = ()) -> Starts:
    """`starts` cold starts of each contender, interleaved (`vault` for the vault server)."""
    found = Starts()
    chosen = {k: v for k, v in contenders(h0, vault, scratch).items() if not only or k in only}
    if not python_of(h0).is_file():
        chosen.pop("bare", None)
    for _ in range(starts):
        for name, params in chosen.items():
            elapsed, cpu, problem = await start_once(params)
            found.wall.setdefault(name, []).append(elapsed)
            found.cpu.setdefault(name, []).append(cpu)
            if problem:
                found.problems.append(problem)
    return found


def find_h0(explicit: str | None) -> Path:
    for candidate in (explicit, REPO / ".venv" / "bin" / "h0"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    sys.exit("cannot find the h0 command: install the project (pip install -e .) or pass --h0")


def fresh_vault(vault: Path) -> Path:
    from h0.vault import init_vault

    vault.mkdir()
    init_vault(vault)
    return vault


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Cold start to first answer of h0 mcp vault / gmail (outbox).")
    ap.add_argument("--starts", type=int, default=10, help="starts of each server")
    ap.add_argument("--only", nargs="*", default=(), choices=("vault", "mail", "bare"))
    ap.add_argument("--h0", help="the h0 command (default: .venv/bin/h0 of this checkout)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    h0 = find_h0(args.h0)
    with tempfile.TemporaryDirectory(prefix="h0-bench-start-") as tmp:
        found = asyncio.run(measure(h0, fresh_vault(Path(tmp) / "vault"), Path(tmp), args.starts, tuple(args.only)))
    print(
        f"{'server':8} {'median s':>9} {'min s':>7} {'cpu s':>7}  goal <= {GOAL_START_S:g} s ({args.starts} starts each)"
    )
    for name, walls in found.wall.items():
        med = statistics.median(walls)
        verdict = "" if name == "bare" else ("PASS" if med <= GOAL_START_S else "MISS")
        cpu = statistics.median(found.cpu[name])
        print(f"{name:8} {med:9.3f} {min(walls):7.3f} {cpu:7.3f}  {verdict}")
    for problem in found.problems:
        print(f"problem: {problem}")
    if args.json:
        Path(args.json).write_text(json.dumps({"median": found.medians(), "starts": found.wall}, indent=2) + "\n")
    return 1 if found.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
