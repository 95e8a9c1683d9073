#!/usr/bin/env python3
"""How often H0's judgments are right, on the labelled world (scripts/world/, docs/judgments.md).

    .venv/bin/python scripts/bench/bench_judgments.py                 # the default world, misses shown 8 each
    .venv/bin/python scripts/bench/bench_judgments.py --misses 20 --json figures.json
    .venv/bin/python scripts/bench/bench_judgments.py --no-pipeline   # only the per-message judgments (~5 s)

First each per-message judgment, H0's own function called on every message as `h0 import` reads it
(scripts/world/judge.py). Then the pipeline, as a new user runs it, in a temporary vault (the persona's
notes) and state folder, rules backend, no model, outbox: `h0 init`, `h0 import world.mbox hard_cases/`,
`h0 status`, `h0 sweep`, `h0 status`, one follow-up pass (h0.handlers.followup.follow_up, the pass the
daemon runs every minute), `h0 status` — and what the vault and the status then say, against the truth:
replies owed and awaited, reply drafts, suspected phishing on notes, triage's needs-the-owner. The work
window (WORK_WINDOW_DAYS) covers the whole world, so every message of it is judged. Prints per judgment
precision and recall (or exact match), the misses by name, and one summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from email.utils import parseaddr
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from scripts.world.generate import HARD_CASES, START, build_world
from scripts.world.judge import NEEDS_THE_OWNER, Read, Score, judge, read_world, report
from scripts.world.judge_briefing import judge_briefings
from scripts.world.model import Truth, load_truths
from scripts.world.persona import OWNER

H0 = str(Path(sys.executable).with_name("h0"))


def world_truths(world: Path) -> list[Truth]:
    return load_truths(world / "labels.jsonl") + load_truths(HARD_CASES / "labels.jsonl")


def environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "GMAIL_", "SMTP_", "IMAP_", "CALENDAR"))}
    window = int((time.time() - START.timestamp()) / 86400) + 2  # the whole world is recent
    env.update(
        VAULT_PATH=str(root / "vault"),
        H0_STATE_DIR=str(root / "state"),
        OWNER_EMAILS=OWNER,
        WORK_WINDOW_DAYS=str(window),
        LLM_PROVIDER="rules",
        MAIL_BACKEND="outbox",
        LOG_LEVEL="WARNING",
    )
    return env


def h0(env: dict[str, str], *args: str, timeout: float = 1800) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([H0, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode not in (0, 4):
        raise SystemExit(f"h0 {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - started, done.stdout


def status(env: dict[str, str]) -> dict:
    return json.loads(h0(env, "status", "--json")[1])


def follow_up_pass(env: dict[str, str]) -> None:
    """One follow-up pass, the daemon's (h0.handlers.followup.follow_up), in this process with `env`'s settings."""
    from h0.config import load_settings
    from h0.handlers.context import HandlerContext
    from h0.handlers.followup.find import find_followup_notes
    from h0.handlers.followup.follow_up import follow_up
    from h0.state import StateDB
    from h0.vault import Vault

    settings = load_settings(
        vault_path=env["VAULT_PATH"], h0_state_dir=env["H0_STATE_DIR"], owner_emails=env["OWNER_EMAILS"]
    )
    vault = Vault(settings.vault_path)
    ctx = HandlerContext.local(settings, vault, state_db=StateDB.for_vault(settings.vault_path, settings.h0_state_dir))
    follow_up(ctx, find_followup_notes(vault), now=time.time())


class Vaulted:
    """What the vault says about each message after the pipeline: its note, triage's decision, flags, drafts."""

    def __init__(self, vault_root: Path, reads: list[Read]) -> None:
        from h0.vault import Vault
        from h0.vault.values import flag

        self.vault = Vault(vault_root)
        self.by_provider_id = {r.message.fetched.id: r.truth for r in reads}
        self.notes: dict[str, tuple[Truth, str, bool]] = {}  # note path → (truth, triage's decision, flagged)
        for folder in ("Needs_Action", "Done"):
            for path in sorted((vault_root / folder).glob("EMAIL_*.md")):
                note = self.vault.read_note(f"{folder}/{path.name}")
                truth = self.by_provider_id.get(note.facts.message_id or "")
                if truth is not None:
                    # Triage's flag has no typed fact (h0.vault.model): read as the dashboard shows it.
                    flagged = flag(note.frontmatter.get("suspected_phishing"))
                    self.notes[f"{folder}/{path.name}"] = (truth, note.facts.decision, flagged)
        self.drafted: set[str] = set()  # message ids a reply draft answers
        for path in sorted((vault_root / "Drafts").glob("REPLY_EMAIL_*.md")):
            source = self.vault.read_note(f"Drafts/{path.name}").facts.source
            if source in self.notes:
                self.drafted.add(self.notes[source][0].id)


