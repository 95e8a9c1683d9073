"""What every LLM provider gives the triage loop: one `complete` call and one error type.

Both official SDKs (openai, anthropic) are generated from the same template, so their
exceptions share a shape (APITimeoutError, APIConnectionError, APIStatusError with
`status_code` and `response.headers`); `classify` maps either onto ProviderError, so the
retry policy lives in one place (h0/triage/llm.py) and never sees an SDK type.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal, Protocol

from h0.printable import one_line
from h0.retry import requested_wait

Role = Literal["user", "assistant"]
Turn = tuple[Role, str]
Schema = Mapping[str, Any]  # the JSON schema an answer must follow

# Only a placeholder: local servers ignore the key, and the SDKs refuse to start without one.
NO_KEY = "not-needed"

TIMED_OUT = 0  # ProviderError.status of a request that got no answer in time (no HTTP status exists)
# Statuses worth another try: timeouts, conflicts, rate limits, and the server's own failures.
_TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})


@dataclass(frozen=True, slots=True)
class Completion:
    """The model's answer text (reasoning the server returns apart — OpenAI-compatible `reasoning` or
    `reasoning_content`, Anthropic `thinking` blocks — is never part of it), or why it refused."""

    text: str
    refusal: str | None = None
    # The server stopped at its token limit (finish_reason "length", stop_reason "max_tokens"): the
    # answer is cut off, and a draft made from it must say so (h0.triage.llm).
    truncated: bool = False


class ProviderError(Exception):
    """A failed request. `transient`: worth retrying; `retry_after`: seconds the server asked for."""

    def __init__(
        self, message: str, *, transient: bool, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after
        self.status = status


class OverSdk:
    """What a provider over an SDK's client (`_client`) answers like every other: where its requests go,
    closing, and a repr that never shows the key."""

    name: str
    model: str
    _client: Any

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:  # never the key
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"


class ChatProvider(Protocol):
    """A chat model behind an official SDK. Implementations must be safe to share across threads."""

    name: str
    model: str

    @property
    def base_url(self) -> str:
        """Where its requests go (never the key): `h0 doctor`, logs and tests show it."""
        ...

    def complete(
        self, system: str, conversation: Sequence[Turn], schema: Schema | None = None, *, json_answer: bool = False
    ) -> Completion:
        """Send the conversation; return the answer or raise ProviderError (never an SDK error).
        `schema`: the JSON schema the answer must follow, for servers that can enforce one. The server is
        asked for structured output only when the prompt asks for JSON — a `schema`, or `json_answer` for a
        JSON object without one; a prompt that asks for plain text gets none (OpenAI refuses JSON mode for a
        prompt that does not say "JSON", and a refusal would move every later request a mode down)."""
        ...

    def close(self) -> None: ...


def import_sdk(module: str, provider: str) -> ModuleType:
    """Import an official SDK, or explain how to install it (the `llm` extra is optional)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(
            f"LLM_PROVIDER={provider} needs the {module} package: pip install 'h0[llm]' "
            "(in a source checkout: .venv/bin/pip install -e '.[llm]')"
        ) from exc


def classify(exc: Exception, sdk: ModuleType) -> ProviderError:
    """Map an exception raised by `sdk` (the openai or anthropic module) onto ProviderError."""
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError("the request timed out (LLM_TIMEOUT_SECONDS)", transient=True, status=TIMED_OUT)
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(f"could not connect: {exc}", transient=True)
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        return ProviderError(
            f"HTTP {status}: {_short(exc)}",
            transient=status in _TRANSIENT_STATUSES or status >= 500,
            retry_after=requested_wait(exc.response.headers),
            status=status,
        )
    return ProviderError(f"{type(exc).__name__}: {exc}", transient=False)


def _short(exc: Exception) -> str:
    # Prefer the API's own `error.message` over the SDK's "Error code: 429 - {whole body}". Anthropic's SDK
    # hands over the whole body ({"error": {"message": …}}), OpenAI's the body's `error` already unwrapped.
    body = getattr(exc, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return one_line(str(message if isinstance(message, str) and message else exc), 300)
