#!/usr/bin/env python3
"""Benchmark IMAP ingest: message delivered to the IMAP server → note in Needs_Action/.

    .venv/bin/python scripts/bench/bench_imap.py                      # 200 messages, IDLE then polling
    .venv/bin/python scripts/bench/bench_imap.py --messages 50 --poll 10 --json out.json

A real pymap server (maildir, loopback) and H0's real daemon: `Daemon(ingest=True)` with its
`h0 mcp gmail` child on MAIL_BACKEND=imap, the ingest job run by the daemon's worker. The clock
starts when the APPEND to INBOX returns and stops when EMAIL_<id>.md exists (the folder is
polled every 2 ms; the vault watcher and sweep are off, so no triage moves the notes away).
Messages arrive one at a time with a random 0.2–0.8 s gap.

  idle    — h0.mail.providers.imap_idle.IdleWatcher wakes the daemon's request_ingest (GMAIL_POLL_SECONDS
            set to an hour, so only IDLE triggers);
  polling — no IDLE: the daemon's periodic ingest every --poll seconds (default 10, the default
            GMAIL_POLL_SECONDS).
Then the idle cost of an open IDLE connection: CPU and RSS of a child process holding one for
--idle-seconds, against the same child without it.

Note: pymap's maildir backend looks for new mail once a second while a client IDLEs, so up to
1 s of each IDLE figure is the server's (Dovecot uses inotify and answers at once).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from h0.config import load_settings
from h0.pipeline.daemon import Daemon
from h0.report.dashwriter import start_dashboard
from h0.vault import init_vault
from tests.fakes.imap_server import PymapServer

PROBE = """
import sys, time, threading
sys.path.insert(0, {repo!r})
from h0.config import load_settings
from h0.mail.providers.imap_idle import IdleWatcher
settings = load_settings(**{settings!r})
if {idle!r}:
    watcher = IdleWatcher(settings, lambda: None).start()
    watcher.idling.wait(20)
print("ready", flush=True)
time.sleep({seconds!r})
"""


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": statistics.median(values),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "mean": statistics.fmean(values),
        "max": max(values),
    }


def raw(i: int) -> bytes:
    return (
        f"From: Bench <bench@example.org>\r\nTo: h0@example.com\r\nSubject: bench {i}\r\n"
        f"Message-ID: <bench-{i}-{time.time_ns()}@example.org>\r\n\r\nMessage number {i}.\r\n"
    ).encode()


def run_mode(mode: str, server: PymapServer, root: Path, messages: int, poll: float) -> list[float]:
    vault = root / f"vault-{mode}"
    vault.mkdir()
    init_vault(vault)
    server.empty("INBOX")
    settings = load_settings(
        vault_path=vault,
        h0_state_dir=root / f"state-{mode}",
        mail_backend="imap",
        imap_host=server.host,
        imap_port=server.port,
        imap_secure="none",
        imap_user=server.user,
        imap_pass=server.password,
        gmail_poll_seconds=3600.0 if mode == "idle" else poll,
        log_level="WARNING",
        dashboard_enabled=False,
        briefings_enabled=False,
        imap_idle=mode == "idle",
    )
    daemon = Daemon(
        settings, workers=1, ingest=True, companions=[start_dashboard]
    )  # with imap_idle, it holds the IDLE watcher
    daemon.start(watch=False, sweep=False)
    stop = threading.Event()
    loop = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    loop.start()
    watcher = daemon.idle
    if watcher:
        watcher.idling.wait(20)
    time.sleep(1.0)  # the first (catch-up) pass is over
    folder = vault / "Needs_Action"
    latencies: list[float] = []
    try:
        validity = int(server._shared().select_folder("INBOX", readonly=True)[b"UIDVALIDITY"])
        pending: dict[str, float] = {}
        seen: dict[str, float] = {}

        def spot() -> None:
            while not stop.is_set():
                present = set(os.listdir(folder))
                now = time.perf_counter()
                for name in list(pending):
                    if name in present and name not in seen:
                        seen[name] = now
                time.sleep(0.002)

        spotter = threading.Thread(target=spot, daemon=True)
        spotter.start()
        for i in range(messages):
            uid = server.deliver(raw(i))
            pending[f"EMAIL_{validity}-{uid}.md"] = time.perf_counter()
            time.sleep(random.uniform(0.2, 0.8))
        deadline = time.monotonic() + poll + 30
        while len(seen) < len(pending) and time.monotonic() < deadline:
            time.sleep(0.05)
        latencies = [seen[name] - started for name, started in pending.items() if name in seen]
        missing = len(pending) - len(latencies)
        if missing:
            print(f"  {mode}: {missing} note(s) never appeared", file=sys.stderr)
    finally:
        stop.set()
        if watcher:
            watcher.stop()
        daemon.stop()
    return latencies


def idle_cost(server: PymapServer, seconds: float) -> dict[str, float]:
    settings = {
        "imap_host": server.host,
        "imap_port": server.port,
        "imap_secure": "none",
        "imap_user": server.user,
        "imap_pass": server.password,
    }
    figures: dict[str, float] = {}
    for idle in (False, True):
        code = PROBE.format(repo=str(REPO), settings=settings, idle=idle, seconds=seconds + 2)
        child = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env={**os.environ, "H0_ENV_FILE": ""}
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu(child: subprocess.Popen = child, ticks: int = ticks) -> float:
            fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks

        before = cpu()
        time.sleep(seconds)
        used = cpu() - before
        rss = next(
            int(line.split()[1])
            for line in Path(f"/proc/{child.pid}/status").read_text().splitlines()
            if line.startswith("VmRSS:")
        )
        child.kill()
        child.wait()
        key = "with_idle" if idle else "without"
        figures[f"cpu_s_{key}"] = used
        figures[f"rss_kib_{key}"] = rss
    figures["cpu_percent_of_idle_connection"] = 100 * (figures["cpu_s_with_idle"] - figures["cpu_s_without"]) / seconds
    figures["rss_kib_of_idle_connection"] = figures["rss_kib_with_idle"] - figures["rss_kib_without"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--poll", type=float, default=10.0, help="GMAIL_POLL_SECONDS for the polling run")
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--modes", default="idle,polling")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, object] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "messages": args.messages,
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = PymapServer(root / "pymap").start()
        try:
            for mode in args.modes.split(","):
                latencies = run_mode(mode, server, root, args.messages, args.poll)
                results[mode] = summary(latencies)
                s = results[mode]
                print(
                    f"{mode:8s} n={s['n']:4d}  p50 {s['p50'] * 1000:7.0f} ms  p90 {s['p90'] * 1000:7.0f} ms  "
                    f"p99 {s['p99'] * 1000:7.0f} ms  max {s['max'] * 1000:7.0f} ms"
                )
            results["idle_cost"] = cost = idle_cost(server, args.idle_seconds)
            print(
                f"idle IDLE connection: {cost['cpu_percent_of_idle_connection']:.3f} % CPU over "
                f"{args.idle_seconds:.0f} s, +{cost['rss_kib_of_idle_connection']} KiB RSS "
                f"({cost['rss_kib_with_idle']} KiB with, {cost['rss_kib_without']} KiB without)"
            )
        finally:
            server.stop()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
