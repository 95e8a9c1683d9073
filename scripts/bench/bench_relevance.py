#!/usr/bin/env python3
"""How much of the owner's notes in a reply's prompt is about the email: the unrelated owner-note
share on the persona fixture (issue 32: goal ≤ 15 %, 44 % before), and the facts present (≥ 95 %).

The persona fixture (tests/fixtures/persona/: a consultant's People, Projects, Meetings, Notes, a
private journal, 23 emails) labels, per email, the notes a good assistant would consult
(`relevant`) and the facts a good reply needs (`facts`). For each email the context is assembled as
a draft would get it (the vault index; `--scan` for the index-free fallback), and the owner-note
items (the sender's People notes, what they link to, related notes) are measured:

    unrelated share = characters of items from notes not labelled relevant / characters of all such items
    facts present   = facts found in the context / facts labelled

No model is called: this is what would reach one. Deterministic; one run suffices.

`--world` measures the same on the labelled world (scripts/world/, docs/judgments.md): ~350 emails of people
who need a reply, each labelled with the notes a good reply needs, their past and similar replies judged too,
and the owner's own replies of the email's thread counted when they are given again (scripts/world/context.py).

    .venv/bin/python scripts/bench/bench_relevance.py [--scan] [--verbose] [--json figures.json]
    .venv/bin/python scripts/bench/bench_relevance.py --world [--misses 20] [--json figures.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from h0.drafting import Drafting, VaultKnowledge
from h0.drafting.service import indexed_knowledge
from h0.vault import init_vault
from h0.vault.disclosure import Disclosure, folder_keys
from h0.vault.model import note_facts

FIXTURE = REPO / "tests" / "fixtures" / "persona"
OWNER_NOTE_KINDS = ("person", "linked", "related")


def measure(scan: bool = False, verbose: bool = False) -> dict[str, object]:
    spec = json.loads((FIXTURE / "emails.json").read_text(encoding="utf-8"))
    private = Disclosure(folder_keys(spec["private_folders"]))
    with tempfile.TemporaryDirectory(prefix="h0-bench-relevance-") as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(FIXTURE / "vault", root)
        init_vault(root)
        knowledge = VaultKnowledge(root, private) if scan else indexed_knowledge(root, Path(tmp) / "state", private)
        drafting = Drafting(root, disclosure=private, knowledge=knowledge)
        total = unrelated = 0
        facts = found = 0
        leaks: list[str] = []
        rows = []
        for email in spec["emails"]:
            context = drafting.context_for_email(
                note_facts("", {"from": email["from"], "subject": email["subject"]}), email["body"]
            )
            text = context.text()
            relevant = set(email["relevant"])
            owner = [i for i in context.items if i.kind in OWNER_NOTE_KINDS]
            size = sum(len(i.text) for i in owner)
            extra = [i for i in owner if i.path not in relevant]
            total += size
            unrelated += sum(len(i.text) for i in extra)
            facts += len(email["facts"])
            missing = [f for f in email["facts"] if f not in text]
            found += len(email["facts"]) - len(missing)
            leaks += [f"{email['id']}: {s}" for s in spec["secrets"] if s in text]
            rows.append((email["id"], [(i.path, i.why) for i in extra], missing))
        if verbose:
            for email_id, extra, missing in rows:
                if extra or missing:
                    print(f"  {email_id}: unrelated {extra}; facts missing {missing}")
        return {
            "emails": len(spec["emails"]),
            "source": "scan" if scan else "index",
            "unrelated_share": unrelated / total if total else 0.0,
            "owner_note_chars": total,
            "facts_present": found / facts if facts else 1.0,
            "facts": facts,
            "private_leaks": leaks,
        }


def measure_world(seed: int, misses: int) -> dict[str, object]:
    """The context judged on the labelled world (scripts/world/context.py), printed."""
    from scripts.world.context import judge_context
    from scripts.world.generate import HARD_CASES, build_world
    from scripts.world.judge import read_world
    from scripts.world.model import load_truths

    world = build_world(seed)
    truths = load_truths(world / "labels.jsonl") + load_truths(HARD_CASES / "labels.jsonl")
    figures = judge_context(world, read_world([world / "world.mbox", HARD_CASES], truths))
    print(f"world: {world} — {figures.emails} emails that need a reply, drafted for as of their date")
    for line in figures.lines(misses):
        print(line)
    result: dict[str, object] = dict(figures.as_dict())
    if figures.hard is not None:
        print(f"\nthe hand-written hard cases alone ({figures.hard.emails} emails):")
        for line in figures.hard.lines(misses):
            print(line)
        result["hard_cases"] = figures.hard.as_dict()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scan", action="store_true", help="the index-free knowledge source")
    parser.add_argument("--verbose", action="store_true", help="name each unrelated note and missing fact")
    parser.add_argument("--world", action="store_true", help="the labelled world (scripts/world/) instead")
    parser.add_argument("--seed", type=int, default=41, help="the world's seed (with --world)")
    parser.add_argument("--misses", type=int, default=8, help="unrelated items shown by name (with --world)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.world:
        world = measure_world(args.seed, args.misses)
        if args.json:
            args.json.write_text(json.dumps(world, indent=2), encoding="utf-8")
        notes = float(world["owner_notes_unrelated_items"]), float(world["owner_notes_unrelated_chars"])  # type: ignore[arg-type]
        return 0 if max(notes) <= 0.15 and not world["thread_replies_repeated"] else 1
    figures = measure(args.scan, args.verbose)
    share, present = float(figures["unrelated_share"]), float(figures["facts_present"])  # type: ignore[arg-type]
    ok = share <= 0.15 and present >= 0.95 and not figures["private_leaks"]
    print(
        f"relevance ({figures['source']}, {figures['emails']} emails): unrelated owner-note share {share:.1%} "
        f"(goal ≤ 15 %), facts present {present:.1%} of {figures['facts']} (goal ≥ 95 %), "
        f"private leaks {len(figures['private_leaks'])} — {'PASS' if ok else 'MISS'}"  # type: ignore[arg-type]
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
