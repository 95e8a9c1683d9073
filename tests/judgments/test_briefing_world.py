"""Given the world's slice, when a rules briefing is written for every person's email that asks something
(scripts/world/judge_briefing.py: the context as H0 assembles it from the persona's vault, the answers of
h0.drafting.briefing), then the notes it cites under the questions hold their floor against the notes the
truth says a good reply needs (docs/judgments.md has the whole world's figure)."""

from __future__ import annotations

from pathlib import Path

from scripts.world.judge import Read
from scripts.world.judge_briefing import judge_briefings

FLOOR = (0.62, 0.45)  # precision, recall: the labels are per message and coarse (the module says why)


def test_given_the_world_slice_when_briefed_then_the_notes_cited_hold_their_floor(world: Path, world_slice: list[Read]):
    score = judge_briefings(world_slice, world / "vault")
    shown = f"{score.line()}  [{score.note}]\nmissed: {score.missed[:10]}\nwrong: {score.wrong[:10]}"
    assert score.precision >= FLOOR[0], shown
    assert score.recall >= FLOOR[1], shown
