"""Retry with exponential backoff — only for failures that are safe and likely to pass.

What is retryable is decided where the failure is understood (the backend) and carried
on the error: `RateLimited` (waits at least its `retry_after`), or any H0Error with
`details["retryable"] = True` (5xx, a connection refused before anything was sent, a
read that timed out). A send whose outcome is unknown is never marked retryable.
A `retry_after` longer than `max_wait` is not slept through: the error goes back to the
caller at once, so a tool call never hangs for minutes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from loguru import logger

from h0.errors import H0Error, RateLimited

if TYPE_CHECKING:
    from h0.config import Settings

T = TypeVar("T")


def is_retryable(error: BaseException) -> bool:
    if isinstance(error, RateLimited):
        return True
    return isinstance(error, H0Error) and error.details.get("retryable") is True


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 3
    delay_s: float = 2.0
    multiplier: float = 2.0
    max_wait_s: float = 30.0  # longest single wait; a longer Retry-After is handed to the caller

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(settings.max_retries, settings.retry_delay_ms / 1000.0, settings.retry_backoff_multiplier)

    def delays(self) -> list[float]:
        return [self.delay_s * self.multiplier**n for n in range(self.max_retries)]

    def run(
        self,
        attempt: Callable[[int], T],
        *,
        what: str,
        on_retry: Callable[[int, H0Error, float], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> T:
        """Call `attempt(n)` (n = 0, 1, …) until it returns, fails for good, or retries run out."""
        for number, backoff in enumerate([*self.delays(), None]):
            try:
                return attempt(number)
            except H0Error as error:
                if backoff is None or not is_retryable(error):
                    raise
                wait = backoff
                if isinstance(error, RateLimited):
                    wait = max(wait, error.retry_after)
                if wait > self.max_wait_s:
                    raise
                logger.warning("{} failed ({}: {}); retry {} in {:.3f}s", what, error.code, error.message, number + 1, wait)
                if on_retry is not None:
                    on_retry(number + 1, error, wait)
                sleep(wait)
        raise AssertionError("unreachable")  # the last round either returns or raises
