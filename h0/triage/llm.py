"""LLM triage: ask the model, validate its answer, retry within bounds, else fall back to rules.

Two separate budgets: `invalid_retries` re-asks after an answer that fails validation
(with the validation error in the conversation), `transient_retries` repeats a request
that failed in transit (timeout, 429, 5xx). A refusal or a permanent error (401, 404, …)
falls back at once: asking again would get the same answer. Whatever the model says,
its decision passes the safety rule before anyone sees it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from loguru import logger

from h0.retry import Backoff
from h0.triage import safety
from h0.triage.models import EmailInput, ReplyContext, TriageDecision, TriageOutcome, one_line
from h0.triage.prompt import (
    ANSWER_SCHEMA,
    SYSTEM_PROMPT,
    AnswerInvalid,
    correction_message,
    echo,
    email_message,
    new_nonce,
    parse_answer,
)
from h0.triage.providers import ChatProvider, ProviderError, Turn
from h0.triage.rules import RulesEngine

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Answer(Generic[T]):
    """What a conversation with the model gave: the parsed value, or None and why not."""

    value: T | None
    attempts: int
    reason: str = ""


DEFAULT_INVALID_RETRIES = 2
DEFAULT_TRANSIENT_RETRIES = 2
DEFAULT_RETRY_AFTER_CAP = 5.0  # seconds; a server asking for longer is treated as unavailable
DEFAULT_BACKOFF = 0.5  # seconds before the first transient retry; doubles each time (jittered, at most the cap)


class LLMTriage:
    """Triage one email with a chat model; thread-safe (no per-call state is kept)."""

    def __init__(
        self,
        provider: ChatProvider,
        fallback: RulesEngine,
        *,
        secret: str | None = None,
        invalid_retries: int = DEFAULT_INVALID_RETRIES,
        transient_retries: int = DEFAULT_TRANSIENT_RETRIES,
        retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP,
        backoff: float = DEFAULT_BACKOFF,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.provider = provider
        self.fallback = fallback
        self._secret = secret or None
        self.invalid_retries = invalid_retries
        self.transient_retries = transient_retries
        self.retry_after_cap = retry_after_cap
        self.backoff = Backoff(backoff, 2.0, cap=retry_after_cap, rng=rng)
        self._sleep = sleep

    def triage(self, email: EmailInput, context: ReplyContext | None = None) -> TriageOutcome:
        started = time.perf_counter()
        answer = self.ask(SYSTEM_PROMPT, email_message(email, new_nonce(), context), parse_answer, ANSWER_SCHEMA)
        if answer.value is not None:
            decision, warning = safety.enforce(answer.value, email)
            return self._outcome(decision, started, answer.attempts, warnings=[warning] if warning else [])
        logger.warning("Triage via {} fell back to the rules engine: {}", self.provider.name, answer.reason)
        decision, rule, warnings = self.fallback.decide(email, context)
        return self._outcome(
            decision,
            started,
            answer.attempts,
            fallback=True,
            fallback_reason=answer.reason,
            rule=rule,
            warnings=warnings,
        )

    def ask(
        self,
        system: str,
        message: str,
        parse: Callable[[str | None], T],
        schema: Mapping[str, Any] | None = None,
        correction: Callable[[str], str] = correction_message,
    ) -> Answer[T]:
        """One conversation with the model: ask, validate the answer with `parse` (which raises
        AnswerInvalid with words the model can act on), ask again within the budgets. Never raises
        for the model's behaviour: a refusal, an error or answers that stay invalid end in an
        `Answer` without a value, and the reason."""
        conversation: list[Turn] = [("user", message)]
        attempts = invalid = transient = 0
        while True:
            attempts += 1
            try:
                completion = self.provider.complete(system, conversation, schema)
            except ProviderError as exc:
                wait, reason = self._after_failure(exc, transient, attempts)
                if wait is None:
                    return Answer(None, attempts, reason)
                transient += 1
                logger.info("LLM via {}: {}; retrying in {:.2f}s", self.provider.name, reason, wait)
                self._sleep(wait)
                continue
            if completion.refusal:
                return Answer(None, attempts, f"the model refused: {one_line(self._redact(completion.refusal), 160)}")
            try:
                return Answer(parse(completion.text), attempts)
            except AnswerInvalid as exc:
                reason = f"invalid answer {invalid + 1} time(s): {one_line(self._redact(str(exc)), 240)}"
                if invalid >= self.invalid_retries:
                    return Answer(None, attempts, reason)
                invalid += 1
                logger.info("LLM via {}: {}; asking again", self.provider.name, reason)
                conversation += [("assistant", echo(completion.text)), ("user", correction(str(exc)))]

    def _outcome(self, decision: TriageDecision, started: float, attempts: int, **details: Any) -> TriageOutcome:
        return TriageOutcome(
            decision=decision,
            provider=self.provider.name,
            model=self.provider.model,
            latency_ms=(time.perf_counter() - started) * 1000,
            attempts=attempts,
            **details,
        )

    def _after_failure(self, exc: ProviderError, transient: int, attempts: int) -> tuple[float | None, str]:
        """How long to wait before retrying (None: stop now) and the failure, in words."""
        reason = one_line(self._redact(str(exc)), 240)
        if not exc.transient:
            return None, reason
        if transient >= self.transient_retries:
            return None, f"{reason} (gave up after {attempts} attempts)"
        if exc.retry_after is not None:
            if exc.retry_after > self.retry_after_cap:
                return (
                    None,
                    f"{reason} (asked to wait {exc.retry_after:.1f}s, over the {self.retry_after_cap:.1f}s cap)",
                )
            return exc.retry_after, reason
        return self.backoff.delay(transient), reason

    def _redact(self, text: str) -> str:
        # Some servers echo the key back in error messages ("Incorrect API key provided: sk-…").
        return text.replace(self._secret, "***") if self._secret else text

    def close(self) -> None:
        self.provider.close()
