#!/usr/bin/env python3
"""Outlook (MAIL_BACKEND=outlook): new mail → note with delta polling, approved → sendMail request, a first sync
of a 50,000-message mailbox.

    .venv/bin/python scripts/bench/bench_outlook.py                       # everything
    .venv/bin/python scripts/bench/bench_outlook.py --only first-sync --mailbox 50000
    .venv/bin/python scripts/bench/bench_outlook.py --only send --rounds 5 --drafts 60   # Outlook vs Gmail

Against the fake Graph and the fake HTTPS authority of tests/fakes (msal unchanged), a real `h0 watch` process
(with its MCP server children) at OUTLOOK_POLL_SECONDS=2, the default:

- latency: messages put in the fake's Inbox one by one at random moments (`--interval` apart on average, so
  they land anywhere in the poll cycle); from the insertion to the moment `EMAIL_<id>.md` appears (Needs_Action/
  or Done/, scanned every 5 ms). Goal: p50 ≤ 2 s.
- send: drafts renamed into Approved/ one at a time; from the rename to the moment the fake Graph received the
  sendMail request. Goal: p50 ≤ 20 ms (as for Gmail).
- first-sync: in process (the real MailService and ingest handler), a mailbox of `--mailbox` unread Inbox
  messages over two years, 1 % of them in the last 30 days; the first `ingest_new_mail` passes until the
  catch-up is over (notes for the recent, history for the rest). Goal: the import's budget, ≤ 120 s.
- send (`--only send`): approved → send request for Outlook and Gmail side by side, the same way for both: a
  real `h0 watch` on a fresh vault with `--drafts` (+10 warm-up) drafts written a minute before it started, moved
  into Approved/ one at a time (benchlib.time_one_send, as bench_pipeline.py's latency), from the rename to the
  fake's receipt of sendMail (Graph) or messages.send (Gmail); `--rounds` rounds, alternating which goes first,
  and the median of the rounds' medians. Each backend at its default poll (Outlook 2 s, Gmail 10 s). Beside the
  latency, the CPU the daemon and its two servers spent per send (/proc), which the machine's load moves less.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import NoteClock
from benchlib import draft_text, fresh_vault, percentile, stage_drafts, time_one_send

from h0.config import load_settings
from h0.mail.providers.outlook_auth import MicrosoftSignIn
from h0.pipeline.lock import daemon_holder
from tests.fakes.fake_authority import FakeAuthority
from tests.fakes.fake_gmail import FakeGmail
from tests.fakes.fake_graph import FakeGraph

H0 = str(Path(sys.executable).with_name("h0"))
CLK = os.sysconf("SC_CLK_TCK")
DAY = 86400.0


def setup(tmp: Path, graph: FakeGraph, authority: FakeAuthority) -> tuple[Path, dict[str, str]]:
    vault = fresh_vault(tmp)
    env = {
        "VAULT_PATH": str(vault),
        "MAIL_BACKEND": "outlook",
        "OUTLOOK_AUTHORITY": authority.authority,
        "OUTLOOK_CLIENT_ID": authority.client_id,
        "OUTLOOK_TOKEN_PATH": str(tmp / "outlook_token.json"),
        "GRAPH_API_ENDPOINT": graph.api_endpoint,
        "H0_STATE_DIR": str(tmp / "state"),
        "REQUESTS_CA_BUNDLE": str(authority.ca_file),
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "rules",
        "H0_ENV_FILE": "",
        "APPROVAL_FRESH_SECONDS": "0",
    }
    os.environ.update(env)
    MicrosoftSignIn.from_settings(load_settings()).sign_in(lambda _: None)
    return vault, env


def daemon_run(messages: int, interval: float, sends: int, seed: int) -> tuple[list[float], list[float]]:
    with (
        tempfile.TemporaryDirectory(prefix="h0-bench-outlook-") as name,
        FakeGraph() as graph,
        FakeAuthority(graph=graph, username=graph.address) as authority,
    ):
        tmp = Path(name)
        vault, env = setup(tmp, graph, authority)
        clock = NoteClock(vault)
        graph.add_message(subject="before the daemon")
        with open(tmp / "daemon.log", "ab") as log:
            daemon = subprocess.Popen([H0, "watch"], env={**os.environ, **env}, stdout=log, stderr=log)
            try:
                deadline = time.monotonic() + 120
                while not clock.seen or (daemon_holder(vault) or {}).get("pid") != daemon.pid:
                    if time.monotonic() > deadline or daemon.poll() is not None:
                        raise RuntimeError(f"the daemon did not start or ingest; see {tmp / 'daemon.log'}")
                    time.sleep(0.05)
                rng = random.Random(seed)
                inserted: dict[str, float] = {}
                for i in range(messages):
                    time.sleep(rng.uniform(0, 2 * interval))
                    message_id = graph.add_message(subject=f"bench {i}", body=f"Message {i}.")
                    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in message_id)
                    inserted[f"EMAIL_{safe}.md"] = time.time()
                deadline = time.monotonic() + 60
                while not all(n in clock.seen for n in inserted) and time.monotonic() < deadline:
                    time.sleep(0.05)
                notes = [clock.seen[n] - at for n, at in inserted.items() if n in clock.seen]
                sent: list[float] = []
                for i in range(sends):
                    draft = vault / "Drafts" / f"bench-{i}.md"
                    draft.write_text(draft_text(i))
                    time.sleep(0.3)  # the draft settles before the human approves it
                    before = len(graph.sent)
                    moved = time.time()
                    draft.rename(vault / "Approved" / draft.name)
                    deadline = time.monotonic() + 30
                    while len(graph.sent) == before and time.monotonic() < deadline:
                        time.sleep(0.002)
                    if len(graph.sent) > before:
                        sent.append(graph.sent[-1].received_at - moved)
            finally:
                daemon.terminate()
                daemon.wait(60)
                clock.stop()
    return notes, sent


def send_round(backend: str, drafts: int) -> tuple[list[float], float]:
    """One round of `--only send` for `backend` (outlook or gmail): the rename → request latencies (ms) of
    `drafts` sends after 10 warm-up ones, and the CPU the daemon and its two servers spent per send (ms)."""
    saved = dict(os.environ)  # setup() exports the Outlook settings; the next round must not inherit them
    try:
        with tempfile.TemporaryDirectory(prefix=f"h0-bench-{backend}-send-") as name:
            tmp = Path(name)
            if backend == "outlook":
                with FakeGraph() as graph, FakeAuthority(graph=graph, username=graph.address) as authority:
                    vault, env = setup(tmp, graph, authority)
                    return timed_sends(tmp, vault, env, graph, drafts)
            with FakeGmail() as gmail:
                vault = fresh_vault(tmp)
                env = {
                    "VAULT_PATH": str(vault),
                    "MAIL_BACKEND": "gmail",
                    "GMAIL_TOKEN_PATH": str(gmail.write_token(tmp / "token.json")),
                    "GMAIL_API_ENDPOINT": gmail.api_endpoint,
                    "GMAIL_TOKEN_URI": gmail.token_uri,
                    "H0_STATE_DIR": str(tmp / "state"),
                    "LOG_LEVEL": "WARNING",
                    "LLM_PROVIDER": "rules",
                    "H0_ENV_FILE": "",
                }
                return timed_sends(tmp, vault, env, gmail, drafts)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def timed_sends(tmp: Path, vault: Path, env: dict[str, str], fake: Any, drafts: int) -> tuple[list[float], float]:
    """bench_pipeline.py's latency round for any backend: drafts written a minute before the daemon starts, moved
    into Approved/ one at a time (benchlib.time_one_send), caps out of the way, the dashboard on."""
    env = {**env, "RATE_LIMIT_PER_HOUR": "100000", "RATE_LIMIT_PER_DAY": "100000"}
    env.pop("APPROVAL_FRESH_SECONDS", None)
    os.environ.pop("APPROVAL_FRESH_SECONDS", None)
    stage_drafts(vault, {f"lat-{i:04}.md": draft_text(i) for i in range(drafts + 10)})
    with open(tmp / "daemon.log", "ab") as log:
        daemon = subprocess.Popen([H0, "watch"], env={**os.environ, **env}, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while (daemon_holder(vault) or {}).get("pid") != daemon.pid:
                if time.monotonic() > deadline or daemon.poll() is not None:
                    raise RuntimeError(f"the daemon did not start; see {tmp / 'daemon.log'}")
                time.sleep(0.05)
            time.sleep(3.0)  # both MCP sessions open, as bench_pipeline's Daemon waits
            samples: list[float] = []
            cpu_before = 0.0
            for i in range(drafts + 10):
                if i == 10:  # the first few warm the sessions
                    cpu_before = cpu_of_tree(daemon.pid)
                latency = time_one_send(vault, fake, f"lat-{i:04}.md", env["MAIL_BACKEND"])
                if i >= 10:
                    samples.append(latency)
            cpu = (cpu_of_tree(daemon.pid) - cpu_before) / drafts * 1000
        finally:
            daemon.terminate()
            daemon.wait(60)
    return samples, cpu


def cpu_of_tree(pid: int) -> float:
    """CPU seconds (user + system) of `pid` and its children now (the daemon and its two MCP servers)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / CLK
    return total


