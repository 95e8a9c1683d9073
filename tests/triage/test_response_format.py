"""`response_format` only where the prompt asks for JSON, through the real openai SDK against the fake server.

Given the three kinds of model call H0 makes — an answer with a schema (triage, a revision, a lesson, a
language rewrite), a JSON object without one (the follow-up judge: does the owner's message ask something?),
and plain text (the follow-up's middle sentences) — when each is sent, then only the first two carry a
response format, and a plain-text call never moves the provider off its structured mode. Hostile server: one
that refuses JSON mode for a prompt that does not say "JSON", as OpenAI does (before, the follow-up's middle
got `json_object`, was refused with a 400, and every later triage lost its schema).
"""

from __future__ import annotations

import json

import pytest

from h0.followup.asks import LlmJudge
from h0.followup.nudge import NudgeRequest, follow_up_text
from h0.triage.providers import build_provider
from tests.triage.fake_llm import FakeLLM, Reply, Seen, error_reply, openai_answer

SCHEMA = {"type": "object", "properties": {"reply_body": {"type": "string"}}, "required": ["reply_body"]}


def like_openai(seen: Seen) -> Reply:
    """OpenAI's rule: JSON mode only for a conversation that says "json"; else the answer asked for."""
    form = seen.json.get("response_format", {}).get("type")
    said = " ".join(seen.texts).lower()
    if form == "json_object" and "json" not in said:
        return error_reply(
            400, "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."
        )
    if form is None:
        return openai_answer("Just checking in on the launch date — could you let me know when you have a moment?")
    return openai_answer(json.dumps({"reply_body": "ok", "asks": True, "ask": "When is the launch?"}))


@pytest.fixture
def fake():
    with FakeLLM() as server:
        server.respond_with(like_openai)
        yield server


def provider(fake: FakeLLM):  # an OpenAI provider pointed at the fake: json_schema is its structured mode
    return build_provider("openai", model="fake-model", api_key="sk-test", base_url=f"{fake.url}/v1", timeout=10)


def formats(fake: FakeLLM) -> list[str | None]:
    return [seen.json.get("response_format", {}).get("type") for seen in fake.requests]


def test_a_schema_gets_json_schema_json_without_one_json_mode_and_plain_text_none(fake: FakeLLM):
    chat = provider(fake)
    chat.complete("Answer with one JSON object.", [("user", "hi")], SCHEMA)
    chat.complete("Answer with one JSON object.", [("user", "hi")], json_answer=True)
    chat.complete("Write two sentences.", [("user", "hi")])
    assert formats(fake) == ["json_schema", "json_object", None]


def test_the_follow_ups_middle_is_plain_text_and_never_costs_triage_its_schema(fake: FakeLLM):
    """Given the follow-up's middle (a plain-text prompt), when it is written before a triage-like call, then it
    is sent without a response format, answered, and the next call with a schema still gets json_schema."""
    chat = provider(fake)
    request = NudgeRequest((("Dana Rivera", "dana@acme.example"),), "Launch date", 1_700_000_000.0, "When?")
    text = follow_up_text(request, greeting="Hi Dana,", sign_off="Best,", provider=chat)
    assert "Just checking in on the launch date" in text  # the model's middle, not the template's
    chat.complete("Answer with one JSON object.", [("user", "hi")], SCHEMA)
    assert formats(fake) == [None, "json_schema"]
    assert "Today is " in fake.requests[0].last_text  # a drafting prompt: it knows what day it is


def test_the_follow_up_judge_asks_for_a_json_object(fake: FakeLLM):
    verdict = LlmJudge(provider(fake)).judge("When is the launch? Could you tell me by Friday?", "Launch")
    assert verdict.asks and verdict.by == "openai"  # the model answered, not the rules
    assert formats(fake) == ["json_object"]


def test_a_server_refusing_json_mode_costs_the_judge_its_format_and_triage_nothing(fake: FakeLLM):
    """Given a server that takes a schema but refuses JSON mode (LM Studio does), when the follow-up judge (JSON
    without a schema) is refused, then it is asked again as plain text, and triage's next call keeps its schema."""

    def like_lm_studio(seen: Seen) -> Reply:
        if seen.json.get("response_format", {}).get("type") == "json_object":
            return error_reply(400, "'response_format.type' must be 'json_schema' or 'text'")
        return openai_answer(json.dumps({"reply_body": "ok", "asks": True, "ask": "When?"}))

    fake.respond_with(like_lm_studio)
    chat = provider(fake)
    assert LlmJudge(chat).judge("When is the launch?", "Launch").by == "openai"
    chat.complete("Answer with one JSON object.", [("user", "hi")], SCHEMA)
    assert formats(fake) == ["json_object", None, "json_schema"]
