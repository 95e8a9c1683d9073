"""Given the world's slice (every hard case and every third generated message, ~470 messages), when each of
H0's judgments is asked of every message (scripts/world/judge.py: H0's own functions, the message as
`h0 import` reads it), then no figure falls below the floor it held when it was first measured.

The floors are today's figures rounded down a little: a regression fails CI, an improvement passes; a
round that raises a judgment raises its floor here (docs/judgments.md has the whole world's figures).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.world.context import ContextFigures, judge_context
from scripts.world.judge import Read, Score, judge

# judgment: (precision floor, recall floor); an exact-match judgment has its rate as recall (precision 1).
FLOORS: dict[str, tuple[float, float]] = {
    "reply text": (1.0, 1.0),  # the owner's reply exactly, every one
    "automated": (0.97, 0.99),  # the 4 "wrong" are credential phishing dressed as a service's notification
    "attack": (0.98, 0.97),  # known = whom the owner wrote to or a People note names (0 real correspondents flagged)
    "questions (each)": (0.98, 0.98),  # whole in en/de/fr: "18.12.", "am 9.", "z. B.", "1.250 €", Outlook's history
    "questions (message)": (1.0, 0.98),
    "meeting request": (0.98, 0.95),
    "meeting request (en)": (0.95, 0.90),  # recall >= 90 % in each language (issue 41)
    "meeting request (de)": (0.95, 0.90),
    "meeting request (fr)": (0.95, 0.90),
    "meeting length": (1.0, 0.95),
    "meeting days": (1.0, 0.95),
    "meeting part of day": (1.0, 0.95),
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


# `h0 eval`'s judge (h0.drafting.sendready): does it say "send-ready" where a person would send the draft as it
# is? Measured on labelled candidate drafts (scripts/world/candidates.py): for every third of the owner's
# replies that answer a person's email, her own reply, light edits and the same in other words (send-ready),
# and truncated, answer-dropped, wrong-fact, placeholder, other-language, padded variants (not); and every
# hand-written draft of hard_cases/eval_drafts.jsonl. Goal: 80 %.
EVAL_JUDGE_FLOORS: dict[str, tuple[float, float]] = {  # (agreement floor, failure-named floor)
    "eval judge (world)": (0.95, 0.95),
    "eval judge (hand-written)": (0.90, 0.85),
}


@pytest.fixture(scope="module")
def eval_agreement(all_reads: list[Read], world) -> dict:
    from scripts.world.candidates import agreement, candidates, eval_pairs, hand_written
    from scripts.world.generate import HARD_CASES

    pairs = eval_pairs([r for r in all_reads if not r.truth.name.startswith("hc-")], world / "vault")
    return {
        "eval judge (world)": agreement(candidates(pairs[::3])),
        "eval judge (hand-written)": agreement(hand_written(HARD_CASES / "eval_drafts.jsonl")),
    }


@pytest.mark.parametrize("name", sorted(EVAL_JUDGE_FLOORS))
def test_given_labelled_drafts_when_the_eval_judge_reads_them_then_it_agrees_with_a_person(eval_agreement, name):
    score = eval_agreement[name]
    floor, named = EVAL_JUDGE_FLOORS[name]
    shown = f"{score.line(name)}\ndisagreed: {score.disagreed[:10]}"
    assert score.total >= 25, shown
    assert score.share >= floor, shown
    assert score.kind_share >= named, shown


# What reaches a drafting prompt (scripts/world/context.py), on every third email that needs a reply: at most this
# unrelated share of the owner-note items and characters, at least this share of the notes needed given.
CONTEXT_CEILINGS = {"owner-note items": 0.14, "owner-note characters": 0.11, "reply items": 0.02}
CONTEXT_FLOOR = 0.93  # needed notes given


@pytest.fixture(scope="module")
def context(world: Path, all_reads: list[Read]) -> ContextFigures:
    return judge_context(world, all_reads, every=3)


def test_given_the_world_when_replies_are_drafted_then_what_reaches_the_prompt_is_about_the_email(context):
    """The owner's notes in a prompt are the ones a good reply needs (the world's labels), the past and similar
    replies went to people of the email's business, and no reply of the email's own thread is given again."""
    shown = "\n".join(context.lines(10))
    assert context.emails >= 100, shown
    assert context.owner_notes.item_share <= CONTEXT_CEILINGS["owner-note items"], shown
    assert context.owner_notes.char_share <= CONTEXT_CEILINGS["owner-note characters"], shown
    assert context.replies.item_share <= CONTEXT_CEILINGS["reply items"], shown
    assert context.notes_given >= CONTEXT_FLOOR, shown
    assert context.repeated == [], shown
