"""The questions an email asks (h0.drafting.briefing.questions): each sentence ending with "?", a
sentence ending after ".", "!", "?" or a line break; quoted lines, greetings and repeats left out."""

from __future__ import annotations

import time

import pytest

from h0.drafting.briefing import MAX_QUESTIONS, MAX_SCAN_CHARS, questions


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        (
            "Could we move the review to Friday at 10?\n\nproject review budget",
            ["Could we move the review to Friday at 10?"],
        ),
        ("Hi Dana, can we meet?", ["can we meet?"]),
        ("Thanks. Is the budget final? It is late! And the plan?", ["Is the budget final?", "And the plan?"]),
        ("Wait... really?? Yes?! Sure", ["really?", "Yes?"]),
        ("first line\nsecond\t  line   with space?", ["second line with space?"]),
        ("> Is this quoted?\nIs this not?", ["Is this not?"]),
        ("Same one? Same one? Same one?", ["Same one?"]),
        # Quoted lines go, indented ones and the blank lines above them too (line breaks after them stay).
        ("Is this new?\n\n \n> old?\n   > older?\nAnd this?", ["Is this new?", "And this?"]),
        ("Really\r\n> quoted?\r\nsure?", ["sure?"]),
        ("Tabs\t\n\t>not asked?\nasked now?", ["asked now?"]),
        ("a? ok?", []),  # too short to be a question
        ("No question here.", []),
        ("", []),
    ],
)
def test_the_questions_an_email_asks(text: str, asked: list[str]):
    assert questions(text) == asked


def test_at_most_the_first_questions_within_the_scanned_head():
    many = " ".join(f"Question number {i}?" for i in range(20))
    assert questions(many) == [f"Question number {i}?" for i in range(MAX_QUESTIONS)]
    assert questions("x" * MAX_SCAN_CHARS + " Is this read?") == []


def test_a_hostile_text_of_questions_costs_linear_time():
    started = time.perf_counter()
    questions("why? " * 200_000 + "." * 100_000 + "?")
    questions("\n" * 500_000 + "?")  # blank lines: the quoted-line search once took minutes
    questions(" \n" * 100_000 + "> quoted\n" + "Is it fast?")
    assert time.perf_counter() - started < 2.0
