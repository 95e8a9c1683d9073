"""Retry a mail call with jittered exponential backoff — only for failures that are safe and likely to pass.

What is retryable is decided where the failure is understood (the backend) and carried
on the error: `RateLimited` (waits at least its `retry_after`), or any H0Error with
`details["retryable"] = True` (5xx, a connection refused before anything was sent, a
read that timed out). A send whose outcome is unknown is never marked retryable.
A `retry_after` longer than `max_wait` is not slept through: the error goes back to the
caller at once, so a tool call never hangs for minutes. The delays themselves are h0.retry's;
the loop is tenacity's (`Retrying`), with H0's rules as its stop, wait and retry conditions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from loguru import logger
from tenacity import RetryCallState, Retrying, retry_if_exception

from h0.errors import H0Error, RateLimited
from h0.retry import Backoff

if TYPE_CHECKING:
    from h0.config import Settings

T = TypeVar("T")
MAX_WAIT_S = 30.0  # longest single wait; a longer Retry-After is handed to the caller


def is_retryable(error: BaseException) -> bool:
    if isinstance(error, RateLimited):
        return True
    return isinstance(error, H0Error) and error.details.get("retryable") is True


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Up to `max_retries` retries, paced by `backoff`, no single wait over `max_wait_s`."""

    max_retries: int = 3
    backoff: Backoff = field(default_factory=lambda: Backoff(2.0, 2.0, cap=MAX_WAIT_S))
    max_wait_s: float = MAX_WAIT_S

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        """MAX_RETRIES, RETRY_DELAY_MS (the first delay) and RETRY_BACKOFF_MULTIPLIER."""
        backoff = Backoff(settings.retry_delay_ms / 1000.0, settings.retry_backoff_multiplier, cap=MAX_WAIT_S)
        return cls(settings.max_retries, backoff)

    def wait_before(self, retry: int, error: H0Error) -> float | None:
        """The pause before retry number `retry` (1, 2, …) after `error`; None: hand the error back."""
        if retry > self.max_retries or not is_retryable(error):
            return None
        wait = min(self.backoff.delay(retry - 1), self.max_wait_s)
        if isinstance(error, RateLimited):
            wait = max(wait, error.retry_after)
        return wait if wait <= self.max_wait_s else None

    def run(
        self,
        attempt: Callable[[int], T],
        *,
        what: str,
        on_retry: Callable[[int, H0Error, float], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> T:
        """Call `attempt(n)` (n = 0, 1, …) until it returns, fails for good, or retries run out."""

        def failure(state: RetryCallState) -> H0Error:
            error = state.outcome.exception() if state.outcome is not None else None
            assert isinstance(error, H0Error)
            return error

        def wait(state: RetryCallState) -> float:
            pause = self.wait_before(state.attempt_number, failure(state))
            return 0.0 if pause is None else pause  # None: `stop` (asked next) ends the loop

        def stop(state: RetryCallState) -> bool:
            return self.wait_before(state.attempt_number, failure(state)) is None

        def before_sleep(state: RetryCallState) -> None:
            error, pause = failure(state), wait(state)
            logger.warning(
                "{} failed ({}: {}); retry {} in {:.3f}s", what, error.code, error.message, state.attempt_number, pause
            )
            if on_retry is not None:
                on_retry(state.attempt_number, error, pause)

        retrying = Retrying(
            retry=retry_if_exception(lambda e: isinstance(e, H0Error)),
            stop=stop,
            wait=wait,
            before_sleep=before_sleep,
            sleep=sleep,
            reraise=True,
        )
        return retrying(lambda: attempt(retrying.statistics.get("attempt_number", 1) - 1))
