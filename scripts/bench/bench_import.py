"""Benchmark `h0 import` of a realistic mailbox (issue 30), then the `h0 sweep` and `h0 status` after it.

    .venv/bin/python scripts/bench/bench_import.py                 # 50,000 messages, 1 run
    .venv/bin/python scripts/bench/bench_import.py --messages 5000 --runs 3

Generates (seeded, cached in scripts/bench/.cache/) an mbox of N messages over two years: threads of
1–6 messages, a third with an HTML alternative, one in eight with an attachment, 10 % written by the
owner (replies in their threads, with a greeting and sign-off). Each run imports it into a fresh vault
and state folder in a child process and reports wall time and the child's peak RSS (os.wait4's
rusage), then runs `h0 sweep` (triage with the rules engine and drafting context: drafts only for the
recent mail) and `h0 status`. Goals: import ≤ 120 s and ≤ 200 MB on 2 cores; sweep ≤ 60 s; status ≤ 2 s.
Prints medians of the runs. Figures are noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import email.utils
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(__file__).resolve().parent / ".cache"
H0 = str(Path(sys.executable).with_name("h0"))
OWNER = "alex@home.example"
PEOPLE = [f"person{i}@corp{i % 37}.example" for i in range(400)]
WORDS = (
    "budget review friday meeting invoice contract schedule draft figures launch plan quarter report "
    "travel hotel offer proposal deadline client update question answer project design team"
).split()
HTML = "<html><body><p>{text}</p><table><tr><td>{a}</td><td>{b}</td></tr></table></body></html>"


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "?"


def generate(path: Path, count: int, seed: int = 30) -> Path:
    """The mbox: `count` messages over the last two years, in threads, 10 % the owner's."""
    if path.exists():
        return path
    rng = random.Random(seed)
    now = time.time()
    span = 730 * 86400.0
    attachment = ("A" * 76 + "\n") * 40  # ~3 KB of base64
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8", newline="\n") as out:
        n = 0
        while n < count:
            person = rng.choice(PEOPLE)
            start = now - rng.random() * span
            root = f"<t{n}@bench.example>"
            subject = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} #{n}"
            previous = None
            for step in range(rng.randint(1, 6)):
                if n >= count:
                    break
                mine = rng.random() < 0.10 and step > 0
                sender = f"Alex <{OWNER}>" if mine else f"{person.split('@')[0].title()} <{person}>"
                to = person if mine else OWNER
                when = min(now - 60, start + step * rng.random() * 3 * 86400)
                msg_id = f"<m{n}@bench.example>"
                body = (
                    f"Hi {person.split('@')[0].title()},\n\n{_text(rng, 40)}\n\nCheers,\nAlex"
                    if mine
                    else f"{_text(rng, rng.randint(20, 200))}\n\n-- \n{person}"
                )
                head = [
                    f"From: {sender}",
                    f"To: {to}",
                    f"Subject: {'Re: ' if step else ''}{subject}",
                    f"Date: {email.utils.formatdate(when)}",
                    f"Message-ID: {msg_id}",
                    "MIME-Version: 1.0",
                ]
                if previous:
                    head += [f"In-Reply-To: {previous}", f"References: {root} {previous}"]
                if mine:
                    head.append("X-Gmail-Labels: Sent")
                html = rng.random() < 0.33
                attach = rng.random() < 0.125
                if html or attach:
                    head.append('Content-Type: multipart/mixed; boundary="b1"')
                    parts = ['--b1\nContent-Type: multipart/alternative; boundary="b2"\n']
                    parts.append(f"--b2\nContent-Type: text/plain; charset=utf-8\n\n{body}\n")
                    if html:
                        parts.append(
                            "--b2\nContent-Type: text/html; charset=utf-8\n\n"
                            + HTML.format(text=body.replace("\n", "<br>"), a=rng.choice(WORDS), b=rng.random())
                            + "\n"
                        )
                    parts.append("--b2--\n")
                    if attach:
                        parts.append(
                            "--b1\nContent-Type: application/pdf\nContent-Disposition: attachment; "
                            f'filename="doc{n}.pdf"\nContent-Transfer-Encoding: base64\n\n{attachment}'
                        )
                    parts.append("--b1--\n")
                    text = "\n".join(head) + "\n\n" + "".join(parts)
                else:
                    head.append("Content-Type: text/plain; charset=utf-8")
                    text = "\n".join(head) + "\n\n" + body + "\n"
                out.write(f"From bench@example {time.asctime(time.gmtime(when))}\n")
                out.write(text.replace("\nFrom ", "\n>From ") + "\n")
                previous = msg_id
                n += 1
    tmp.replace(path)
    return path


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, int, str, float]:
    """(seconds, peak RSS in MB, exit code, stdout, CPU seconds) of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    return elapsed, usage.ru_maxrss / 1024, child.returncode, out, usage.ru_utime + usage.ru_stime


def one_run(box: Path, keep: Path | None = None) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="h0-bench-import-")) if keep is None else keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        vault, state = work / "vault", work / "state"
        vault.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULT_", "H0_", "OWNER_", "LLM_"))}
        env.update(H0_ENV_FILE="", VAULT_PATH=str(vault), H0_STATE_DIR=str(state), OWNER_EMAILS=OWNER)
        subprocess.run([H0, "init", str(vault)], env=env, check=True, capture_output=True)
        seconds, rss, code, out, cpu = timed([H0, "import", str(box)], env)
        print(f"  import: {seconds:.1f} s ({cpu:.1f} s CPU), {rss:.0f} MB, exit {code}: {out.splitlines()[0]}")
        sweep_s, sweep_rss, code, out, sweep_cpu = timed([H0, "sweep", "--timeout", "600"], env)
        drafts = len(list((vault / "Drafts").glob("*.md")))
        print(
            f"  sweep:  {sweep_s:.1f} s ({sweep_cpu:.1f} s CPU), {sweep_rss:.0f} MB, exit {code}: {out.strip()[:160]}"
        )
        status_s, _, code, _, status_cpu = timed([H0, "status"], env)
        print(f"  status: {status_s:.2f} s ({status_cpu:.2f} s CPU), exit {code}; {drafts} drafts in Drafts/")
        return {
            "import_s": seconds,
            "import_cpu_s": cpu,
            "import_mb": rss,
            "sweep_s": sweep_s,
            "sweep_cpu_s": sweep_cpu,
            "status_s": status_s,
            "drafts": drafts,
        }
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="an empty folder: the run's vault and state stay there (to profile)")
    args = parser.parse_args()
    CACHE.mkdir(exist_ok=True)
    box = generate(CACHE / f"import-{args.messages}.mbox", args.messages)
    print(f"{box.name}: {box.stat().st_size / 1_048_576:.0f} MB, {args.messages} messages")
    runs = []
    for number in range(args.runs):
        print(f"run {number + 1}:")
        runs.append(one_run(box, args.keep))
    print(f"median of {len(runs)} run(s):")
    goals = (
        ("import_s", 120),
        ("import_cpu_s", None),
        ("import_mb", 200),
        ("sweep_s", 60),
        ("sweep_cpu_s", None),
        ("status_s", 2),
        ("drafts", None),
    )
    for key, goal in goals:
        value = statistics.median(r[key] for r in runs)
        print(f"  {key:10} {value:8.1f}" + (f"   (goal ≤ {goal})" if goal else ""))
    print("before (issue 30): 5,000 messages imported in 150 s; the sweep after it 101 s, 965 drafts to old mail")


if __name__ == "__main__":
    main()
