"""Which LLM_PROVIDER names exist, what they default to, and building a provider from them.

A new OpenAI-compatible service is one line in PROVIDERS; a new wire format is one module
implementing `ChatProvider` (base.py) and one entry in _BUILDERS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from h0.triage.providers.base import ChatProvider, Completion, ProviderError, Turn

__all__ = [
    "PROVIDERS",
    "ChatProvider",
    "Completion",
    "ProviderError",
    "ProviderSpec",
    "Structured",
    "Turn",
    "build_provider",
    "canonical_name",
]

Wire = Literal["openai", "anthropic"]
# How a server is asked for JSON (h0.triage.providers.openai_compat): a JSON schema it enforces
# while generating (grammar-constrained on local servers), JSON mode, or nothing (the answer
# is then repaired and validated by h0.triage.prompt, and asked again when still invalid).
Structured = Literal["json_schema", "json_object", "none"]


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    wire: Wire
    base_url: str
    default_model: str | None  # None: LLM_MODEL is required (the server serves what you loaded)
    local: bool = False  # a local server: no API key needed
    structured: Structured = "json_object"  # the best structured output the server is known to take


PROVIDERS: dict[str, ProviderSpec] = {
    "openai": ProviderSpec("openai", "https://api.openai.com/v1", "gpt-4o-mini", structured="json_schema"),
    "anthropic": ProviderSpec("anthropic", "https://api.anthropic.com", "claude-haiku-4-5", structured="none"),
    # Ollama (0.5+), LM Studio (which refuses json_object) and vLLM (guided decoding) all take
    # `response_format: json_schema` and constrain generation to it.
    "ollama": ProviderSpec("openai", "http://localhost:11434/v1", "llama3.1", local=True, structured="json_schema"),
    "lmstudio": ProviderSpec("openai", "http://localhost:1234/v1", None, local=True, structured="json_schema"),
    "vllm": ProviderSpec("openai", "http://localhost:8000/v1", None, local=True, structured="json_schema"),
    # llama.cpp's `llama-server` serves the one model it was started with (any name is accepted) and
    # turns `response_format: json_schema` into a grammar.
    "llamacpp": ProviderSpec("openai", "http://localhost:8080/v1", "local", local=True, structured="json_schema"),
    "openrouter": ProviderSpec(
        "openai", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini", structured="json_schema"
    ),
    "groq": ProviderSpec("openai", "https://api.groq.com/openai/v1", "llama-3.1-8b-instant"),
    "deepseek": ProviderSpec("openai", "https://api.deepseek.com/v1", "deepseek-chat"),
    "gemini": ProviderSpec(
        "openai",
        "https://generativelanguage.googleapis.com/v1beta/openai/",
        "gemini-2.0-flash",
        structured="json_schema",
    ),
}
RULES = "rules"
_ALIASES = {
    "claude": "anthropic",
    "lm-studio": "lmstudio",
    "lm_studio": "lmstudio",
    "openai-compatible": "openai",
    "openai_compatible": "openai",
    "google": "gemini",
    "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp",
    "llama_cpp": "llamacpp",
    "llama-server": "llamacpp",
}


def canonical_name(name: str | None) -> str:
    """The provider's canonical name; ValueError listing the valid names if unknown."""
    key = (name or RULES).strip().lower()
    key = _ALIASES.get(key, key)
    if key == RULES or key in PROVIDERS:
        return key
    compatible = ", ".join(k for k, spec in PROVIDERS.items() if spec.wire == "openai" and k != "openai")
    raise ValueError(
        f"Unknown LLM_PROVIDER {name!r}. Valid: rules, openai, anthropic; "
        f"OpenAI-compatible aliases: {compatible}; also {', '.join(sorted(_ALIASES))}."
    )


def _openai(**kwargs: object) -> ChatProvider:
    from h0.triage.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(**kwargs)  # type: ignore[arg-type]


def _anthropic(**kwargs: object) -> ChatProvider:
    from h0.triage.providers.anthropic import AnthropicProvider

    return AnthropicProvider(**kwargs)  # type: ignore[arg-type]


_BUILDERS: dict[Wire, Callable[..., ChatProvider]] = {"openai": _openai, "anthropic": _anthropic}


def build_provider(
    name: str, *, model: str | None, api_key: str | None, base_url: str | None, timeout: float
) -> ChatProvider:
    """A ready provider for a canonical, non-rules name; ValueError for settings that cannot work."""
    spec = PROVIDERS[name]
    model = (model or "").strip() or spec.default_model
    if not model:
        raise ValueError(f"LLM_PROVIDER={name} needs LLM_MODEL: the name of the model the server has loaded.")
    # A hosted service needs a key; a local server or a custom base URL (a proxy) may not.
    if not api_key and not spec.local and not base_url:
        raise ValueError(f"LLM_PROVIDER={name} needs LLM_API_KEY (or LLM_BASE_URL pointing at a server without keys).")
    return _BUILDERS[spec.wire](
        name=name,
        model=model,
        base_url=(base_url or "").strip() or spec.base_url,
        api_key=api_key,
        timeout=timeout,
        structured=spec.structured,
    )