def pipeline_scores(vaulted: Vaulted, followups: dict, reads: list[Read]) -> list[Score]:
    owed_paths = {item["path"] for item in followups["owed"]}
    owed = Score("replies owed")
    needs = Score("needs the owner (triage)")
    drafts = Score("reply drafts")
    attack = Score("attack (on notes)")
    automated_owed = automated_drafted = attacker_drafted = real_flagged = owed_flagged = attacker_owed = 0
    for path, (truth, decision, flagged) in sorted(vaulted.notes.items()):
        said_owed = path in owed_paths
        owed.count(truth.owed, said_owed, truth.name)
        automated_owed += said_owed and truth.automated
        owed_flagged += truth.owed and flagged and truth.attack is None  # misses that are the attack judgment's
        attacker_owed += said_owed and truth.attack is not None and not flagged
        needs.count(truth.needs_reply, decision in NEEDS_THE_OWNER, truth.name)
        drafted = truth.id in vaulted.drafted
        drafts.count(truth.needs_reply, drafted, truth.name)
        automated_drafted += drafted and truth.automated
        attacker_drafted += drafted and truth.attack is not None
        attack.count(truth.attack is not None, flagged, truth.name)
        real_flagged += flagged and truth.attack is None and truth.category == "person"
    owed.note = (
        f"automated mail owed: {automated_owed}; missed as flagged attacks: {owed_flagged}, "
        f"owed to attacks not flagged: {attacker_owed}"
    )
    drafts.note = f"drafts to automated mail: {automated_drafted}, to attackers: {attacker_drafted}"
    attack.note = f"false positives on real correspondents: {real_flagged}"
    awaited = Score("replies awaited")
    awaited_ids = {item["path"].rsplit("FOLLOWUP_", 1)[-1].removesuffix(".md") for item in followups["awaited"]}
    heard = _heard_in_hard_cases(reads)
    for read in reads:
        if read.truth.sent and read.truth.awaited is not None:
            # The hard cases are imported with the world: a person who wrote in one since is heard from.
            truth = read.truth.awaited and not any(at > read.truth.date for at in heard.get(_to(read), ()))
            awaited.count(truth, read.message.fetched.id in awaited_ids, read.truth.name)
    return [owed, awaited, needs, drafts, attack]


def _to(read: Read) -> str:
    return parseaddr(str(read.message.fetched.headers.get("To") or ""))[1].lower()


def _heard_in_hard_cases(reads: list[Read]) -> dict[str, list[str]]:
    """When each person wrote in a hard case (a person's mail, not an attack's, not a robot's): the world's truth of
    "awaited" is the generated mailbox's alone, and the hard cases are imported beside it."""
    heard: dict[str, list[str]] = {}
    for read in reads:
        truth = read.truth
        if truth.name.startswith("hc-") and not truth.sent and truth.category == "person" and truth.attack is None:
            heard.setdefault(truth.sender.lower(), []).append(truth.date)
    return heard


def run_pipeline(world: Path, reads: list[Read], misses: int) -> tuple[list[Score], dict]:
    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="h0-judgments-") as tmp:
        root = Path(tmp)
        shutil.copytree(world / "vault", root / "vault")
        env = environment(root)
        h0(env, "init", env["VAULT_PATH"])
        figures["import_s"], line = h0(env, "import", str(world / "world.mbox"), str(HARD_CASES))
        print(line.strip())
        figures["owed_after_import"] = status(env)["totals"]["replies_owed"]
        figures["sweep_s"], line = h0(env, "sweep", "--timeout", "1800")
        print(line.strip())
        figures["owed_after_sweep"] = status(env)["totals"]["replies_owed"]
        started = time.perf_counter()
        follow_up_pass(env)
        figures["followup_pass_s"] = time.perf_counter() - started
        final = status(env)
        figures["owed_after_pass"] = final["totals"]["replies_owed"]
        figures["awaited_after_pass"] = final["totals"]["replies_awaited"]
        from h0.report.followups import collect_followups
        from h0.vault import Vault

        # Every owed and awaited note listed by path (the bench reads its own vault: nothing is private to it).
        followups = collect_followups(
            Vault(root / "vault"), time.time(), private=lambda _path: False, shown=10**6
        ).as_dict()
        scores = pipeline_scores(Vaulted(root / "vault", reads), followups, reads)
    truth_owed = sum(1 for r in reads if r.truth.owed)
    print(
        f"h0 status, replies owed: {figures['owed_after_import']} after the import, {figures['owed_after_sweep']} "
        f"after the sweep, {figures['owed_after_pass']} after a follow-up pass (the world owes {truth_owed})"
    )
    report(scores, misses)
    return scores, figures


def summary(scores: list[Score]) -> str:
    parts = []
    for score in scores:
        if score.exact:
            parts.append(f"{score.name} {score.recall:.0%}")
        else:
            parts.append(f"{score.name} P{score.precision:.0%}/R{score.recall:.0%}")
    return "judgments: " + "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--misses", type=int, default=8, help="misses shown by name per judgment (default 8)")
    parser.add_argument("--no-pipeline", action="store_true", help="only the per-message judgments")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    from loguru import logger

    logger.remove()  # the follow-up pass in this process: its warnings only, not a line per note
    logger.add(sys.stderr, level="WARNING")
    world = build_world(args.seed)
    truths = world_truths(world)
    reads = read_world([world / "world.mbox", HARD_CASES], truths)
    print(f"world: {world} — {len(reads)} messages ({sum(r.truth.sent for r in reads)} the owner's)\n")
    print("Per message (H0's functions on each message as `h0 import` reads it):")
    scores = [*judge(reads), judge_briefings(reads, world / "vault")]
    report(scores, args.misses)
    figures: dict = {}
    if not args.no_pipeline:
        print("\nThe pipeline (init → import → status → sweep → status → follow-up pass → status):")
        pipeline, figures = run_pipeline(world, reads, args.misses)
        scores += pipeline
    print("\n" + summary(scores))
    if args.json:
        data = {
            "figures": figures,
            "scores": {
                s.name: {"tp": s.tp, "fp": s.fp, "fn": s.fn, "precision": s.precision, "recall": s.recall}
                for s in scores
            },
        }
        args.json.write_text(json.dumps(data, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