def send_side_by_side(drafts: int, rounds: int) -> None:
    print(
        f"approved → send request, Outlook vs Gmail ({drafts} drafts × {rounds} rounds, load {os.getloadavg()[0]:.1f})"
    )
    names = ["outlook", "gmail"]
    medians: dict[str, list[float]] = {name: [] for name in names}
    p90s: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    for round_no in range(1, rounds + 1):
        for name in names if round_no % 2 else names[::-1]:  # drift hits both alike
            samples, cpu = send_round(name, drafts)
            medians[name].append(statistics.median(samples))
            p90s[name].append(percentile(samples, 0.9))
            cpus[name].append(cpu)
            print(
                f"  round {round_no} {name:<7}: p50 {medians[name][-1]:.1f} ms, p90 {p90s[name][-1]:.1f} ms, "
                f"max {max(samples):.1f} ms; CPU {cpu:.1f} ms a send (load {os.getloadavg()[0]:.1f})"
            )
    for name in names:
        print(
            f"  {name:<7} median of rounds: p50 {statistics.median(medians[name]):.1f} ms, "
            f"p90 {statistics.median(p90s[name]):.1f} ms, CPU {statistics.median(cpus[name]):.1f} ms a send "
            "(daemon + servers)  (rounds' p50s: " + ", ".join(f"{m:.1f}" for m in medians[name]) + ")"
        )


