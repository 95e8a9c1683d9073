#!/usr/bin/env python3
"""The pipeline's figures: approval latency, burst throughput, and the idle daemon's cost.

    .venv/bin/python scripts/bench/bench_pipeline.py              # all three, 3 rounds of latency
    .venv/bin/python scripts/bench/bench_pipeline.py --only latency --drafts 300
    .venv/bin/python scripts/bench/bench_pipeline.py --dashboard both --drafts 100 --burst-rounds 3

A real `h0 watch` process (with its two MCP server children) runs on a fresh temporary
vault against the fake Gmail of tests/fakes (a local HTTP server speaking Gmail's wire
format, TCP_NODELAY set), driven by the real google-api-python-client.

- latency: a draft is renamed from Drafts/ into Approved/ (what Obsidian does when you
  drag it); measured from the rename to the moment the send request reaches the fake.
  One draft at a time, ≥ 200 drafts per round. Goal: ≤ 20 ms median, ≤ 100 ms p99.
- throughput: 1,000 drafts renamed into Approved/ at once; time until all are in Done/.
- idle: the daemon and each server process over 60 s of doing nothing: CPU % and RSS.
  Goal: < 0.5 % CPU and < 100 MB RSS per process.

`--dashboard both` runs each measurement with H0_Dashboard.md and the daily briefing on and
off (DASHBOARD_ENABLED / BRIEFINGS_ENABLED), alternating within each round, and prints both
side by side. Goal: the dashboard costs at most 10 %.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from h0.pipeline.lock import daemon_holder
from tests.fakes.fake_gmail import FakeGmail

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import draft_text, fresh_vault, percentile, stage_drafts, time_one_send

H0 = str(Path(sys.executable).with_name("h0"))
CLK = os.sysconf("SC_CLK_TCK")
DASHBOARD_MODES = {
    "on": {"DASHBOARD_ENABLED": "true", "BRIEFINGS_ENABLED": "true"},
    "off": {"DASHBOARD_ENABLED": "false", "BRIEFINGS_ENABLED": "false"},
}


class Daemon:
    def __init__(self, vault: Path, gmail: FakeGmail, token: Path, workers: int = 4, mode: str = "on") -> None:
        env = dict(
            os.environ,
            **DASHBOARD_MODES[mode],
            H0_ENV_FILE="",
            VAULT_PATH=str(vault),
            MAIL_BACKEND="gmail",
            GMAIL_TOKEN_PATH=str(token),
            GMAIL_API_ENDPOINT=gmail.api_endpoint,
            GMAIL_TOKEN_URI=gmail.token_uri,
            RATE_LIMIT_PER_HOUR="100000",
            RATE_LIMIT_PER_DAY="100000",
            LOG_LEVEL="WARNING",
            LLM_PROVIDER="rules",
        )
        self.vault = vault
        self.log = open(vault.parent / "daemon.log", "ab")  # noqa: SIM115 - the daemon's output until stop() closes it
        self.proc = subprocess.Popen(
            [H0, "watch", "--workers", str(workers)], env=env, stdout=self.log, stderr=self.log
        )
        deadline = time.monotonic() + 60
        while (daemon_holder(vault) or {}).get("pid") != self.proc.pid:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the daemon did not start; see daemon.log")
            time.sleep(0.05)
        # Both MCP sessions are open once the servers are children of the daemon and answering.
        time.sleep(3.0)

    def pids(self) -> dict[str, int]:
        out = {"h0 watch": self.proc.pid}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                    cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid and "h0 mcp" in cmd:
                    out[cmd.split("h0 ", 1)[1].strip()] = int(entry.name)
        return out

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)
        self.log.close()


def check_mode(vault: Path, mode: str) -> None:
    """The dashboard was there exactly when it was meant to be: the comparison compares something."""
    if (vault / "H0_Dashboard.md").exists() != (mode == "on"):
        raise RuntimeError(f"dashboard {mode}, yet H0_Dashboard.md {'is missing' if mode == 'on' else 'exists'}")


def bench_latency(drafts: int, rounds: int, modes: list[str]) -> None:
    print(
        f"\nlatency: rename into Approved/ → send request at the fake Gmail ({drafts} drafts × {rounds} rounds"
        f"{', dashboard ' + ' vs '.join(modes) if len(modes) > 1 else ''})"
    )
    medians: dict[str, list[float]] = {m: [] for m in modes}
    p99s: dict[str, list[float]] = {m: [] for m in modes}
    for round_no in range(1, rounds + 1):
        order = modes if round_no % 2 else modes[::-1]  # alternate who goes first: drift hits both alike
        for mode in order:
            samples = latency_round(drafts, mode)
            med, p99 = statistics.median(samples), percentile(samples, 0.99)
            medians[mode].append(med)
            p99s[mode].append(p99)
            print(
                f"  round {round_no}, dashboard {mode:<3}: median {med:.1f} ms, p90 {percentile(samples, 0.9):.1f} ms, "
                f"p99 {p99:.1f} ms, max {max(samples):.1f} ms"
            )
    for mode in modes:
        print(
            f"  dashboard {mode:<3} — median of rounds: median {statistics.median(medians[mode]):.1f} ms (goal ≤ 20), "
            f"p99 {statistics.median(p99s[mode]):.1f} ms (goal ≤ 100)"
        )
    if len(modes) > 1:
        for name, values in (("median", medians), ("p99", p99s)):
            on, off = statistics.median(values["on"]), statistics.median(values["off"])
            print(f"  dashboard on/off, {name}: {on:.1f} / {off:.1f} ms = {100 * (on / off - 1):+.1f} % (goal ≤ +10 %)")


def latency_round(drafts: int, mode: str) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="h0-bench-") as tmp, FakeGmail() as gmail:
        vault = fresh_vault(Path(tmp))
        token = gmail.write_token(Path(tmp) / "token.json")
        stage_drafts(vault, {f"lat-{i:04}.md": draft_text(i) for i in range(drafts + 10)})
        daemon = Daemon(vault, gmail, token, mode=mode)
        samples = []
        try:
            for i in range(drafts + 10):
                name = f"lat-{i:04}.md"
                latency = time_one_send(vault, gmail, name)
                if i >= 10:  # the first few warm the sessions
                    samples.append(latency)
        finally:
            daemon.stop()
        check_mode(vault, mode)
    return samples


def bench_throughput(count: int, rounds: int, modes: list[str]) -> None:
    print(
        f"\nthroughput: {count} drafts renamed into Approved/ at once"
        f"{f' ({rounds} rounds, dashboard ' + ' vs '.join(modes) + ')' if len(modes) > 1 else ''}"
    )
    rates: dict[str, list[float]] = {m: [] for m in modes}
    for round_no in range(1, rounds + 1):
        for mode in modes if round_no % 2 else modes[::-1]:
            rates[mode].append(throughput_round(count, mode))
    if len(modes) > 1:
        on, off = statistics.median(rates["on"]), statistics.median(rates["off"])
        print(
            f"  dashboard on/off, median of rounds: {on:.0f} / {off:.0f} sends/s = {100 * (on / off - 1):+.1f} % "
            "(goal ≥ −10 %)"
        )


def throughput_round(count: int, mode: str) -> float:
    with tempfile.TemporaryDirectory(prefix="h0-bench-") as tmp, FakeGmail() as gmail:
        vault = fresh_vault(Path(tmp))
        token = gmail.write_token(Path(tmp) / "token.json")
        staging = vault / "Drafts"
        stage_drafts(vault, {f"tp-{i:04}.md": draft_text(i) for i in range(count)})
        daemon = Daemon(vault, gmail, token, mode=mode)
        try:
            start = time.perf_counter()
            for i in range(count):
                os.rename(staging / f"tp-{i:04}.md", vault / "Approved" / f"tp-{i:04}.md")
            renamed = time.perf_counter() - start
            done = 0
            while done < count:
                time.sleep(0.05)
                done = sum(1 for _ in (vault / "Done").glob("tp-*.md"))
                if time.perf_counter() - start > 600:
                    raise RuntimeError(f"only {done} of {count} in Done/ after 600 s")
            elapsed = time.perf_counter() - start
        finally:
            daemon.stop()
        check_mode(vault, mode)
        twice = len(gmail.sent) - len({s.message["Message-ID"] for s in gmail.sent})
        print(
            f"  dashboard {mode:<3}: all {count} in Done/ after {elapsed:.2f} s → {count / elapsed:.0f} sends/s "
            f"(renames took {renamed:.2f} s); sent {len(gmail.sent)}, duplicates {twice}"
        )
    return count / elapsed


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bench_idle(seconds: float, modes: list[str]) -> None:
    print(f"\nidle: the daemon and its servers over {seconds:.0f} s with nothing to do")
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="h0-bench-") as tmp, FakeGmail() as gmail:
            vault = fresh_vault(Path(tmp))
            token = gmail.write_token(Path(tmp) / "token.json")
            daemon = Daemon(vault, gmail, token, mode=mode)
            try:
                pids = daemon.pids()
                before = {name: cpu_seconds(pid) for name, pid in pids.items()}
                time.sleep(seconds)
                for name, pid in pids.items():
                    used = cpu_seconds(pid) - before[name]
                    print(
                        f"  dashboard {mode:<3} {name:<14} CPU {100 * used / seconds:.2f} % (goal < 0.5), "
                        f"RSS {rss_mb(pid):.0f} MB (goal < 100)"
                    )
            finally:
                daemon.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["latency", "throughput", "idle"])
    parser.add_argument("--drafts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument(
        "--dashboard",
        choices=["on", "off", "both"],
        default="on",
        help="H0_Dashboard.md and the briefing on, off, or both side by side (default: on)",
    )
    parser.add_argument("--burst-rounds", type=int, default=1, help="throughput rounds per dashboard mode")
    args = parser.parse_args()
    modes = ["on", "off"] if args.dashboard == "both" else [args.dashboard]
    print(f"h0 pipeline benchmark — {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if args.only in (None, "latency"):
        bench_latency(args.drafts, args.rounds, modes)
    if args.only in (None, "throughput"):
        bench_throughput(args.burst, args.burst_rounds, modes)
    if args.only in (None, "idle"):
        bench_idle(args.idle_seconds, modes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
