#!/usr/bin/env python3
"""CPU of triage's per-email planning (h0.handlers.triage_plan.plan_email), in one thread, no daemon.

    .venv/bin/python scripts/bench/bench_plan_email.py                 # 600 notes, 5 runs
    .venv/bin/python scripts/bench/bench_plan_email.py --notes 1200 --runs 3

The notes are bench_triage.py's (the same six kinds of email, 40 to 400 words of filler) in a fresh
temporary vault with the default H0_Rules.md, triaged by the rules with drafting context, as the
daemon's workers do — but each `plan_email` timed alone by this thread's CPU time (nothing is
written, no server, no other thread): the figure the shared machine's load disturbs least. The
vault index is built and warm before the first run. Prints the median µs per email of each run and
of each kind of email (the median over runs), and the decisions made (they must not change).
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_triage import KINDS, make_notes

from h0.config import load_settings
from h0.drafting import Drafting
from h0.handlers.context import HandlerContext
from h0.handlers.suspect import known_people
from h0.handlers.triage_plan import plan_email
from h0.state import StateDB
from h0.triage import Triager, ensure_rules_file
from h0.vault import Vault, init_vault


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=600)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="h0-bench-plan-") as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        init_vault(root)
        ensure_rules_file(root)
        paths = make_notes(root / "Needs_Action", args.notes)
        settings = load_settings(vault_path=root, log_level="ERROR")
        vault = Vault(root)
        state = StateDB.for_vault(root, settings.h0_state_dir)  # the daemon's own, opened once
        ctx = HandlerContext.local(settings, vault, triager=Triager.from_settings(settings, root), state_db=state)
        drafting = Drafting.build(settings, root)
        notes = [vault.read_note(f"Needs_Action/{p.name}") for p in paths]
        known = known_people(ctx, drafting)
        for note in notes[: len(KINDS) * 2]:  # warm: the index built, the patterns compiled
            plan_email(note, [], ctx, ctx.triager, drafting, known=known)
        per_run, per_kind = [], collections.defaultdict(list)
        decisions: collections.Counter[str] = collections.Counter()
        for run in range(args.runs):
            times = []
            for index, note in enumerate(notes):
                started = time.thread_time()
                plan = plan_email(note, [], ctx, ctx.triager, drafting, known=known)
                spent = (time.thread_time() - started) * 1e6
                times.append(spent)
                per_kind[index % len(KINDS)].append(spent)
                if run == 0:
                    decisions[str(plan.record["decision"])] += 1
            per_run.append(statistics.mean(times))
            print(f"  run {run + 1}: {per_run[-1]:.0f} µs CPU per email (mean of {len(notes)})")
        print(f"median of runs: {statistics.median(per_run):.0f} µs CPU per email")
        for kind, (sender, subject, _) in enumerate(KINDS):
            print(f"  {statistics.median(per_kind[kind]):6.0f} µs  {sender[:40]:40}  {subject[:30]}")
        print("decisions:", dict(sorted(decisions.items())))


if __name__ == "__main__":
    main()