def first_sync(size: int) -> tuple[float, int, int]:
    from h0.handlers.context import HandlerContext
    from h0.handlers.ingest import ingest_new_mail
    from h0.mail import MailService
    from h0.mail.api import LocalMail
    from h0.vault import AuditLog, Vault

    with (
        tempfile.TemporaryDirectory(prefix="h0-bench-outlook-sync-") as name,
        FakeGraph() as graph,
        FakeAuthority(graph=graph, username=graph.address) as authority,
    ):
        tmp = Path(name)
        vault, _ = setup(tmp, graph, authority)
        now, rng = time.time(), random.Random(5)
        for i in range(size):
            age = rng.uniform(0, 30 * DAY) if i % 100 == 0 else rng.uniform(30 * DAY, 730 * DAY)
            graph.add_message(subject=f"old mail {i}", body=f"Message {i}.", received_s=now - age)
        service = MailService(load_settings())
        ctx = HandlerContext.local(
            service.settings, Vault(vault), mail=LocalMail(service), audit=AuditLog(vault / "Logs", "h0")
        )
        started = time.monotonic()
        written = history = 0
        for _ in range(100):
            report = ingest_new_mail(ctx)
            written, history = written + len(report.written), history + report.history
            if report.mode != "catch_up":
                break
        elapsed = time.monotonic() - started
        service.close()
    return elapsed, written, history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["daemon", "first-sync", "send"])
    parser.add_argument("--rounds", type=int, default=5, help="--only send: rounds per backend")
    parser.add_argument("--drafts", type=int, default=60, help="--only send: timed drafts per round")
    parser.add_argument("--messages", type=int, default=30)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--sends", type=int, default=30)
    parser.add_argument("--mailbox", type=int, default=50_000)
    args = parser.parse_args()
    if args.only == "send":
        send_side_by_side(args.drafts, args.rounds)
        return
    if args.only in (None, "daemon"):
        notes, sent = daemon_run(args.messages, args.interval, args.sends, seed=7)
        print(f"new mail → note, OUTLOOK_POLL_SECONDS=2 ({len(notes)}/{args.messages} messages):")
        print(f"  p50 {statistics.median(notes):.2f} s  p90 {percentile(notes, 0.9):.2f} s  max {max(notes):.2f} s")
        print(f"approved → sendMail request ({len(sent)}/{args.sends} drafts):")
        print(f"  p50 {statistics.median(sent) * 1000:.1f} ms  p90 {percentile(sent, 0.9) * 1000:.1f} ms")
    if args.only in (None, "first-sync"):
        elapsed, written, history = first_sync(args.mailbox)
        print(f"first sync of {args.mailbox:,} unread Inbox messages: {elapsed:.1f} s")
        print(f"  {written} notes, {history} kept as history in the catch-up (the rest is never read)")


if __name__ == "__main__":
    main()
