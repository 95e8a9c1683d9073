"""Reading a real model's answer (h0.triage.answertext): reasoning out, the first balanced object in,
a cut-off object closed — whatever braces the reasoning or the strings hold."""

from __future__ import annotations

import json

import pytest

from h0.triage.answertext import answer_json, balanced_object, closed_json, strip_reasoning


@pytest.mark.parametrize(
    "text",
    [
        '<think>the schema is {"decision": ...}; maybe {archive}?</think>\n{"decision": "x"}',
        '<thinking>\n{draft}\n</thinking>```json\n{"decision": "x"}\n```',
        '<reasoning>{a}</reasoning> Here is the answer: {"decision": "x"} Hope that helps {:)}',
        '<THINK>{a}</THINK>{"decision": "x"}',
        'I considered {archive} first.</think>\n{"decision": "x"}',  # the server dropped the opening tag
        '<think>never closed, {"decision": "archive"} perhaps\n{"decision": "x"}',  # unterminated, answer after
    ],
)
def test_the_answer_is_the_first_object_outside_the_reasoning(text: str) -> None:
    assert json.loads(answer_json(text)) == {"decision": "x"}


def test_braces_and_quotes_inside_strings_do_not_end_the_object() -> None:
    text = 'prefix {"reply_body": "a } and a \\" and a {", "n": {"m": 1}} suffix {"other": 2}'
    assert json.loads(balanced_object(text) or "") == {"reply_body": 'a } and a " and a {', "n": {"m": 1}}


def test_an_unterminated_reasoning_block_with_no_answer_after_it_leaves_nothing() -> None:
    assert strip_reasoning("Sure. <think>still thinking {about it}").strip() == "Sure."


@pytest.mark.parametrize(
    ("cut", "expected"),
    [
        (
            '{"decision": "draft_reply", "reply_body": "Hi Dana,\\n\\nFriday wo',
            {"decision": "draft_reply", "reply_body": "Hi Dana,\n\nFriday wo"},
        ),
        ('{"decision": "draft_reply", "questions": ["a", "b', {"decision": "draft_reply", "questions": ["a", "b"]}),
        ('{"decision": "draft_reply", "confid', {"decision": "draft_reply"}),
        ('{"decision": "draft_reply", "confidence":', {"decision": "draft_reply"}),
        ('<think>{x}</think>{"a": {"b": "c\\', {"a": {"b": "c"}}),
    ],
)
def test_an_object_cut_off_mid_way_is_closed(cut: str, expected: dict[str, object]) -> None:
    assert json.loads(closed_json(cut) or "") == expected


def test_a_text_without_an_object_cannot_be_closed() -> None:
    assert closed_json("I cannot help with that.") is None


def test_an_unterminated_reasoning_block_with_object_lines_of_its_own_yields_the_answer_after_them() -> None:
    text = '<think>\nThe format:\n{decision: one of five}\nso:\n{"decision": "x"}'
    assert json.loads(answer_json(text)) == {"decision": "x"}
