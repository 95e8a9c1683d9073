#!/usr/bin/env python3
"""The watcher's figures, H0_WATCHER=polling beside the native observer in the same run.

    .venv/bin/python scripts/bench/bench_watcher.py                 # latency + idle, defaults
    .venv/bin/python scripts/bench/bench_watcher.py --drafts 200 --rounds 3 --idle-seconds 60

- latency: a real `h0 watch` (and its two MCP servers) on a fresh vault against the fake
  Gmail of tests/fakes; a draft is renamed from Drafts/ into Approved/; measured from the
  rename to the send request reaching the fake. Native and polling alternate within each
  round. The polling observer looks every 0.5 s (h0.platform.watch.POLL_SECONDS), so its
  latency is that interval's wait plus the native pipeline's few milliseconds.
- idle: a 10,000-note vault (9,000 notes in the human's own folders, 500 in Done/, 300 in
  Needs_Action/, 200 in Drafts/). First the observer alone, in this process, measured with
  time.process_time() over a window (works on every OS): native, polling as H0 runs it
  (trigger folders only), and — for comparison — watchdog's polling observer over the whole
  vault. Then, where /proc exists, the whole `h0 watch` process with H0_WATCHER=polling.
  Goal: the polling observer under 1 % of one core.
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
from h0.pipeline.watcher import VaultWatcher
from h0.platform.watch import POLL_SECONDS
from tests.fakes.fake_gmail import FakeGmail

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import draft_text, fresh_vault, percentile, stage_drafts, time_one_send

H0 = str(Path(sys.executable).with_name("h0.exe" if os.name == "nt" else "h0"))
WATCHERS = ("native", "polling")


class Daemon:
    def __init__(self, vault: Path, gmail: FakeGmail, token: Path, watcher: str) -> None:
        env = dict(
            os.environ,
            H0_ENV_FILE="",
            VAULT_PATH=str(vault),
            MAIL_BACKEND="gmail",
            H0_WATCHER=watcher,
            GMAIL_TOKEN_PATH=str(token),
            GMAIL_API_ENDPOINT=gmail.api_endpoint,
            GMAIL_TOKEN_URI=gmail.token_uri,
            RATE_LIMIT_PER_HOUR="100000",
            RATE_LIMIT_PER_DAY="100000",
            LOG_LEVEL="WARNING",
            LLM_PROVIDER="rules",
            H0_STATE_DIR=str(vault.parent / "state"),
        )
        self.log = open(vault.parent / "daemon.log", "ab")  # noqa: SIM115 - the daemon's output until stop() closes it
        self.proc = subprocess.Popen([H0, "watch", "--workers", "4"], env=env, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 60
        while (daemon_holder(vault) or {}).get("pid") != self.proc.pid:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"the daemon did not start; see {vault.parent / 'daemon.log'}")
            time.sleep(0.05)
        time.sleep(3.0)  # both MCP sessions open

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)
        self.log.close()


# --------------------------------------------------------------------------- latency


def latency_round(drafts: int, watcher: str) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="h0-bench-") as tmp, FakeGmail() as gmail:
        vault = fresh_vault(Path(tmp))
        token = gmail.write_token(Path(tmp) / "token.json")
        # The drafts sit in Drafts/ first, read a while ago, as H0's drafts do: a polling observer
        # must have seen a note (its first listing does) before it can tell a move from a new file.
        stage_drafts(vault, {f"lat-{i:04}.md": draft_text(i) for i in range(drafts + 5)})
        daemon = Daemon(vault, gmail, token, watcher)
        samples = []
        time.sleep(3 * POLL_SECONDS)
        try:
            for i in range(drafts + 5):
                latency = time_one_send(vault, gmail, f"lat-{i:04}.md", watcher)
                if i >= 5:  # the first few warm the sessions
                    samples.append(latency)
        finally:
            daemon.stop()
    return samples


def bench_latency(drafts: int, rounds: int) -> None:
    print(
        f"\nlatency: rename into Approved/ → send request at the fake Gmail ({drafts} drafts × {rounds} rounds,"
        f" native vs polling every {POLL_SECONDS} s)"
    )
    medians: dict[str, list[float]] = {w: [] for w in WATCHERS}
    p99s: dict[str, list[float]] = {w: [] for w in WATCHERS}
    for round_no in range(1, rounds + 1):
        for watcher in WATCHERS if round_no % 2 else WATCHERS[::-1]:
            samples = latency_round(drafts, watcher)
            med, p99 = statistics.median(samples), percentile(samples, 0.99)
            medians[watcher].append(med)
            p99s[watcher].append(p99)
            print(
                f"  round {round_no}, {watcher:<7}: p50 {med:.1f} ms, p90 {percentile(samples, 0.9):.1f} ms, "
                f"p99 {p99:.1f} ms, max {max(samples):.1f} ms"
            )
    for watcher in WATCHERS:
        print(
            f"  {watcher:<7} — median of rounds: p50 {statistics.median(medians[watcher]):.1f} ms, "
            f"p99 {statistics.median(p99s[watcher]):.1f} ms"
        )


# --------------------------------------------------------------------------- idle


def big_vault(tmp: Path) -> Path:
    vault = fresh_vault(tmp)
    note = "---\ntags: [bench]\n---\n# Note {i}\n\nSome text of the human's own, nothing for H0.\n"
    for i in range(9000):
        folder = vault / "Projects" / f"area-{i % 30:02}" / f"topic-{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{i:05}.md").write_text(note.format(i=i))
    for i in range(500):
        (vault / "Done" / f"done-{i:04}.md").write_text(
            f"---\nstatus: sent\nto: a@example.com\nsubject: s{i}\n---\nx\n"
        )
    for i in range(300):
        (vault / "Needs_Action" / f"EMAIL_{i:04}.md").write_text(
            f"---\ntype: email\nstatus: needs_info\nmessage_id: m{i}\nfrom: a@example.com\nsubject: s{i}\n---\nx\n"
        )
    for i in range(200):
        (vault / "Drafts" / f"draft-{i:04}.md").write_text(draft_text(i))
    return vault


def observer_cpu(vault: Path, seconds: float, kind: str) -> float:
    """CPU % of one core used by this process while only the observer runs in it."""
    if kind == "whole vault":
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers.polling import PollingObserverVFS

        observer = PollingObserverVFS(os.stat, os.scandir, polling_interval=POLL_SECONDS)
        observer.schedule(FileSystemEventHandler(), str(vault), recursive=True)
        observer.start()
        stop = lambda: (observer.stop(), observer.join(10))
    else:
        watcher = VaultWatcher(vault, lambda *a: None, lambda: None, kind=kind)
        watcher.start()
        stop = watcher.stop
    try:
        time.sleep(min(5.0, seconds))  # the first snapshot is taken at start: leave it out
        before = time.process_time()
        time.sleep(seconds)
        used = time.process_time() - before
    finally:
        stop()
    return 100 * used / seconds


def proc_cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_idle(seconds: float) -> None:
    print(f"\nidle: a 10,000-note vault, {seconds:.0f} s windows (goal: polling < 1 % of one core)")
    with tempfile.TemporaryDirectory(prefix="h0-bench-") as tmp:
        vault = big_vault(Path(tmp))
        total = sum(1 for _ in vault.rglob("*.md"))
        print(f"  vault: {total} notes")
        for kind in ("native", "polling", "whole vault"):
            label = {"whole vault": "polling, whole vault (not what H0 does)"}.get(kind, kind)
            print(f"  observer alone, {label:<40} CPU {observer_cpu(vault, seconds, kind):.2f} %")
        if not Path("/proc/self/stat").exists():
            print("  (no /proc here: the whole-daemon figure is Linux only)")
            return
        with FakeGmail() as gmail:
            token = gmail.write_token(Path(tmp) / "token.json")
            for watcher in WATCHERS:
                daemon = Daemon(vault, gmail, token, watcher)
                try:
                    time.sleep(5.0)  # past the start-up sweep and dashboard
                    before = proc_cpu_seconds(daemon.proc.pid)
                    time.sleep(seconds)
                    after = proc_cpu_seconds(daemon.proc.pid)
                finally:
                    daemon.stop()
                if before is not None and after is not None:
                    print(
                        f"  `h0 watch` process, H0_WATCHER={watcher:<7}            CPU {100 * (after - before) / seconds:.2f} %"
                        " (sweeps and dashboard included)"
                    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("latency", "idle"))
    parser.add_argument("--drafts", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    args = parser.parse_args()
    if args.only in (None, "latency"):
        bench_latency(args.drafts, args.rounds)
    if args.only in (None, "idle"):
        bench_idle(args.idle_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
