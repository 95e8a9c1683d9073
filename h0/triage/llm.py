"""LLM triage: ask the model, validate its answer, correct it within bounds, else fall back to rules.

`invalid_retries` re-asks after an answer that fails validation (with the validation error in the
conversation): a turn of the conversation, not a wait. A request that fails is never repeated
here, nor waited on: when the model is unavailable (429, 5xx, connection refused, a timeout) — or
refuses — the outcome is the rules' decision marked `deferred` with the reason and the server's
Retry-After: the triage handler then leaves the email pending and the work queue tries again after
its backoff or that Retry-After (h0.handlers.llmwait), so a server that was briefly down never
decides an email for good and no worker sleeps. A permanent error (401, 404, …) or answers that
stay invalid fall back to the rules at once. An answer cut off at the
token limit is read as far as it goes and its draft carries a placeholder that blocks sending.
Whatever the model says, its decision passes the safety rule before anyone sees it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from loguru import logger

from h0.printable import one_line
from h0.triage import safety
from h0.triage.answertext import closed_json
from h0.triage.models import EmailInput, ReplyContext, TriageDecision, TriageOutcome
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
    transient: bool = False  # no value, but asking later may give one (unavailable, timed out, refused)
    retry_after: float | None = None  # seconds the server asked for, when it named them
    truncated: bool = False  # the value was read from an answer cut off at the token limit


DEFAULT_INVALID_RETRIES = 2
MAX_RETRY_AFTER = 3600.0  # a Retry-After the work queue honours, at most (longer: its own backoff)
TRUNCATED_PLACEHOLDER = "[FILL: the rest of this reply — the model's answer was cut off at its token limit]"
TRUNCATED_WARNING = "the model's answer was cut off at its token limit; the draft says where and cannot be sent as is"


class LLMTriage:
    """Triage one email with a chat model; thread-safe (no per-call state is kept)."""

    def __init__(
        self,
        provider: ChatProvider,
        fallback: RulesEngine,
        *,
        secret: str | None = None,
        invalid_retries: int = DEFAULT_INVALID_RETRIES,
    ) -> None:
        self.provider = provider
        self.fallback = fallback
        self._secret = secret or None
        self.invalid_retries = invalid_retries

    def triage(self, email: EmailInput, context: ReplyContext | None = None) -> TriageOutcome:
        started = time.perf_counter()
        answer = self.ask(SYSTEM_PROMPT, email_message(email, new_nonce(), context), parse_answer, ANSWER_SCHEMA)
        if answer.value is not None:
            decision, warning = safety.enforce(answer.value, email)
            warnings = [warning] if warning else []
            if answer.truncated:
                decision = flag_truncated(decision)
                warnings.append(TRUNCATED_WARNING)
            return self._outcome(decision, started, answer.attempts, warnings=warnings, truncated=answer.truncated)
        if answer.transient:
            logger.info("Triage via {} deferred: {}", self.provider.name, answer.reason)
        else:
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
            deferred=answer.reason if answer.transient else None,
            retry_after=answer.retry_after if answer.transient else None,
        )

    def ask(
        self,
        system: str,
        message: str,
        parse: Callable[[str | None], T],
        schema: Mapping[str, Any] | None = None,
        correction: Callable[[str], str] = correction_message,
        invalid_retries: int | None = None,
    ) -> Answer[T]:
        """One conversation with the model: ask, validate the answer with `parse` (which raises
        AnswerInvalid with words the model can act on), ask again within the corrections' budget. Never
        raises for the model's behaviour: a refusal, a failed request (answered at once, with the server's
        Retry-After: the work queue asks again) or answers that stay invalid end in an `Answer` without a
        value, and the reason. `invalid_retries`: this conversation's own budget of corrections (a
        one-call extra like a language re-ask passes 0)."""
        conversation: list[Turn] = [("user", message)]
        attempts = invalid = 0
        while True:
            attempts += 1
            try:
                completion = self.provider.complete(system, conversation, schema)
            except ProviderError as exc:
                reason = one_line(self._redact(str(exc)), 240)
                return Answer(None, attempts, reason, transient=exc.transient, retry_after=_capped(exc.retry_after))
            if completion.refusal:
                refused = f"the model refused: {one_line(self._redact(completion.refusal), 160)}"
                return Answer(None, attempts, refused, transient=True)
            try:
                return Answer(parse(completion.text), attempts)
            except AnswerInvalid as exc:
                if completion.truncated:
                    salvaged = self._salvage(completion.text, parse)
                    if salvaged is not None:
                        return Answer(salvaged, attempts, truncated=True)
                problem = (
                    f"{exc} (the answer was cut off at the token limit: keep it shorter)"
                    if completion.truncated
                    else str(exc)
                )
                reason = f"invalid answer {invalid + 1} time(s): {one_line(self._redact(problem), 240)}"
                if invalid >= (self.invalid_retries if invalid_retries is None else invalid_retries):
                    return Answer(None, attempts, reason)
                invalid += 1
                logger.info("LLM via {}: {}; asking again", self.provider.name, reason)
                conversation += [("assistant", echo(completion.text)), ("user", correction(problem))]

    @staticmethod
    def _salvage(text: str, parse: Callable[[str | None], T]) -> T | None:
        """The value of an answer cut off at the token limit, its open JSON closed (None: still unusable)."""
        closed = closed_json(text)
        if closed is None:
            return None
        try:
            return parse(closed)
        except AnswerInvalid:
            return None

    def _outcome(self, decision: TriageDecision, started: float, attempts: int, **details: Any) -> TriageOutcome:
        return TriageOutcome(
            decision=decision,
            provider=self.provider.name,
            model=self.provider.model,
            latency_ms=(time.perf_counter() - started) * 1000,
            attempts=attempts,
            **details,
        )

    def _redact(self, text: str) -> str:
        # Some servers echo the key back in error messages ("Incorrect API key provided: sk-…").
        return text.replace(self._secret, "***") if self._secret else text

    def close(self) -> None:
        self.provider.close()


def flag_truncated(decision: TriageDecision) -> TriageDecision:
    """A decision read from a cut-off answer: its draft ends in a placeholder, which blocks sending
    until the owner finishes or shortens the reply (h0.mail.compose.drafts refuses any `[FILL: …]`)."""
    if not decision.reply_body:
        return decision
    return decision.model_copy(update={"reply_body": f"{decision.reply_body.rstrip()}\n\n{TRUNCATED_PLACEHOLDER}"})


def _capped(retry_after: float | None) -> float | None:
    return retry_after if retry_after is not None and 0 <= retry_after <= MAX_RETRY_AFTER else None
