"""Chat completions through the official `openai` SDK, for any OpenAI-compatible server.

OpenAI, Ollama, LM Studio, vLLM, OpenRouter, Groq, DeepSeek and Gemini's compatible
endpoint all speak this wire format; only the base URL and model differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loguru import logger

from h0.triage.providers.base import NO_KEY, Completion, ProviderError, Turn, classify, import_sdk


class OpenAICompatProvider:
    def __init__(self, *, name: str, model: str, base_url: str, api_key: str | None, timeout: float) -> None:
        self._sdk = openai = import_sdk("openai", name)
        self.name = name
        self.model = model
        # max_retries=0: the triage loop owns retries, so their number and timing are ours.
        self._client = openai.OpenAI(api_key=api_key or NO_KEY, base_url=base_url, timeout=timeout, max_retries=0)
        # JSON mode is asked for but not relied on; servers that reject it get plain requests.
        self._json_mode = True

    def complete(self, system: str, conversation: Sequence[Turn]) -> Completion:
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        messages += [{"role": role, "content": text} for role, text in conversation]
        try:
            response = self._create(messages)
        except self._sdk.BadRequestError as exc:
            if not (self._json_mode and "response_format" in str(exc)):
                raise classify(exc, self._sdk) from None
            logger.info("{} rejected response_format=json_object; asking without it from now on", self.name)
            self._json_mode = False
            try:
                response = self._create(messages)
            except Exception as retry_exc:
                raise classify(retry_exc, self._sdk) from None
        except Exception as exc:
            raise classify(exc, self._sdk) from None
        if not response.choices:
            raise ProviderError("the response has no choices", transient=True)
        choice = response.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if not refusal and choice.finish_reason == "content_filter":
            refusal = "stopped by the provider's content filter"
        return Completion(text=message.content or "", refusal=refusal)

    def _create(self, messages: list[dict[str, Any]]) -> Any:
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if self._json_mode else {}
        return self._client.chat.completions.create(model=self.model, messages=messages, **extra)

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:  # never the key
        return (
            f"OpenAICompatProvider(name={self.name!r}, model={self.model!r}, base_url={str(self._client.base_url)!r})"
        )
