#!/usr/bin/env python3
"""Benchmark the triage rules engine alone (no disk I/O for notes) on a generated inbox.

    .venv/bin/python scripts/bench/bench_triage_rules.py              # 20,000 emails, 3 runs
    .venv/bin/python scripts/bench/bench_triage_rules.py --emails 50000 --runs 5 --json out.json

The inbox is deterministic (seeded) and shaped like a real one: personal mail with and
without questions, urgent requests, GitHub/Google notifications, HTML newsletters with
long footers, invoices and legal mail from no-reply senders (which exercise the safety
rule), non-ASCII subjects, and a few 200 KB bodies. Each run measures, per email,
`Triager.triage(EmailInput)` with the default `H0_Rules.md` in a temporary vault — so the
per-call `stat` of the rules file is included — and separately the cost of building the
EmailInput from note frontmatter. Reported: emails/s and per-email p50/p99 in µs, the
median over runs, plus the decision mix (to show the set is not trivially one-sided).
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from h0.triage import EmailInput, Triager, ensure_rules_file
from h0.vault.model import note_facts

WORDS = (
    "project review meeting budget plan draft design team schedule update notes follow week client "
    "launch report deck numbers quarter roadmap hiring office travel slides feedback idea proposal"
).split()
FOOTER = (
    "\n\n<p style='font-size:11px'>You are receiving this email because you subscribed. "
    "<a href='https://mail.example/u?id=1'>Unsubscribe</a> · Manage your preferences · "
    "Acme Inc., 1 Market Street, San Francisco</p>"
)


def prose(rng: random.Random, words: int) -> str:
    sentences = []
    while words > 0:
        n = rng.randint(6, 16)
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + ".")
        words -= n
    return " ".join(sentences)


def make_note(rng: random.Random, i: int) -> tuple[dict[str, Any], str]:
    """One email note's (frontmatter, body), drawn from a realistic mix."""
    kind = rng.choices(
        ["question", "fyi", "urgent", "notification", "newsletter", "invoice", "legal", "non_ascii", "huge"],
        weights=[18, 14, 6, 20, 22, 8, 2, 8, 2],
    )[0]
    person = rng.choice(["Dana Rivera", "Sam Lee", "Maria Chen", "Omar Haddad", "Kim Park"])
    address = person.lower().replace(" ", ".") + "@example.com"
    fm: dict[str, Any] = {
        "type": "email",
        "status": "pending",
        "message_id": f"m{i}",
        "to": "you@example.com",
        "cc": [],
        "labels": ["INBOX", "UNREAD"],
        "has_attachments": False,
        "attachment_names": [],
    }
    if kind == "question":
        fm.update({"from": f"{person} <{address}>", "subject": f"Quick question about the {rng.choice(WORDS)}"})
        body = f"Hi,\n\n{prose(rng, rng.randint(40, 300))}\n\nCould you take a look by Thursday?\n\nThanks,\n{person}"
    elif kind == "fyi":
        fm.update({"from": f"{person} <{address}>", "subject": f"Re: {rng.choice(WORDS)} {rng.choice(WORDS)}"})
        body = f"{prose(rng, rng.randint(20, 400))}\n\n{person}"
    elif kind == "urgent":
        fm.update({"from": f"{person} <{address}>", "subject": f"Need the {rng.choice(WORDS)} ASAP"})
        body = prose(rng, rng.randint(30, 150))
    elif kind == "notification":
        fm.update(
            {
                "from": rng.choice(
                    [
                        "GitHub <notifications@github.com>",
                        "Google <no-reply@accounts.google.com>",
                        "Jira <jira@corp.atlassian.net>",
                    ]
                ),
                "subject": f"[{rng.choice(WORDS)}] {prose(rng, 8)}",
            }
        )
        body = prose(rng, rng.randint(30, 120))
    elif kind == "newsletter":
        fm.update(
            {
                "from": f"The {rng.choice(WORDS).title()} Weekly <hello@news{rng.randint(1, 40)}.example>",
                "subject": f"Issue #{rng.randint(1, 400)}: {prose(rng, 6)}",
            }
        )
        paragraphs = "".join(f"<p>{prose(rng, rng.randint(60, 200))}</p>\n" for _ in range(rng.randint(5, 40)))
        body = f"<html><body>{paragraphs}{FOOTER}</body></html>"
    elif kind == "invoice":
        fm.update(
            {
                "from": "Acme Billing <no-reply@billing.acme.example>",
                "subject": f"Your invoice INV-{i}",
                "has_attachments": True,
                "attachment_names": [f"INV-{i}.pdf"],
            }
        )
        body = f"Your invoice for {rng.choice(WORDS)} is attached.{FOOTER}"
    elif kind == "legal":
        fm.update({"from": "Privacy Desk <notifications@privacy.example>", "subject": "Data subject access request"})
        body = "A GDPR request was received for your organisation. " + prose(rng, 80)
    elif kind == "non_ascii":
        fm.update(
            {
                "from": "Jürgen Müller <juergen@beispiel.de>",
                "subject": rng.choice(["Frage zum Termin?", "Grüße aus München", "請求書の送付について"]),
            }
        )
        body = "Hallo, " + prose(rng, rng.randint(20, 200))
    else:  # huge
        fm.update({"from": f"{person} <{address}>", "subject": "Full logs attached"})
        body = prose(rng, 35_000)  # ~200 KB
    return fm, body


