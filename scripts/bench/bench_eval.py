"""`h0 eval`, measured: how long it takes, what it says right after an import, and how often its judge agrees
with a person (docs/eval.md).

    .venv/bin/python scripts/bench/bench_eval.py [--runs 3] [--limit 20] [--skip-world]

1. **The persona** (scripts/persona_vault.py, 20 of Alex's replies in Done/): the wall time of each whole
   `h0 eval` process (start-up included), in rules mode and against a recording fake OpenAI-compatible model
   (tests/triage/fake_llm.py, answering at once); the goal is ≤ 10 s for 20 replies with the fake model.
2. **The world right after an import** (scripts/world/: `h0 init`, `h0 import world.mbox`, no `--as-notes`,
   the default work window): `h0 eval` in rules mode, with a fake model answering the same few lines to every
   email, and with an *oracle* — a fake model that answers each email with the owner's own reply to it (found
   by the email's words in the prompt). The oracle shows what the pipeline itself does to a perfect answer
   (greeting and sign-off replaced by the owner's, the language checked): send-ready should be near 100 %.
3. **The judge** (h0.drafting.sendready) on the world's labelled candidate drafts (scripts/world/candidates.py)
   and the hand-written ones (hard_cases/eval_drafts.jsonl): its agreement with the labels, per variant, and
   the agreement difflib's ratio ≥ 0.8 (the old test) would have on the same labels.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.triage.fake_llm import FakeLLM, Seen, openai_answer

H0 = str(Path(sys.executable).with_name("h0"))
BODY = "Hi there,\n\nThanks, I will check and come back to you.\n\nCheers,\nAlex"
_REPLY_BLOCK = re.compile(r"<reply-([0-9a-f]+)>\n(.*?)\n</reply-\1>", re.DOTALL)
_EMAIL_BLOCK = re.compile(r"<email-([0-9a-f]+)>\n(.*?)\n</email-\1>", re.DOTALL)


def run_eval(env: dict[str, str], *args: str) -> tuple[float, str, str]:
    start = time.perf_counter()
    done = subprocess.run([H0, "eval", "--no-note", *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"h0 eval failed: {done.stderr}")
    return elapsed, done.stdout, done.stdout.strip().splitlines()[-1]


def model_env(fake: FakeLLM) -> dict[str, str]:
    return {"LLM_PROVIDER": "openai", "LLM_MODEL": "fake", "LLM_API_KEY": "sk-bench", "LLM_BASE_URL": f"{fake.url}/v1"}


def answering(body: Callable[[Seen], str]) -> Callable[[Seen], object]:
    def answer(seen: Seen) -> object:
        if "Triage this email" not in seen.last_text:  # a re-ask for the reply's language: its words again
            asked = _REPLY_BLOCK.search(seen.last_text)
            return openai_answer(json.dumps({"reply_body": asked.group(2) if asked else body(seen)}))
        decision = {"decision": "draft_reply", "confidence": 0.9, "reasoning": "q", "reply_body": body(seen)}
        return openai_answer(json.dumps(decision))

    return answer


def persona(runs: int, tmp: Path) -> None:
    vault = tmp / "persona"
    recorded = tmp / "state-persona"  # where the persona's sent mail is recorded as Alex's (owner identity)
    subprocess.run(
        [sys.executable, str(REPO / "scripts/persona_vault.py"), str(vault)],
        check=True,
        capture_output=True,
        env={**os.environ, "H0_STATE_DIR": str(recorded)},
    )
    print("1. The persona (20 of Alex's replies in Done/):")
    with FakeLLM() as fake:
        fake.respond_with(answering(lambda _seen: BODY))  # type: ignore[arg-type]
        for name, extra in {"rules": {"LLM_PROVIDER": "rules"}, "fake model": model_env(fake)}.items():
            times: list[float] = []
            summary = ""
            for run in range(runs):
                state = tmp / f"state-{name}-{run}"  # each run from the persona's state, nothing cached
                shutil.copytree(recorded, state)
                env = {**os.environ, "VAULT_PATH": str(vault), "H0_STATE_DIR": str(state)}
                env.update(OWNER_EMAILS="alex@northwind.example", **extra)
                elapsed, _, summary = run_eval(env)
                times.append(elapsed)
            shown = ", ".join(f"{t:.2f}" for t in times)
            print(f"  {name:>10}: median {statistics.median(times):.2f} s (runs: {shown}) — {summary}")
        print(f"  model calls made: {len(fake.requests)} ({len(fake.requests) // runs} a run)")


def world(limit: int, tmp: Path) -> None:
    from scripts.world.candidates import eval_pairs
    from scripts.world.generate import build_world
    from scripts.world.judge import read_world
    from scripts.world.model import load_truths
    from scripts.world.persona import OWNER

    built = build_world()
    reads = read_world([built / "world.mbox"], load_truths(built / "labels.jsonl"))
    pairs = eval_pairs(reads, built / "vault")
    shutil.copytree(built / "vault", tmp / "world")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "GMAIL_", "SMTP_", "IMAP_", "CALENDAR"))}
    env.update(VAULT_PATH=str(tmp / "world"), H0_STATE_DIR=str(tmp / "state-world"), OWNER_EMAILS=OWNER)
    env.update(MAIL_BACKEND="outbox", LOG_LEVEL="WARNING", LLM_PROVIDER="rules")
    subprocess.run([H0, "init", str(tmp / "world")], env=env, check=True, capture_output=True)
    started = time.perf_counter()
    imported = subprocess.run(
        [H0, "import", str(built / "world.mbox")], env=env, check=True, capture_output=True, text=True
    )
    print(
        f"\n2. The world right after an import ({time.perf_counter() - started:.1f} s): {imported.stdout.splitlines()[0]}"
    )
    elapsed, _, summary = run_eval(env, "--limit", str(limit))
    print(f"  rules: {elapsed:.2f} s — {summary}")
    ambiguous = 0

    def oracle(seen: Seen) -> str:
        nonlocal ambiguous
        found = _EMAIL_BLOCK.search("\n".join(seen.texts))
        text = found.group(2) if found else ""
        matches = [p for p in pairs if p.email_text.strip()[:300] in text]
        ambiguous += len({p.reply.reply_text for p in matches}) > 1
        return matches[-1].reply.reply_text or BODY if matches else BODY

    for name, body in (
        ("fake model (the same lines to every email)", lambda _seen: BODY),
        ("oracle (her own reply)", oracle),
    ):
        with FakeLLM() as fake:
            fake.respond_with(answering(body))  # type: ignore[arg-type]
            elapsed, _, summary = run_eval({**env, **model_env(fake)}, "--limit", str(limit))
        print(f"  {name}: {elapsed:.2f} s — {summary}")
    print(
        f"  (the oracle found several replies for one email's words {ambiguous} time(s): it answered with one of them)"
    )


def judge() -> None:
    from h0.drafting.learning import SEND_READY_SIMILARITY, similarity
    from scripts.world.candidates import agreement, candidates, eval_pairs, hand_written
    from scripts.world.generate import HARD_CASES, build_world
    from scripts.world.judge import read_world
    from scripts.world.model import load_truths

    built = build_world()
    reads = read_world([built / "world.mbox"], load_truths(built / "labels.jsonl"))
    labelled = candidates(eval_pairs(reads, built / "vault"))
    written = hand_written(HARD_CASES / "eval_drafts.jsonl")
    print("\n3. The judge against the labels (would a person send the draft as it is?):")
    for name, found in (("world candidates", labelled), ("hand-written", written)):
        started = time.perf_counter()
        score = agreement(found)
        elapsed = time.perf_counter() - started
        difflib = sum((similarity(c.draft, c.reference) >= SEND_READY_SIMILARITY) == c.send_ready for c in found)
        print(f"  {score.line(name)} — {elapsed / max(1, score.total) * 1000:.1f} ms a draft")
        print(
            f"  {'':<22} difflib ≥ {SEND_READY_SIMILARITY} on the same labels: {difflib / len(found):.1%} ({difflib}/{len(found)})"
        )
        for variant, (agreed, total) in sorted((score.by_variant or {}).items()):
            print(f"    {variant:<16} {agreed}/{total}")
        if score.disagreed:
            print(f"    disagreed: {', '.join(score.disagreed[:8])}{' …' if len(score.disagreed) > 8 else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--limit", type=int, default=20, help="replies `h0 eval` drafts again in the world (default 20)"
    )
    parser.add_argument("--skip-world", action="store_true", help="the persona's timings and the judge only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        persona(args.runs, Path(tmp))
        if not args.skip_world:
            world(args.limit, Path(tmp))
    judge()


if __name__ == "__main__":
    main()
