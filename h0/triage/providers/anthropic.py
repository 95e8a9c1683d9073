"""Messages through the official `anthropic` SDK (base URL overridable, e.g. for a proxy)."""

from __future__ import annotations

from collections.abc import Sequence

from h0.triage.providers.base import NO_KEY, Completion, OverSdk, Schema, Turn, classify, import_sdk

MAX_TOKENS = 2048  # the Messages API requires a cap; a triage answer with a draft fits easily


class AnthropicProvider(OverSdk):
    def __init__(
        self, *, name: str, model: str, base_url: str, api_key: str | None, timeout: float, structured: str = "none"
    ) -> None:
        self._sdk = anthropic = import_sdk("anthropic", name)
        self.name = name
        self.model = model
        # The SDK appends /v1/messages itself; accept a base URL written with /v1 too.
        base = base_url.rstrip("/")
        base = base.removesuffix("/v1")
        # max_retries=0: the triage loop owns retries, so their number and timing are ours.
        self._client = anthropic.Anthropic(api_key=api_key or NO_KEY, base_url=base, timeout=timeout, max_retries=0)

    def complete(
        self, system: str, conversation: Sequence[Turn], schema: Schema | None = None, *, json_answer: bool = False
    ) -> Completion:
        # The Messages API has no JSON mode: the prompt asks for the object, h0.triage.prompt repairs
        # and validates it, and an invalid answer is asked for again.
        try:
            response = self._client.messages.create(
                model=self.model,
                max_tokens=MAX_TOKENS,
                system=system,
                messages=[{"role": role, "content": text} for role, text in conversation],
            )
        except Exception as exc:  # noqa: BLE001 - classify() sorts every SDK error into transient or not
            raise classify(exc, self._sdk) from None
        # Text blocks only: extended thinking comes as `thinking` / `redacted_thinking` blocks before them.
        text = "".join(getattr(block, "text", "") for block in response.content if block.type == "text")
        if response.stop_reason == "refusal":
            return Completion(text=text, refusal=text.strip() or "the model declined to answer")
        return Completion(text=text, truncated=response.stop_reason == "max_tokens")
