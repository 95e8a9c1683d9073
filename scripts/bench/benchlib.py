"""What the pipeline, watcher and ingest benchmarks share: percentiles, a fresh vault, timed sends."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from h0.vault import init_vault


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fresh_vault(tmp: Path) -> Path:
    vault = tmp / "vault"
    vault.mkdir()
    init_vault(vault)
    return vault


def draft_text(i: int) -> str:
    return f"---\nto: person{i}@example.com\nsubject: Bench {i}\n---\nHello {i},\n\nThis is message {i}.\n"


def stage_drafts(vault: Path, drafts: dict[str, str], *, read_for: float = 60.0) -> None:
    """Write drafts into Drafts/ as a human finds them: written `read_for` seconds ago (before the
    daemon starts), so approving one is not "changed moments before you approved it" (h0.vault.last_change)."""
    then = time.time() - read_for
    for name, text in drafts.items():
        path = vault / "Drafts" / name
        path.write_text(text)
        os.utime(path, (then, then))


def time_one_send(vault: Path, gmail: Any, name: str, what: str = "") -> float:
    """Move Drafts/name into Approved/ (the human's drag) and wait for the fake Gmail to receive it
    and for the note to be filed in Done/; the rename → received latency in milliseconds."""
    before = len(gmail.sent)
    start = time.time()
    os.rename(vault / "Drafts" / name, vault / "Approved" / name)
    deadline = time.monotonic() + 30
    while len(gmail.sent) == before:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} was not sent within 30 s{f' ({what})' if what else ''}")
        time.sleep(0.0005)
    latency = (gmail.sent[-1].received_at - start) * 1000
    while not (vault / "Done" / name).exists():
        time.sleep(0.001)
    return latency
