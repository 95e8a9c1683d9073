"""`h0 eval` on the bundled persona: 20 of Alex's replies drafted again and scored, in rules mode and
against a recording fake OpenAI-compatible model (tests/triage/fake_llm.py, answering at once).

    .venv/bin/python scripts/bench/bench_eval.py [--runs 3]

Prints the wall time of each whole `h0 eval` process (start-up included) and the median; the goal is
≤ 10 s for 20 replies with the fake model.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.triage.fake_llm import FakeLLM, openai_answer

H0 = str(Path(sys.executable).with_name("h0"))
BODY = "Hi there,\n\nThanks, I will check and come back to you.\n\nCheers,\nAlex"


def run_eval(vault: Path, state: Path, extra: dict[str, str]) -> tuple[float, str]:
    env = {**os.environ, "VAULT_PATH": str(vault), "H0_STATE_DIR": str(state), "OWNER_EMAILS": "alex@northwind.example"}
    env.update(extra)
    start = time.perf_counter()
    done = subprocess.run([H0, "eval", "--no-note"], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"h0 eval failed: {done.stderr}")
    return elapsed, done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "persona"
        recorded = Path(tmp) / "state-persona"  # where the persona's sent mail is recorded as Alex's (owner identity)
        subprocess.run(
            [sys.executable, str(REPO / "scripts/persona_vault.py"), str(vault)],
            check=True,
            capture_output=True,
            env={**os.environ, "H0_STATE_DIR": str(recorded)},
        )
        answer = json.dumps({"decision": "draft_reply", "confidence": 0.9, "reasoning": "q", "reply_body": BODY})
        with FakeLLM() as fake:
            fake.respond_with(lambda _seen: openai_answer(answer))
            modes = {
                "rules": {"LLM_PROVIDER": "rules"},
                "fake model": {
                    "LLM_PROVIDER": "openai",
                    "LLM_MODEL": "fake",
                    "LLM_API_KEY": "sk-bench",
                    "LLM_BASE_URL": f"{fake.url}/v1",
                },
            }
            for name, extra in modes.items():
                times: list[float] = []
                summary = ""
                for run in range(args.runs):
                    state = Path(tmp) / f"state-{name}-{run}"  # each run from the persona's state, nothing cached
                    shutil.copytree(recorded, state)
                    elapsed, summary = run_eval(vault, state, extra)
                    times.append(elapsed)
                runs = ", ".join(f"{t:.2f}" for t in times)
                print(f"{name:>10}: median {statistics.median(times):.2f} s (runs: {runs}) — {summary}")
            print(f"model calls made: {len(fake.requests)} ({len(fake.requests) // args.runs} a run)")


if __name__ == "__main__":
    main()
