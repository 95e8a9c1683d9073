"""Given the world's slice (every hard case and every third generated message, ~470 messages), when each of
H0's judgments is asked of every message (scripts/world/judge.py: H0's own functions, the message as
`h0 import` reads it), then no figure falls below the floor it held when it was first measured.

The floors are today's figures rounded down a little: a regression fails CI, an improvement passes; a
round that raises a judgment raises its floor here (docs/judgments.md has the whole world's figures).
"""

from __future__ import annotations

import pytest

from scripts.world.judge import Read, Score, judge

# judgment: (precision floor, recall floor); an exact-match judgment has its rate as recall (precision 1).
FLOORS: dict[str, tuple[float, float]] = {
    "reply text": (1.0, 1.0),  # the owner's reply exactly, every one
    "automated": (0.97, 0.99),  # the 4 "wrong" are credential phishing dressed as a service's notification
    "attack": (0.95, 0.12),
    "questions (each)": (0.72, 0.69),
    "questions (message)": (1.0, 0.71),
    "meeting request": (0.85, 0.46),
    "meeting length": (1.0, 0.70),
    "meeting days": (1.0, 0.78),
    "meeting part of day": (1.0, 0.0),  # H0 reads no part of day yet
    "owner asks": (0.99, 0.99),
    "needs a reply (rules)": (0.86, 0.99),  # its "wrong" are attacks the attack judgment does not flag yet
}


@pytest.fixture(scope="module")
def scores(world_slice: list[Read]) -> dict[str, Score]:
    return {score.name: score for score in judge(world_slice)}


def test_every_judgment_has_a_floor(scores):
    assert set(scores) == set(FLOORS)


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_given_the_world_slice_when_judged_then_no_figure_falls_below_its_floor(scores, name):
    score = scores[name]
    precision, recall = FLOORS[name]
    shown = f"{score.line()}\nmissed: {score.missed[:10]}\nwrong: {score.wrong[:10]}"
    assert score.precision >= precision, shown
    assert score.recall >= recall, shown


def test_given_real_correspondents_when_judged_for_attacks_then_none_is_flagged(scores):
    """'Known' is whom the owner wrote to or a People note names: a real correspondent is never an attacker."""
    assert scores["attack"].note == "false positives on real correspondents: 0"
