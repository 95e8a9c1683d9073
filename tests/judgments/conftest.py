"""The labelled world (scripts/world/), built once per session (cached in scripts/bench/.cache/), and the slice of
it the suite judges: every hard case and every third generated message, read as `h0 import` reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.world.generate import HARD_CASES, build_world
from scripts.world.judge import Read, read_world
from scripts.world.model import Truth, load_truths

SLICE_EVERY = 3


@pytest.fixture(scope="session")
def world() -> Path:
    return build_world()


@pytest.fixture(scope="session")
def truths(world: Path) -> list[Truth]:
    return load_truths(world / "labels.jsonl")


@pytest.fixture(scope="session")
def hard_truths() -> list[Truth]:
    return load_truths(HARD_CASES / "labels.jsonl")


@pytest.fixture(scope="session")
def all_reads(world: Path, truths: list[Truth], hard_truths: list[Truth]) -> list[Read]:
    """Every message of the world and every hard case, read once for the session."""
    return read_world([world / "world.mbox", HARD_CASES], truths + hard_truths)


@pytest.fixture(scope="session")
def world_slice(all_reads: list[Read], truths: list[Truth]) -> list[Read]:
    """Every hard case and every third generated message (the threads' own order), with their truth."""
    chosen = {truth.id for truth in truths[::SLICE_EVERY]}
    return [read for read in all_reads if read.truth.id in chosen or read.truth.name.startswith("hc-")]


@pytest.fixture(scope="session")
def hard_cases(all_reads: list[Read]) -> dict[str, Read]:
    return {read.truth.name: read for read in all_reads if read.truth.name.startswith("hc-")}
