#!/usr/bin/env python3
"""Benchmark follow-ups (issue 25): one pass over 10,000 threads, and what following sent mail costs Gmail.

    .venv/bin/python scripts/bench/bench_followup.py                 # 10,000 threads, 5 runs each
    .venv/bin/python scripts/bench/bench_followup.py --threads 2000 --runs 3 --json out.json

The pass is the real one (h0.handlers.followup.follow_up.follow_up, with h0.handlers.followup.find finding the
notes) on a local vault (no MCP: the daemon's note operations go through the vault server, ~1 ms
a call, and the pass makes calls only for what it changes), over a state database holding
--threads threads: a third only received mail (1,000 of them with an open email note in
Needs_Action/, triaged needs_info), a third where the owner answered, a third where the owner
asked something and waits; Done/ holds --done-notes filed notes (read for `awaiting:` words). Figures (median of --runs, each on the same data):

  record      — recording all the threads' messages in the ledger (what ingest adds), per message
  first look  — every thread dirty (just recorded), nothing due yet: each one assessed, deadlines set
  idle pass   — nothing changed, nothing due: the pass a daemon runs every minute
  due         — --due threads fall due at once (owed notes marked, follow-up notes and drafts written)

Then the fake Gmail (the real google-api-python-client against a local server speaking Gmail's
wire format) counts what following sent mail costs: an idle poll, and a poll bringing 10 new
messages and 10 the owner sent from another client — with sent mail followed and without (the
sync as before issue 25) — and the follow-up pass itself.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from h0.config import load_settings
from h0.followup.ledger import FollowupLedger
from h0.followup.threads import Message
from h0.handlers.context import HandlerContext
from h0.handlers.followup.find import find_followup_notes
from h0.handlers.followup.follow_up import follow_up
from h0.mail.owner import Evidence, Observed, OwnerAuthority
from h0.state import StateDB
from h0.vault import Vault, init_vault

DAY = 86400.0
OWNER = "owner@example.com"


def build(
    root: Path, threads: int, open_notes: int, start: float, done_notes: int = 0
) -> tuple[HandlerContext, list[Message]]:
    vault_dir = root / "vault"
    vault_dir.mkdir()
    init_vault(vault_dir)
    for i in range(done_notes):  # the filed mail a vault piles up: the pass looks there for `awaiting:` words
        (vault_dir / "Done" / f"EMAIL_done{i:06d}.md").write_text(
            f"---\ntype: email\nstatus: done\nmessage_id: done{i:06d}\nthread_id: old-{i:06d}\nfrom: a{i}@example.org\n"
            f"subject: Filed {i}\nreceived: 2026-01-01T00:00:00Z\n---\n```text\nOld mail {i}\n```\n"
        )
    settings = load_settings(vault_path=vault_dir, h0_state_dir=root / "state", owner_emails=OWNER)
    ctx = HandlerContext.local(settings, Vault(vault_dir), state_db=StateDB.for_vault(vault_dir, settings.h0_state_dir))
    messages: list[Message] = []
    for i in range(threads):
        kind, t = i % 3, f"thread-{i:06d}"
        at = start - (i % 50) * 60
        person = (f"Person {i}", f"p{i}@example.org")
        inbound = Message(
            key=f"<in-{i}@example.org>",
            thread=t,
            outbound=False,
            sender=person[1],
            recipients=(("Owner", OWNER),),
            subject=f"Subject {i}",
            at=at,
            seen_at=at,
            provider_id=f"in{i:06d}",
            note=f"Needs_Action/EMAIL_in{i:06d}.md" if kind == 0 else None,
        )
        if kind in (0, 1):
            messages.append(inbound)
        if kind == 1:
            messages.append(
                Message(
                    key=f"<re-{i}@example.com>",
                    thread=t,
                    outbound=True,
                    sender=OWNER,
                    recipients=(person,),
                    subject=f"Re: Subject {i}",
                    at=at + 60,
                    seen_at=at + 60,
                    provider_id=f"re{i:06d}",
                    asks=False,
                )
            )
        if kind == 2:
            messages.append(
                Message(
                    key=f"<ask-{i}@example.com>",
                    thread=t,
                    outbound=True,
                    sender=OWNER,
                    recipients=(person,),
                    subject=f"Question {i}?",
                    at=at,
                    seen_at=at,
                    provider_id=f"ask{i:06d}",
                    asks=True,
                    ask="Could you check?",
                )
            )
    for i in range(0, min(threads, 3 * open_notes), 3):
        (vault_dir / "Needs_Action" / f"EMAIL_in{i:06d}.md").write_text(
            f"---\ntype: email\nstatus: needs_info\nmessage_id: in{i:06d}\nrfc822_message_id: '<in-{i}@example.org>'\n"
            f"thread_id: thread-{i:06d}\nfrom: Person {i} <p{i}@example.org>\nsubject: Subject {i}\n"
            f"received: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(start - (i % 50) * 60))}\n---\n"
            f"```text\nHello {i}\n```\n"
        )
    return ctx, messages


def timed(call, *args: object, **kwargs: object) -> tuple[float, object]:
    started = time.perf_counter()
    value = call(*args, **kwargs)
    return (time.perf_counter() - started) * 1000, value


def one_pass(ctx: HandlerContext, vault: Vault, now: float):
    return follow_up(ctx, find_followup_notes(vault), now=now)


def bench_pass(args: argparse.Namespace) -> dict:
    figures: dict[str, list[float]] = {
        "record_us_per_message": [],
        "first_look_ms": [],
        "idle_pass_ms": [],
        "due_ms": [],
    }
    counts: dict[str, int] = {}
    start = time.time()
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="h0-bench-followup-") as tmp:
            ctx, messages = build(Path(tmp), args.threads, args.open_notes, start, args.done_notes)
            ledger = FollowupLedger(ctx.state_db)
            # The owner's messages are the owner's by the evidence the sync records (Gmail's SENT label), not
            # by their From (h0.mail.owner): recorded as the sync would, untimed.
            OwnerAuthority(ctx.state_db).record(
                Observed(m.key, Evidence.SENT_LABEL, "gmail:bench", m.sender) for m in messages if m.outbound
            )
            ms, _ = timed(ledger.record, messages)
            figures["record_us_per_message"].append(ms * 1000 / len(messages))
            vault = Vault(ctx.paths.root)
            find_followup_notes(vault)  # the listing cache warm, as in a running daemon
            ms, report = timed(one_pass, ctx, vault, start + 60)
            figures["first_look_ms"].append(ms)
            counts["first_look_threads"] = report.threads
            idle = []
            for _ in range(5):
                ms, report = timed(one_pass, ctx, vault, start + 120)
                idle.append(ms)
                assert report.threads == 0 and not report.changed
            figures["idle_pass_ms"].append(statistics.median(idle))
            # Make --due threads fall due now (their messages ten days old): owed notes and awaited questions.
            due = ctx.state_db.query(
                "SELECT thread FROM followup_threads WHERE due_at IS NOT NULL ORDER BY thread LIMIT ?", (args.due,)
            )
            with ctx.state_db.transaction() as db:
                db.executemany(
                    "UPDATE followup_threads SET due_at = ? WHERE thread = ?", [(start, r["thread"]) for r in due]
                )
                db.executemany(
                    "UPDATE followup_messages SET at = ? WHERE thread = ?",
                    [(start - 10 * DAY, r["thread"]) for r in due],
                )
            ms, report = timed(one_pass, ctx, vault, start + 180)
            figures["due_ms"].append(ms)
            counts.update(
                due_threads=report.threads,
                owed_marked=len(report.owed),
                awaited_written=len(report.awaited),
                failed=report.failed,
                messages=len(messages),
                threads=args.threads,
                open_email_notes=args.open_notes,
            )
    return {
        "median": {k: round(statistics.median(v), 2) for k, v in figures.items()},
        "runs": {k: [round(x, 2) for x in v] for k, v in figures.items()},
        "counts": counts,
    }


def bench_gmail() -> dict:
    from h0.handlers.ingest import ingest_new_mail
    from h0.mail import MailService
    from h0.mail.api import LocalMail
    from tests.fakes.fake_gmail import FakeGmail

    results: dict[str, object] = {}
    for follow_sent in (True, False):
        with tempfile.TemporaryDirectory(prefix="h0-bench-gmail-") as tmp, FakeGmail() as gmail:
            root = Path(tmp)
            vault_dir = root / "vault"
            vault_dir.mkdir()
            init_vault(vault_dir)
            token = gmail.write_token(root / "token.json")
            settings = load_settings(
                vault_path=vault_dir,
                mail_backend="gmail",
                gmail_token_path=token,
                gmail_api_endpoint=gmail.api_endpoint,
                gmail_token_uri=gmail.token_uri,
                h0_state_dir=root / "state",
                max_retries=1,
                retry_delay_ms=1,
            )
            service = MailService(settings, trusted_caller=True)
            service.sync.follow_sent = follow_sent
            ctx = HandlerContext.local(
                settings,
                Vault(vault_dir),
                mail=LocalMail(service),
                state_db=StateDB.for_vault(vault_dir, settings.h0_state_dir),
            )
            gmail.add_message(subject="seed")
            ingest_new_mail(ctx)  # the first run's catch-up
            gmail.reset_quota()
            ingest_new_mail(ctx)
            idle = list(gmail.quota)
            for i in range(10):
                gmail.add_message(sender=f"P{i} <p{i}@example.org>", subject=f"New {i}", body="Hello?")
                gmail.add_message(
                    sender=f"Owner <{gmail.address}>",
                    to=f"Q{i} <q{i}@example.org>",
                    labels=("SENT",),
                    subject=f"Asked {i}",
                    body="Could you send it?",
                )
            gmail.reset_quota()
            requests_before = len(gmail.requests)
            report = ingest_new_mail(ctx)
            busy = Counter(name for name, _ in gmail.quota)
            busy_units = gmail.units
            batches = list(gmail.batches)
            gmail.reset_quota()
            follow_up(ctx, find_followup_notes(Vault(vault_dir)), now=time.time() + 30 * DAY)
            results["followed" if follow_sent else "not_followed"] = {
                "idle_poll": idle,
                "busy_poll_calls": dict(busy),
                "busy_poll_units": busy_units,
                "busy_poll_batches": batches,
                "busy_poll_requests": len(gmail.requests) - requests_before,
                "written": len(report.written),
                "sent_read": report.sent,
                "follow_up_pass_units": gmail.units,
                "follow_up_pass_calls": len(gmail.quota),
            }
            service.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--open-notes", type=int, default=1_000)
    parser.add_argument("--done-notes", type=int, default=10_000)
    parser.add_argument("--due", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    figures = {
        "machine": f"{platform.machine()} {platform.python_version()}",
        "pass": bench_pass(args),
        "gmail": bench_gmail(),
    }
    m = figures["pass"]["median"]
    print(
        f"follow-up pass over {args.threads:,} threads ({args.open_notes:,} open email notes, {args.done_notes:,} in Done/), "
        f"median of {args.runs}:"
    )
    print(f"  record        {m['record_us_per_message']:8.1f} µs a message")
    print(f"  first look    {m['first_look_ms']:8.1f} ms   (every thread dirty, nothing due)")
    print(f"  idle pass     {m['idle_pass_ms']:8.1f} ms   (nothing changed, nothing due)")
    print(f"  due           {m['due_ms']:8.1f} ms   ({figures['pass']['counts']})")
    for name, data in figures["gmail"].items():
        print(
            f"gmail, sent mail {name.replace('_', ' ')}: idle poll {data['idle_poll']}; a poll with 10 new + 10 sent: "
            f"{data['busy_poll_calls']} = {data['busy_poll_units']} units, batches {data['busy_poll_batches']}; "
            f"follow-up pass: {data['follow_up_pass_calls']} calls"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
