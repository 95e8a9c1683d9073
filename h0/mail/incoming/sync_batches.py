"""Reading and labelling messages in batches, at the pace the provider takes them.

Messages are read and labelled in batch requests of at most the backend's `batch_limit` (50).
Gmail works a batch's parts in parallel and refuses the parts past its per-user concurrency
with 429 "Too many concurrent requests for user": those parts go again at once in a batch of as
many as got through, and that number becomes the batch size for CONCURRENCY_MEMORY_S — one batch in
flight at a time (h0.mail.providers.gmail_batch) and that size are the cap on concurrent requests.
Nothing here waits: a round in which no part got through ends the call with the provider's typed
"try again" (its Retry-After on it), and the caller's work queue decides when (h0.pipeline.workqueue).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from loguru import logger

from h0.errors import AuthRequired, H0Error, InternalError, PermissionDenied, RateLimited
from h0.mail.providers.retry import is_retryable

T = TypeVar("T")
CONCURRENCY_MEMORY_S = 300.0  # how long a batch size Gmail accepted without 429s is kept as the cap


class Batches:
    """Calls over many ids, at most `limit` a round trip, as many rounds as make progress."""

    def __init__(self, limit: int, *, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.clock = clock
        self._learned: tuple[int, float] = (0, 0.0)  # (batch size, until when) after a 429 on concurrency

    def run(
        self, ids: list[str], call: Callable[[list[str]], Mapping[str, T | H0Error]]
    ) -> tuple[dict[str, T], dict[str, H0Error]]:
        """`call` over `ids` in batches of at most `limit`. Parts Gmail refuses for its concurrency (429
        "too many concurrent requests", 403 rateLimitExceeded, 5xx) go again at once in a batch of as many as
        got through; a round in which none got through raises the refusal (the caller tries again later).
        Returns (answers, skipped): skipped are ids answered not_found/invalid (deleted since, or not a
        message id)."""
        pending = list(dict.fromkeys(ids))
        size = self._size()
        done: dict[str, T] = {}
        skipped: dict[str, H0Error] = {}
        while pending:
            chunk = pending[:size]
            answers = call(chunk)  # a refusal of the whole call is the caller's: raised as it is
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
            if last is None:
                continue
            through = len(chunk) - len(retry)
            if not through:
                raise last  # no progress: the provider's own "try again", Retry-After and all
            if isinstance(last, RateLimited):
                self._learn(through)
            logger.info("mail sync: {} part(s) refused ({}); again in batches of {}", len(retry), last.code, through)
            size = through
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