def one_run(triager: Triager, notes: list[tuple[dict[str, Any], str]]) -> dict[str, Any]:
    started = time.perf_counter()
    emails = [EmailInput.from_note(note_facts("", fm), body) for fm, body in notes]
    build_s = time.perf_counter() - started

    latencies: list[float] = []
    decisions: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for email in emails:
        t0 = time.perf_counter()
        outcome = triager.triage(email)
        latencies.append(time.perf_counter() - t0)
        decisions[outcome.decision.decision] += 1
    triage_s = time.perf_counter() - started
    latencies.sort()
    return {
        "emails": len(emails),
        "triage_per_s": len(emails) / triage_s,
        "build_and_triage_per_s": len(emails) / (triage_s + build_s),
        "p50_us": latencies[len(latencies) // 2] * 1e6,
        "p99_us": latencies[int(len(latencies) * 0.99)] * 1e6,
        "max_us": latencies[-1] * 1e6,
        "decisions": dict(decisions),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark the H0 triage rules engine.")
    ap.add_argument("--emails", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)

    from loguru import logger

    logger.remove()  # the rules engine logs one line when it loads the file; keep the table clean
    rng = random.Random(args.seed)
    notes = [make_note(rng, i) for i in range(args.emails)]
    mean_kb = statistics.mean(len(body) for _, body in notes) / 1024
    runs = []
    with tempfile.TemporaryDirectory() as vault:
        ensure_rules_file(Path(vault))
        from h0.config import load_settings

        triager = Triager.from_settings(load_settings(llm_provider="rules"), Path(vault))
        triager.triage(
            EmailInput.from_note(note_facts("", notes[0][0]), notes[0][1])
        )  # compile the rules file outside the timing
        for n in range(args.runs):
            run = one_run(triager, notes)
            runs.append(run)
            print(
                f"run {n + 1}: {run['triage_per_s']:>9,.0f} emails/s  (with EmailInput build "
                f"{run['build_and_triage_per_s']:>9,.0f}/s)  p50 {run['p50_us']:6.1f} µs  "
                f"p99 {run['p99_us']:7.1f} µs  max {run['max_us']:8.1f} µs"
            )
    median = statistics.median(r["triage_per_s"] for r in runs)
    print(
        f"\n{args.emails:,} emails (mean body {mean_kb:.1f} KB), {platform.python_implementation()} "
        f"{platform.python_version()}, one thread"
    )
    print(f"median: {median:,.0f} emails/s — decisions: {runs[-1]['decisions']}")
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "median_per_s": median, "mean_body_kb": mean_kb}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
