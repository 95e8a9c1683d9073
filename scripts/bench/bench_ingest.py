#!/usr/bin/env python3
"""Mail in: how soon a new Gmail message is a note, and what it costs in Gmail quota.

    .venv/bin/python scripts/bench/bench_ingest.py                    # everything, ~3 minutes
    .venv/bin/python scripts/bench/bench_ingest.py --messages 200 --interval 0.25 --polls 10 1
    .venv/bin/python scripts/bench/bench_ingest.py --only quota

Against the fake Gmail of tests/fakes (a local HTTP server speaking Gmail's wire format,
charging each call Gmail's quota units), driven by the real google-api-python-client.

- latency: a real `h0 watch` process (with its MCP server children) on a fresh vault, at
  GMAIL_POLL_SECONDS=10 (the default) and at 1 s. Messages are inserted into the fake one
  by one, at random moments (`--interval` apart on average) so they land anywhere in the
  poll cycle, as real mail does; measured from the insertion to the moment the note
  `EMAIL_<id>.md` appears in the vault (Needs_Action/, or Done/ if triage filed it already;
  the folders are scanned every 5 ms). Goal at the default poll: p50 ≤ 6 s.
- quota: in process (the real MailService and ingest handler, the same calls the daemon's
  mail server makes), history sync side by side with the query-based ingest
  (`ingest_new_mail(..., mode="query")`, what ingest did before issue 11). Idle: the units
  of one poll that finds nothing (the average over `--idle-polls` polls) × the polls in an
  hour — counted, not waited for: an hour of polls would cost an hour. Per 100 messages: 100
  arrive at once, passes run until one finds nothing, every unit counted (that last empty
  pass included). Goal: ≤ 1,000 units per idle hour at the default poll.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from h0.pipeline.lock import daemon_holder
from tests.fakes.fake_gmail import FakeGmail

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import fresh_vault, percentile

H0 = str(Path(sys.executable).with_name("h0"))
DEFAULT_POLL = 10.0
OLD_POLL = 60.0  # the query-based ingest's default before issue 11


class NoteClock:
    """First sighting of each EMAIL_*.md in Needs_Action/ or Done/, scanned every 5 ms."""

    def __init__(self, vault: Path) -> None:
        self.folders = [vault / "Needs_Action", vault / "Done"]
        self.seen: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.time()
            for folder in self.folders:
                try:
                    with os.scandir(folder) as entries:
                        for entry in entries:
                            if entry.name.startswith("EMAIL_") and entry.name not in self.seen:
                                self.seen[entry.name] = now
                except FileNotFoundError:
                    pass
            self._stop.wait(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def latency_run(messages: int, interval: float, poll: float, seed: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="h0-bench-ingest-") as tmp_name, FakeGmail() as gmail:
        tmp = Path(tmp_name)
        vault = fresh_vault(tmp)
        token = gmail.write_token(tmp / "token.json")
        env = dict(
            os.environ,
            H0_ENV_FILE="",
            VAULT_PATH=str(vault),
            MAIL_BACKEND="gmail",
            GMAIL_TOKEN_PATH=str(token),
            GMAIL_API_ENDPOINT=gmail.api_endpoint,
            GMAIL_TOKEN_URI=gmail.token_uri,
            GMAIL_POLL_SECONDS=f"{poll:g}",
            H0_STATE_DIR=str(tmp / "state"),
            LOG_LEVEL="WARNING",
            LLM_PROVIDER="rules",
        )
        clock = NoteClock(vault)
        gmail.add_message(subject="before the daemon")  # the first run's catch-up has something to do
        with open(tmp / "daemon.log", "ab") as log:
            daemon = subprocess.Popen([H0, "watch"], env=env, stdout=log, stderr=log)
            try:
                deadline = time.monotonic() + 120
                while len(clock.seen) < 1 or (daemon_holder(vault) or {}).get("pid") != daemon.pid:
                    if time.monotonic() > deadline or daemon.poll() is not None:
                        raise RuntimeError(f"the daemon did not start or ingest; see {tmp / 'daemon.log'}")
                    time.sleep(0.05)
                gmail.reset_quota()
                rng = random.Random(seed)
                inserted: dict[str, float] = {}
                started = time.time()
                for i in range(messages):
                    time.sleep(rng.uniform(0, 2 * interval))
                    message_id = gmail.add_message(subject=f"bench {i}", body=f"Message {i} of the benchmark.")
                    inserted[f"EMAIL_{message_id}.md"] = time.time()
                deadline = time.monotonic() + poll + 60
                while not all(name in clock.seen for name in inserted):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{sum(n not in clock.seen for n in inserted)} messages never became notes")
                    time.sleep(0.05)
                elapsed = time.time() - started
                units = gmail.units
                calls = dict.fromkeys(name for name, _ in gmail.quota)
                for name in calls:
                    calls[name] = sum(1 for n, _ in gmail.quota if n == name)
                batches = list(gmail.batches)
            finally:
                daemon.terminate()
                daemon.wait(60)
                clock.stop()
        samples = [clock.seen[name] - at for name, at in inserted.items()]
    return {"samples": samples, "elapsed": elapsed, "units": units, "calls": calls, "batches": batches}


def bench_latency(messages: int, interval: float, polls: list[float]) -> None:
    print(
        f"\nlatency: message inserted into the fake Gmail → note in the vault ({messages} messages, one every "
        f"~{interval:g} s at random moments; a real `h0 watch`)"
    )
    for poll in polls:
        result = latency_run(messages, interval, poll, seed=int(poll * 1000) + messages)
        samples = result["samples"]
        p50, p90, p99 = statistics.median(samples), percentile(samples, 0.9), percentile(samples, 0.99)
        goal = " (goal ≤ 6 s)" if poll == DEFAULT_POLL else ""
        print(
            f"  GMAIL_POLL_SECONDS={poll:g}: p50 {p50:.2f} s{goal}, p90 {p90:.2f} s, p99 {p99:.2f} s, "
            f"min {min(samples):.2f} s, max {max(samples):.2f} s"
        )
        calls = ", ".join(f"{name} ×{count}" for name, count in sorted(result["calls"].items()))
        largest = max(result["batches"]) if result["batches"] else 0
        print(
            f"    over the {result['elapsed']:.0f} s of arrivals: {result['units']} quota units ({calls}); "
            f"{len(result['batches'])} batch requests, the largest {largest} calls"
        )


# -- quota, in process ----------------------------------------------------------------------


def quota_for(mode: str, messages: int, idle_polls: int) -> tuple[float, int, int]:
    """(units per idle poll, units for `messages` new messages, passes they took) for one ingest mode."""
    from loguru import logger

    from h0.config import load_settings
    from h0.handlers.context import HandlerContext
    from h0.handlers.ingest import ingest_new_mail
    from h0.mail import MailService
    from h0.mail.api import LocalMail
    from h0.vault import Vault

    logger.remove()
    with tempfile.TemporaryDirectory(prefix="h0-bench-quota-") as tmp_name, FakeGmail() as gmail:
        tmp = Path(tmp_name)
        os.environ["H0_STATE_DIR"] = str(tmp / "state")
        os.environ["H0_ENV_FILE"] = ""
        vault = fresh_vault(tmp)
        token = gmail.write_token(tmp / "token.json")
        settings = load_settings(
            vault_path=vault,
            mail_backend="gmail",
            gmail_token_path=token,
            gmail_api_endpoint=gmail.api_endpoint,
            gmail_token_uri=gmail.token_uri,
        )
        service = MailService(settings)
        try:
            ctx = HandlerContext.local(settings, Vault(vault), mail=LocalMail(service))
            gmail.add_message(subject="already there")
            ingest_new_mail(ctx, mode=mode)  # the first run (a catch-up for the sync) is over
            ingest_new_mail(ctx, mode=mode)
            gmail.reset_quota()
            for _ in range(idle_polls):
                if ingest_new_mail(ctx, mode=mode).written:
                    raise RuntimeError("an idle poll found mail")
            idle = gmail.units / idle_polls
            for i in range(messages):
                gmail.add_message(subject=f"quota {i}", body=f"Message {i}.")
            gmail.reset_quota()
            written, passes = 0, 0
            while True:
                passes += 1
                report = ingest_new_mail(ctx, mode=mode)
                written += len(report.written)
                if not report.written:
                    break
            if written != messages:
                raise RuntimeError(f"{mode}: {written} notes for {messages} messages")
            return idle, gmail.units, passes
        finally:
            service.close()


def bench_quota(idle_polls: int) -> None:
    print("\nquota: Gmail units, history sync vs the query-based ingest (in process, the same calls the daemon makes)")
    sync_idle, sync_100, sync_passes = quota_for("sync", 100, idle_polls)
    query_idle, query_100, query_passes = quota_for("query", 100, idle_polls)
    rows = [
        ("history sync", DEFAULT_POLL, sync_idle, sync_100, sync_passes),
        ("history sync", 1.0, sync_idle, sync_100, sync_passes),
        ("query (before)", OLD_POLL, query_idle, query_100, query_passes),
        ("query (before)", DEFAULT_POLL, query_idle, query_100, query_passes),
    ]
    print(f"  {'ingest':<15} {'poll':>6} {'units/idle poll':>16} {'units/idle hour':>16} {'units/100 messages':>19}")
    for name, poll, idle, per_100, passes in rows:
        hour = idle * 3600 / poll
        goal = " (goal ≤ 1,000)" if name == "history sync" and poll == DEFAULT_POLL else ""
        print(f"  {name:<15} {poll:>5g}s {idle:>16.1f} {hour:>16,.0f} {per_100:>12,} ({passes} passes){goal}")
    print(
        f"  idle hour = units of one empty poll (mean of {idle_polls}) × 3600 / poll seconds: counted, not waited for."
    )
    print("  per 100 messages: one burst of 100, passes until one finds nothing (that empty pass included).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["latency", "quota"])
    parser.add_argument("--messages", type=int, default=200, help="messages per latency run (default 200)")
    parser.add_argument("--interval", type=float, default=0.25, help="mean seconds between arrivals (default 0.25)")
    parser.add_argument("--polls", type=float, nargs="+", default=[DEFAULT_POLL, 1.0], help="GMAIL_POLL_SECONDS values")
    parser.add_argument("--idle-polls", type=int, default=20, help="empty polls averaged for the idle cost")
    args = parser.parse_args()
    if args.only in (None, "quota"):
        bench_quota(args.idle_polls)
    if args.only in (None, "latency"):
        bench_latency(args.messages, args.interval, args.polls)


if __name__ == "__main__":
    main()
