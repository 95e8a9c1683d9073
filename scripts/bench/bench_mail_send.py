#!/usr/bin/env python3
"""Benchmark sending against the local fake Gmail: persistent MCP session vs a process per call.

    .venv/bin/python scripts/bench/bench_mail_send.py                     # 300 sends, 25 spawns
    .venv/bin/python scripts/bench/bench_mail_send.py --sends 500 --spawns 40 --json out.json

Three ways to send an approved draft (a note moved into Approved/ before the clock starts),
all with `send_approved_draft` — the server re-reads the note, checks it, claims the send in
the state database, writes the fsynced pre-send record — through the real
google-api-python-client to the fake Gmail over loopback HTTP:
  (a) persistent — one `h0 mcp gmail` stdio process, one session, N sequential calls (what
      H0's pipeline does);
  (b) spawn per call — a new `h0 mcp gmail` process for every send: spawn, initialize,
      send, exit (what the old orchestrator did);
  (c) in-process — MailService.send_approved_draft called directly, no MCP at all (this
      process also runs the fake, so the two share one GIL: a rough floor, not an exact one).
"arrival" is from the call's start to the fake recording the message.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from h0.config import load_settings
from h0.mail import MailService
from h0.vault import Vault, init_vault
from tests.fakes.fake_gmail import FakeGmail

H0_BIN = str(Path(sys.executable).with_name("h0"))
H0_VARS = (
    "VAULT_PATH",
    "MAIL_BACKEND",
    "H0_STATE_DIR",
    "ALLOW_UNAPPROVED_SEND",
    "H0_DAEMON_CHILD",
    "GMAIL_TOKEN_PATH",
    "GMAIL_API_ENDPOINT",
    "GMAIL_TOKEN_URI",
    "RATE_LIMIT_PER_HOUR",
    "RATE_LIMIT_PER_DAY",
    "LOG_LEVEL",
)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "median": statistics.median(values),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "mean": statistics.fmean(values),
        "min": min(values),
        "max": max(values),
    }


class Setup:
    def __init__(self, root: Path, gmail: FakeGmail) -> None:
        self.vault = root / "vault"
        self.vault.mkdir()
        init_vault(self.vault)
        self.gmail = gmail
        self.token = gmail.write_token(root / "token.json")
        self.values = {
            "VAULT_PATH": str(self.vault),
            "MAIL_BACKEND": "gmail",
            "GMAIL_TOKEN_PATH": str(self.token),
            "GMAIL_API_ENDPOINT": gmail.api_endpoint,
            "GMAIL_TOKEN_URI": gmail.token_uri,
            "RATE_LIMIT_PER_HOUR": "1000000",
            "RATE_LIMIT_PER_DAY": "1000000",
            "LOG_LEVEL": "WARNING",
            "H0_STATE_DIR": str(root / "state"),
        }

    def params(self) -> StdioServerParameters:
        env = {k: v for k, v in os.environ.items() if k not in H0_VARS}
        env.update(self.values, H0_ENV_FILE="")
        return StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=env)

    def arguments(self, tag: str) -> dict[str, Any]:
        """An approved draft (written in Drafts/, a minute old, moved into Approved/): path and hash."""
        name = f"bench-{tag}.md"
        draft = self.vault / "Drafts" / name
        draft.write_text(
            f"---\nto: Bench Recipient <bench@example.com>\nsubject: Benchmark {tag}\n---\n"
            "A short reply, as H0 sends them.\n"
        )
        os.utime(draft, (time.time() - 60, time.time() - 60))
        os.rename(draft, self.vault / "Approved" / name)
        return {"path": f"Approved/{name}", "note_hash": Vault(self.vault).read_note(f"Approved/{name}").hash}

    def arrival_ms(self, started: float, count_before: int) -> float:
        # received_at is wall-clock (time.time) in the fake; started is too.
        return (self.gmail.sent[count_before].received_at - started) * 1000


async def persistent(setup: Setup, sends: int, warmup: int) -> tuple[list[float], list[float]]:
    totals, arrivals = [], []
    async with Client(setup.params()) as client:
        for i in range(warmup + sends):
            arguments = setup.arguments(f"p{i}")
            before, wall, started = len(setup.gmail.sent), time.time(), time.perf_counter()
            result = await client.call_tool("send_approved_draft", arguments)
            elapsed = (time.perf_counter() - started) * 1000
            if result.is_error:
                raise SystemExit(f"send failed: {result.content[0].text}")
            if i >= warmup:
                totals.append(elapsed)
                arrivals.append(setup.arrival_ms(wall, before))
    return totals, arrivals


async def spawn_per_call(setup: Setup, runs: int) -> tuple[list[float], list[float]]:
    totals, arrivals = [], []
    for i in range(runs):
        arguments = setup.arguments(f"s{i}")
        before, wall, started = len(setup.gmail.sent), time.time(), time.perf_counter()
        async with Client(setup.params()) as client:
            result = await client.call_tool("send_approved_draft", arguments)
        elapsed = (time.perf_counter() - started) * 1000
        if result.is_error:
            raise SystemExit(f"send failed: {result.content[0].text}")
        totals.append(elapsed)
        arrivals.append(setup.arrival_ms(wall, before))
    return totals, arrivals


def in_process(setup: Setup, sends: int, warmup: int) -> list[float]:
    settings = load_settings(
        vault_path=setup.vault,
        mail_backend="gmail",
        gmail_token_path=setup.token,
        gmail_api_endpoint=setup.gmail.api_endpoint,
        gmail_token_uri=setup.gmail.token_uri,
        rate_limit_per_hour=1_000_000,
        rate_limit_per_day=1_000_000,
        h0_state_dir=Path(setup.values["H0_STATE_DIR"]),
    )
    service = MailService(settings)
    totals = []
    for i in range(warmup + sends):
        arguments = setup.arguments(f"i{i}")
        started = time.perf_counter()
        service.send_approved_draft(**arguments)
        if i >= warmup:
            totals.append((time.perf_counter() - started) * 1000)
    service.close()
    return totals


def row(name: str, stats: dict[str, float]) -> str:
    return (
        f"{name:<40} {stats['n']:>5} {stats['median']:>9.2f} {stats['p90']:>9.2f} {stats['p99']:>9.2f} "
        f"{stats['mean']:>9.2f} {stats['min']:>9.2f} {stats['max']:>9.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sends", type=int, default=300, help="timed sends over the persistent session (≥ 200)")
    parser.add_argument("--spawns", type=int, default=25, help="timed spawn-per-call sends (≥ 20)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args()
    os.environ["H0_ENV_FILE"] = ""  # the in-process service must not read a developer's .env

    with tempfile.TemporaryDirectory(prefix="h0-bench-mail-") as tmp, FakeGmail() as gmail:
        setup = Setup(Path(tmp), gmail)
        session_totals, session_arrivals = asyncio.run(persistent(setup, args.sends, args.warmup))
        spawn_totals, spawn_arrivals = asyncio.run(spawn_per_call(setup, args.spawns))
        direct = in_process(setup, args.sends, args.warmup)
        sent = len(gmail.sent)

    results = {
        "persistent session: send_approved_draft": summary(session_totals),
        "persistent session: to arrival": summary(session_arrivals),
        "spawn per call: send_approved_draft": summary(spawn_totals),
        "spawn per call: to arrival": summary(spawn_arrivals),
        "in-process (no MCP; GIL shared w/ fake)": summary(direct),
    }
    print(
        f"send_approved_draft against the fake Gmail — {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs; {sent} messages received by the fake"
    )
    print(f"{'mode (milliseconds)':<40} {'n':>5} {'median':>9} {'p90':>9} {'p99':>9} {'mean':>9} {'min':>9} {'max':>9}")
    for name, stats in results.items():
        print(row(name, stats))
    ratio = (
        results["spawn per call: send_approved_draft"]["median"]
        / results["persistent session: send_approved_draft"]["median"]
    )
    print(f"spawn-per-call / persistent (median): {ratio:.0f}x")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "ratio_median": ratio}, indent=2))


if __name__ == "__main__":
    main()
