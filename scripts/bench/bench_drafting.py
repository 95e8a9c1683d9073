"""Context assembly for a reply (issue 22): how long `Drafting.context_for_email` takes on a 10,000-note
vault, and whether the facts a good reply needs are in it.

The generated vault (gen_vault.py, cached) gets the drafting fixture's People, Projects, Meetings and
Done/ notes added, and the 23 fixture emails are drafted for, in rounds:

- index, fed: the vault index kept fresh by a watcher (the daemon, the vault server) — the usual case;
- index, checked: the index reconciled by a stat walk before each context (h0 sweep, polling watcher);
- scan: the index-free fallback (h0.drafting.knowledge.VaultKnowledge), warm.

Prints p50/p99 per mode and the share of emails whose facts are in the context. Assembly makes no
LLM call (the owner's notes travel in triage's one prompt).

    .venv/bin/python scripts/bench/bench_drafting.py [--notes 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from gen_vault import Params, ensure_vault

from h0.drafting import Drafting, VaultKnowledge
from h0.drafting.indexed import IndexKnowledge
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.model import note_facts

PRIVATE = Disclosure(("journal",))

FIXTURE = REPO / "tests" / "fixtures" / "drafting"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    source, _ = ensure_vault(Params(notes=args.notes), quiet=True)
    emails = json.loads((FIXTURE / "emails.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="h0-bench-drafting-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(source, vault, symlinks=True)
        shutil.copytree(FIXTURE / "vault", vault, dirs_exist_ok=True)
        state = Path(tmp) / "state"
        started = time.perf_counter()
        index = VaultIndex.open(vault, state, PRIVATE)
        build_s = time.perf_counter() - started
        modes = {
            # "fed" as the daemon's watcher makes it: the index trusted between the watcher's reports
            "index, fed": Drafting(vault, disclosure=PRIVATE, knowledge=IndexKnowledge(index), watched=lambda: True),
            "index, checked": Drafting(vault, disclosure=PRIVATE, knowledge=IndexKnowledge(index)),
            "scan": Drafting(vault, disclosure=PRIVATE, knowledge=VaultKnowledge(vault, PRIVATE)),
        }
        print(f"vault: {args.notes:,} generated notes + the drafting fixture; index built in {build_s:.1f} s")
        print(f"{'mode':<16} {'p50 ms':>8} {'p99 ms':>8} {'facts':>7}")
        for name, drafting in modes.items():
            header = lambda e: note_facts("", {"from": e["from"], "subject": e["subject"]})
            drafting.context_for_email(header(emails[0]), emails[0]["body"])  # warm (the scan's first walk)
            times: list[float] = []
            hits = 0
            for round_no in range(args.rounds):
                for email in emails:
                    t0 = time.perf_counter()
                    context = drafting.context_for_email(header(email), email["body"])
                    times.append((time.perf_counter() - t0) * 1000)
                    if round_no == 0:
                        hits += all(fact in context.text() for fact in email["facts"])
            print(f"{name:<16} {statistics.median(times):8.2f} {pct(times, 99):8.2f} {hits / len(emails):7.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
