"""The public API the triage handler calls: given settings, when a Triager is built,
then it uses the right decider — or refuses at once with a message a person can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import load_settings
from h0.followup.asks import with_asks
from h0.triage import EmailInput, Triager

# As triage sees it: what its sender's words ask filled in (h0.followup.asks), which the rules' fallback reads.
EMAIL = with_asks(EmailInput.model_validate({"from": "a@example.com", "subject": "Hello?", "body": "Are you there?"}))


def test_given_default_settings_then_the_rules_engine_decides_from_the_vault(vault_dir: Path) -> None:
    (vault_dir / "H0_Rules.md").write_text(
        "```yaml\nrules:\n  - name: Everything to Sam\n    decision: delegate\n    delegate_to: Sam\n```\n",
        encoding="utf-8",
    )
    triager = Triager.from_settings(load_settings(vault_path=vault_dir))

    outcome = triager.triage(EMAIL)

    assert (triager.provider_name, triager.model_name) == ("rules", None)
    assert outcome.decision.decision == "delegate" and outcome.rule == "Everything to Sam"
    assert (outcome.provider, outcome.model, outcome.fallback, outcome.attempts) == ("rules", None, False, 1)


def test_given_an_explicit_vault_root_then_it_wins_over_settings(vault_dir: Path, tmp_path: Path) -> None:
    triager = Triager.from_settings(load_settings(vault_path=tmp_path / "elsewhere"), vault_dir)
    assert triager.rules.path == vault_dir / "H0_Rules.md"


def test_given_an_unknown_provider_then_construction_fails_listing_valid_names(vault_dir: Path) -> None:
    with pytest.raises(ValueError) as raised:
        Triager.from_settings(load_settings(llm_provider="gpt"), vault_dir)
    message = str(raised.value)
    for name in ("'gpt'", "rules", "openai", "anthropic", "ollama", "lmstudio", "openrouter", "groq", "gemini"):
        assert name in message


@pytest.mark.parametrize(
    ("provider", "canonical", "model", "base_url"),
    [
        ("ollama", "ollama", "llama3.1", "http://localhost:11434/v1/"),
        ("LM-Studio", "lmstudio", "qwen2.5-7b", "http://localhost:1234/v1/"),
        ("vllm", "vllm", "mistral-7b", "http://localhost:8000/v1/"),
        ("groq", "groq", "llama-3.1-8b-instant", "https://api.groq.com/openai/v1/"),
        ("deepseek", "deepseek", "deepseek-chat", "https://api.deepseek.com/v1/"),
        ("gemini", "gemini", "gemini-2.0-flash", "https://generativelanguage.googleapis.com/v1beta/openai/"),
        ("openrouter", "openrouter", "openai/gpt-4o-mini", "https://openrouter.ai/api/v1/"),
        ("openai", "openai", "gpt-4o-mini", "https://api.openai.com/v1/"),
        ("claude", "anthropic", "claude-haiku-4-5", "https://api.anthropic.com"),
    ],
)
def test_given_a_provider_alias_then_it_maps_to_its_wire_format_and_defaults(
    vault_dir: Path, provider: str, canonical: str, model: str, base_url: str
) -> None:
    needs_model = canonical in ("lmstudio", "vllm")
    settings = load_settings(llm_provider=provider, llm_api_key="sk-x", llm_model=model if needs_model else None)
    with Triager.from_settings(settings, vault_dir) as triager:
        assert (triager.provider_name, triager.model_name) == (canonical, model)
        assert triager.llm.provider.base_url.rstrip("/") == base_url.rstrip("/")  # type: ignore[union-attr]


def test_given_a_local_server_needing_a_model_name_then_llm_model_is_required(vault_dir: Path) -> None:
    with pytest.raises(ValueError, match="LLM_MODEL"):
        Triager.from_settings(load_settings(llm_provider="lmstudio"), vault_dir)


def test_given_a_hosted_provider_without_a_key_then_construction_fails(vault_dir: Path) -> None:
    with pytest.raises(ValueError, match="LLM_API_KEY"):
        Triager.from_settings(load_settings(llm_provider="openai"), vault_dir)
    # A local server or a proxy needs none.
    Triager.from_settings(load_settings(llm_provider="ollama"), vault_dir).close()
    Triager.from_settings(load_settings(llm_provider="openai", llm_base_url="http://127.0.0.1:9/v1"), vault_dir).close()


def test_given_an_anthropic_base_url_written_with_v1_then_it_is_not_doubled(vault_dir: Path) -> None:
    settings = load_settings(llm_provider="anthropic", llm_api_key="k", llm_base_url="https://proxy.example/v1/")
    with Triager.from_settings(settings, vault_dir) as triager:
        assert triager.llm.provider.base_url.rstrip("/") == "https://proxy.example"  # type: ignore[union-attr]


def test_given_the_key_in_settings_then_no_repr_shows_it(vault_dir: Path) -> None:
    settings = load_settings(llm_provider="openai", llm_api_key="sk-very-secret")
    with Triager.from_settings(settings, vault_dir) as triager:
        assert "sk-very-secret" not in repr(triager.llm.provider)  # type: ignore[union-attr]
        assert "sk-very-secret" not in repr(settings)


def test_given_a_bug_inside_the_llm_path_then_the_rules_still_decide(vault_dir: Path) -> None:
    """Worker threads must never die on an email: an unexpected error still yields a decision."""
    settings = load_settings(llm_provider="openai", llm_api_key="k", llm_base_url="http://127.0.0.1:9/v1")
    with Triager.from_settings(settings, vault_dir) as triager:

        def broken(*args: object) -> None:
            raise RuntimeError("boom")

        triager.llm.provider.complete = broken  # type: ignore[union-attr, method-assign]
        outcome = triager.triage(EMAIL)
    assert outcome.fallback and outcome.fallback_reason == "internal error: RuntimeError"
    assert outcome.decision.decision == "draft_reply" and outcome.provider == "openai"
