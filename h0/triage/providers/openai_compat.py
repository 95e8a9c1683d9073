"""Chat completions through the official `openai` SDK, for any OpenAI-compatible server.

OpenAI, Ollama, LM Studio, vLLM, OpenRouter, Groq, DeepSeek, Gemini's compatible endpoint and
llama.cpp's server all speak this wire format; only the base URL, the model and how each
takes structured output differ. Only a prompt that asks for JSON gets a response format (a plain-text
prompt, like the follow-up's middle, gets none). The answer's JSON schema is sent as
`response_format: {"type": "json_schema", …}` where the server is known to enforce it
(Ollama, LM Studio and vLLM constrain generation with a grammar built from it); a server
that refuses it with a 400 naming the response format is asked again in the next mode down —
JSON mode, then plain text, repaired and validated by the caller — and stays there.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from loguru import logger

from h0.triage.providers.base import NO_KEY, Completion, OverSdk, ProviderError, Schema, Turn, classify, import_sdk

MODES = ("json_schema", "json_object", "none")
SCHEMA_NAME = "h0_answer"
# What a server says when it does not take a response format (OpenAI, vLLM, LM Studio, llama.cpp, Ollama wordings).
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format", "schema", "grammar")


class OpenAICompatProvider(OverSdk):
    def __init__(
        self,
        *,
        name: str,
        model: str,
        base_url: str,
        api_key: str | None,
        timeout: float,
        structured: str = "json_object",
    ) -> None:
        self._sdk = openai = import_sdk("openai", name)
        self.name = name
        self.model = model
        # max_retries=0: the triage loop owns retries, so their number and timing are ours.
        self._client = openai.OpenAI(api_key=api_key or NO_KEY, base_url=base_url, timeout=timeout, max_retries=0)
        self._mode = MODES.index(structured) if structured in MODES else 1  # lowest mode tried so far
        self._lock = threading.Lock()

    @property
    def structured(self) -> str:
        """The structured-output mode in use now (it only ever moves down, after a refusal)."""
        return MODES[self._mode]

    def complete(
        self, system: str, conversation: Sequence[Turn], schema: Schema | None = None, *, json_answer: bool = False
    ) -> Completion:
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        messages += [{"role": role, "content": text} for role, text in conversation]
        wants_json = schema is not None or json_answer
        floor = 0  # the lowest mode this call may use: raised past each mode refused for it
        while True:
            mode = max(self._mode, floor) if wants_json else len(MODES) - 1  # plain text: no response_format
            if mode == 0 and schema is None:
                mode = 1  # no schema to give: JSON mode is the best there is
            try:
                response = self._create(messages, MODES[mode], schema)
                break
            except self._sdk.BadRequestError as exc:
                if mode >= len(MODES) - 1 or not _about_format(exc):
                    raise classify(exc, self._sdk) from None
                floor = mode + 1
                with self._lock:
                    # The server refused the provider's own mode: every later call asks one mode down. A mode only
                    # this call chose (JSON mode, having no schema) moves only this call: triage keeps its schema.
                    if self._mode == mode:
                        self._mode = mode + 1
                        logger.info(
                            "{} refused response_format {}; asking with {} from now on",
                            self.name,
                            MODES[mode],
                            MODES[mode + 1],
                        )
            except Exception as exc:  # noqa: BLE001 - classify() sorts every SDK error into transient or not
                raise classify(exc, self._sdk) from None
        if not response.choices:
            raise ProviderError("the response has no choices", transient=True)
        choice = response.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if not refusal and choice.finish_reason == "content_filter":
            refusal = "stopped by the provider's content filter"
        # `message.content` only: vLLM, DeepSeek and LM Studio return a reasoning model's thinking in
        # `reasoning_content` / `reasoning` beside it, and that is never the answer.
        return Completion(text=message.content or "", refusal=refusal, truncated=choice.finish_reason == "length")

    def _create(self, messages: list[dict[str, Any]], mode: str, schema: Schema | None) -> Any:
        extra: dict[str, Any] = {}
        if mode == "json_schema" and schema is not None:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": dict(schema), "strict": False},
            }
        elif mode != "none":
            extra["response_format"] = {"type": "json_object"}
        return self._client.chat.completions.create(model=self.model, messages=messages, **extra)


def _about_format(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _FORMAT_WORDS)
