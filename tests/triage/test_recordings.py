"""Real servers' answers, recorded (tests/triage/recordings/), served by the fake LLM to the real SDKs.

Given what Ollama, LM Studio, vLLM, llama.cpp's server, OpenAI and Anthropic actually return —
reasoning inline with braces or in fields and blocks of its own, extra fields, cut-off answers,
refusals, their overload errors — when H0 triages, then it reads the model's decision (never its
reasoning), asks each server for structured output the way that server takes it, flags a
truncated answer in the draft, and leaves the decision for later when the model is unavailable.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.triage import EmailInput, Triager
from h0.triage.llm import TRUNCATED_PLACEHOLDER, LLMTriage
from h0.triage.providers import PROVIDERS, build_provider
from h0.triage.rules import RulesEngine
from tests.triage.fake_llm import FakeLLM, Reply, recorded

QUESTION = EmailInput.model_validate(
    {"from": "Dana Rivera <dana@example.com>", "subject": "Review", "body": "Can we move Thursday's review to Friday?"}
)
RECORDED_REPLY = "Hi Dana,\n\nFriday at 10 works for me. I'll move the review.\n\nBest regards,"

# recording → the LLM_PROVIDER that server is configured as
ANSWERS = {
    "openai": "openai",
    "ollama_deepseek_r1": "ollama",
    "ollama_reasoning_field": "ollama",
    "lmstudio": "lmstudio",
    "vllm": "vllm",
    "llamacpp": "llamacpp",
    "anthropic_thinking": "anthropic",
}


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def base_url(fake: FakeLLM, provider: str) -> str:
    return fake.url if PROVIDERS[provider].wire == "anthropic" else f"{fake.url}/v1"


def triager_for(provider: str, fake: FakeLLM, vault: Path) -> Triager:
    """A triager for `provider` at the fake server."""
    rules = RulesEngine.for_vault(vault)
    client = build_provider(provider, model="m", api_key="sk-test", base_url=base_url(fake, provider), timeout=5.0)
    return Triager(rules, LLMTriage(client, rules))


@pytest.mark.parametrize("recording", sorted(ANSWERS))
def test_given_a_real_servers_answer_then_the_decision_is_the_models_and_its_reasoning_is_never_the_answer(
    recording: str, fake: FakeLLM, vault_dir: Path
) -> None:
    provider = ANSWERS[recording]
    fake.queue(recorded(recording))
    with triager_for(provider, fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    assert outcome.fallback is False and outcome.deferred is None, outcome.fallback_reason
    assert outcome.decision.decision == "draft_reply"
    assert outcome.decision.reply_body == RECORDED_REPLY  # nothing of the thinking leaked into the draft
    assert outcome.attempts == 1 and len(fake.requests) == 1


@pytest.mark.parametrize("provider", ["openai", "ollama", "lmstudio", "vllm", "llamacpp"])
def test_each_openai_compatible_server_is_asked_for_the_answers_json_schema(
    provider: str, fake: FakeLLM, vault_dir: Path
) -> None:
    fake.queue(recorded("llamacpp" if provider == "llamacpp" else "openai"))
    with triager_for(provider, fake, vault_dir) as triager:
        triager.triage(QUESTION)

    form = fake.requests[0].json["response_format"]
    assert form["type"] == "json_schema"
    assert form["json_schema"]["schema"]["properties"]["decision"]["enum"][0] == "draft_reply"


def test_anthropic_gets_no_response_format_and_its_answer_is_repaired_and_validated(
    fake: FakeLLM, vault_dir: Path
) -> None:
    fake.queue(recorded("anthropic_thinking", content="Sure! ```json\n" + json.dumps(_answer()) + "\n```"))
    with triager_for("anthropic", fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    assert "response_format" not in fake.requests[0].json
    assert outcome.fallback is False and outcome.decision.reply_body == RECORDED_REPLY


@pytest.mark.parametrize(
    ("recording", "provider"), [("llamacpp_length", "llamacpp"), ("anthropic_max_tokens", "anthropic")]
)
def test_given_an_answer_cut_off_at_the_token_limit_then_it_is_read_as_far_as_it_goes_and_flagged(
    recording: str, provider: str, fake: FakeLLM, vault_dir: Path
) -> None:
    fake.queue(recorded(recording))
    with triager_for(provider, fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    reply = outcome.decision.reply_body or ""
    assert outcome.truncated is True and outcome.fallback is False
    assert reply.startswith("Hi Dana,\n\nFriday at 10 works for me.")
    assert reply.endswith(TRUNCATED_PLACEHOLDER)  # a placeholder: the send check refuses it
    assert any("cut off" in w for w in outcome.warnings)
    assert len(fake.requests) == 1


@pytest.mark.parametrize(("recording", "provider"), [("openai_refusal", "openai"), ("anthropic_refusal", "anthropic")])
def test_given_a_refusal_then_the_decision_is_deferred_not_made_by_the_rules_for_good(
    recording: str, provider: str, fake: FakeLLM, vault_dir: Path
) -> None:
    fake.queue(recorded(recording))
    with triager_for(provider, fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    assert (outcome.deferred or "").startswith("the model refused")
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    ("recording", "provider", "status"),
    [
        ("ollama_503", "ollama", 503),
        ("vllm_503", "vllm", 503),
        ("llamacpp_503", "llamacpp", 503),
        ("anthropic_529", "anthropic", 529),
    ],
)
def test_given_an_overloaded_server_then_triage_defers_at_once_for_the_work_queue(
    recording: str, provider: str, status: int, fake: FakeLLM, vault_dir: Path
) -> None:
    fake.queue(*[recorded(recording, status=status) for _ in range(3)])
    with triager_for(provider, fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    assert outcome.fallback is True and str(status) in (outcome.deferred or "")
    assert outcome.attempts == 1 and len(fake.requests) == 1  # never repeated or waited on in the call


def test_given_503_then_success_then_the_next_look_brings_the_models_decision(fake: FakeLLM, vault_dir: Path) -> None:
    fake.queue(recorded("ollama_503", status=503), recorded("ollama_deepseek_r1"))
    with triager_for("ollama", fake, vault_dir) as triager:
        first = triager.triage(QUESTION)
        outcome = triager.triage(QUESTION)

    assert first.deferred and "503" in first.deferred
    assert outcome.fallback is False and outcome.decision.reply_body == RECORDED_REPLY


def _answer(**changes: object) -> dict[str, object]:
    answer: dict[str, object] = {
        "decision": "draft_reply",
        "confidence": 0.8,
        "reasoning": "a question",
        "reply_body": RECORDED_REPLY,
        "delegate_to": None,
    }
    answer.update(changes)
    return answer


def hostile(content: str) -> Reply:
    return recorded("ollama_deepseek_r1", content=content)


def test_a_50_kb_think_block_full_of_braces_then_the_answer_is_read(fake: FakeLLM, vault_dir: Path) -> None:
    thinking = "<think>\n" + ('Maybe {decision: archive}? Or {"a": [1, {2}]}... ' * 1100) + "\n</think>\n"
    assert len(thinking) > 50_000
    fake.queue(hostile(thinking + json.dumps(_answer())))
    with triager_for("ollama", fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    assert outcome.fallback is False and outcome.decision.reply_body == RECORDED_REPLY


def test_an_unterminated_think_block_before_the_answer_is_stripped(fake: FakeLLM, vault_dir: Path) -> None:
    fake.queue(hostile("<think>\nthe schema says {decision} so\n" + json.dumps(_answer())))
    with triager_for("ollama", fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    assert outcome.fallback is False and outcome.decision.reply_body == RECORDED_REPLY


def test_a_50_kb_reply_is_cut_to_the_drafts_bound(fake: FakeLLM, vault_dir: Path) -> None:
    fake.queue(hostile(json.dumps(_answer(reply_body="Hi Dana,\n\n" + "All good. " * 5_000))))
    with triager_for("ollama", fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    reply = outcome.decision.reply_body or ""
    assert len(reply) < 21_000 and reply.endswith("[… draft cut by H0]")


def test_truncated_json_the_server_did_not_call_truncated_is_asked_again(fake: FakeLLM, vault_dir: Path) -> None:
    whole = json.dumps(_answer())
    fake.queue(hostile(whole[: len(whole) // 2]), hostile(whole))
    with triager_for("ollama", fake, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    assert outcome.fallback is False and outcome.attempts == 2
    assert "rejected by the validator" in fake.requests[1].last_text


def test_llm_timeout_seconds_bounds_every_request(fake: FakeLLM, vault_dir: Path) -> None:
    slow = recorded("ollama_deepseek_r1")
    slow.delay = 2.0
    fake.queue(slow)
    settings = load_settings(
        llm_provider="ollama", llm_model="m", llm_base_url=f"{fake.url}/v1", llm_timeout_seconds=0.2
    )
    with Triager.from_settings(settings, vault_dir) as triager:
        outcome = triager.triage(QUESTION)

    assert "timed out" in (outcome.deferred or "") and outcome.attempts == 1
