#!/usr/bin/env python3
"""Which of H0's modules run for one approved note, in each of the three processes.

    .venv/bin/python scripts/bench/send_path_modules.py            # prints the count and the modules

A real `h0 watch` (with its vault and mail servers) on a fresh vault and the fake Gmail; a `.pth`
file put into this virtual environment for the run installs a `sys.setprofile` /
`threading.setprofile` hook in every Python process that starts, off until `SIGUSR1`. Five sends
warm the sessions; then the hook is switched on in the daemon and both servers, one draft is
renamed into Approved/, and once its `email_filed` record is in Logs/ the hook is switched off
(`SIGUSR2`) and each process writes the H0 source files that had a function called in the window.
Dashboard and briefing are off. The window also holds what the daemon does for any file that
changes (the vault index kept fresh), so the count is an upper bound of the send path proper.
"""

from __future__ import annotations

import json
import os
import signal
import site
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TRACER = """
import os, signal, sys, threading
_D = os.environ.get("H0_TRACE_DIR")
if _D:
    _on = [False]
    _seen = set()

    def _prof(frame, event, arg):
        if _on[0] and event == "call":
            _seen.add(frame.f_code.co_filename)

    def _start(sig, f):
        _seen.clear()
        _on[0] = True

    def _stop(sig, f):
        _on[0] = False
        with open(os.path.join(_D, f"{os.getpid()}.json"), "w") as out:
            out.write(__import__("json").dumps({"argv": sys.argv, "files": sorted(_seen)}))

    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _stop)
    sys.setprofile(_prof)
    threading.setprofile(_prof)
"""


def h0_modules(files: list[str]) -> set[str]:
    package = str(ROOT / "h0") + os.sep
    return {f[len(package) :] for f in files if f.startswith(package)}


def filed(vault: Path, name: str) -> bool:
    for log in (vault / "Logs").glob("*.jsonl"):
        for line in log.read_text().splitlines():
            if '"email_filed"' in line and name in line:
                return True
    return False


def main() -> int:
    import bench_pipeline as bp
    from benchlib import draft_text, fresh_vault, stage_drafts, time_one_send

    from tests.fakes.fake_gmail import FakeGmail

    packages = Path(site.getsitepackages()[0])
    hook = packages / "zz_h0_send_path_trace.pth"
    tracer = packages / "_h0_send_path_trace.py"
    tracer.write_text(TRACER)
    hook.write_text("import _h0_send_path_trace\n")
    out = Path(tempfile.mkdtemp(prefix="h0-trace-"))
    os.environ["H0_TRACE_DIR"] = str(out)
    try:
        with tempfile.TemporaryDirectory(prefix="h0-trace-") as tmp, FakeGmail() as gmail:
            vault = fresh_vault(Path(tmp))
            token = gmail.write_token(Path(tmp) / "token.json")
            stage_drafts(vault, {f"t-{i}.md": draft_text(i) for i in range(6)})
            daemon = bp.Daemon(vault, gmail, token, mode="off")
            try:
                for i in range(5):
                    time_one_send(vault, gmail, f"t-{i}.md")
                time.sleep(1.0)
                pids = daemon.pids()
                for pid in pids.values():
                    os.kill(pid, signal.SIGUSR1)
                time.sleep(0.3)
                time_one_send(vault, gmail, "t-5.md")
                deadline = time.monotonic() + 10
                while not filed(vault, "t-5.md"):
                    if time.monotonic() > deadline:
                        raise RuntimeError("t-5.md was not filed within 10 s")
                    time.sleep(0.002)
                for pid in pids.values():
                    os.kill(pid, signal.SIGUSR2)
                time.sleep(1.0)
            finally:
                daemon.stop()
    finally:
        hook.unlink()
        tracer.unlink()
    union: set[str] = set()
    for result in sorted(out.glob("*.json")):
        data = json.loads(result.read_text())
        modules = h0_modules(data["files"])
        union |= modules
        print(f"{' '.join(data['argv'][1:]) or data['argv'][0]}: {len(modules)} modules")
        print("   " + " ".join(sorted(modules)))
    print(f"distinct H0 modules that ran for one approved note: {len(union)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
