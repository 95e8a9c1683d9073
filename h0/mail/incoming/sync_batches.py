"""Reading and labelling messages in batches, at the pace the provider takes them.

Messages are read and labelled in batch requests of at most the backend's `batch_limit` (50).
Gmail works a batch's parts in parallel and refuses the parts past its per-user concurrency
with 429 "Too many concurrent requests for user": those parts are retried after a pause, and
the number that got through becomes the batch size for CONCURRENCY_MEMORY_S — one batch in
flight at a time (h0.mail.providers.gmail_batch) and that size are the cap on concurrent requests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from loguru import logger

from h0.errors import AuthRequired, H0Error, InternalError, PermissionDenied, RateLimited
from h0.mail.providers.retry import RetryPolicy, is_retryable

T = TypeVar("T")
CONCURRENCY_MEMORY_S = 300.0  # how long a batch size Gmail accepted without 429s is kept as the cap


class Batches:
    """Calls over many ids, at most `limit` a round trip, retried and paced under the retry policy."""

    def __init__(
        self, policy: RetryPolicy, limit: int, *, clock: Callable[[], float], sleep: Callable[[float], None]
    ) -> None:
        self.policy = policy
        self.limit = limit
        self.clock = clock
        self.sleep = sleep
        self._learned: tuple[int, float] = (0, 0.0)  # (batch size, until when) after a 429 on concurrency

    def run(
        self, ids: list[str], call: Callable[[list[str]], Mapping[str, T | H0Error]]
    ) -> tuple[dict[str, T], dict[str, H0Error]]:
        """`call` over `ids` in batches of at most `limit`, retrying the parts Gmail
        rate-limits (429 "too many concurrent requests", 403 rateLimitExceeded, 5xx) until they pass.
        A round where some parts got through resets the patience and shrinks the batch to what got
        through; rounds with no progress count against MAX_RETRIES. Returns (answers, skipped):
        skipped are ids answered not_found/invalid (deleted since, or not a message id)."""
        pending = list(dict.fromkeys(ids))
        size = self._size()
        done: dict[str, T] = {}
        skipped: dict[str, H0Error] = {}
        stalls = 0
        while pending:
            chunk = pending[:size]
            try:
                answers = call(chunk)
            except H0Error as error:
                if not is_retryable(error):
                    raise
                stalls += 1
                self._pause(error, stalls, len(chunk))
                size = max(1, size // 2)
                continue
            retry: list[str] = []
            last: H0Error | None = None
            for key in chunk:
                answer = answers.get(key, InternalError("no answer for this call", retryable=True))
                if not isinstance(answer, H0Error):
                    done[key] = answer
                elif is_retryable(answer):
                    retry.append(key)
                    last = answer
                elif isinstance(answer, (AuthRequired, PermissionDenied)):
                    raise answer
                else:
                    skipped[key] = answer
            pending = retry + pending[len(chunk) :]
            if last is not None:
                through = len(chunk) - len(retry)
                if through and isinstance(last, RateLimited):
                    self._learn(through)
                stalls = 0 if through else stalls + 1
                self._pause(last, stalls, len(retry))
                size = max(1, through or size // 2)
        return done, skipped

    def _size(self) -> int:
        """Calls per batch: `limit`, or fewer while Gmail recently refused parts past that many."""
        limit = max(1, self.limit)
        size, until = self._learned
        return max(1, min(limit, size)) if until > self.clock() else limit

    def _learn(self, size: int) -> None:
        """Gmail answered 429 "too many concurrent requests" past `size` parts: send no more at once for a while,
        rather than have every batch refused in part (and waited on) again."""
        self._learned = (size, self.clock() + CONCURRENCY_MEMORY_S)

    def _pause(self, error: H0Error, stalls: int, parts: int) -> None:
        wait = self.policy.wait_before(stalls, error)
        if wait is None:
            raise error
        logger.warning(
            "mail sync: {} call(s) refused ({}: {}); again in {:.2f} s", parts, error.code, error.message, wait
        )
        self.sleep(wait)
