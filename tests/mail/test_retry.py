"""The mail retry loop, on its own (the send ledger is the state database: tests/vault/test_state.py).

Exact delays come from jitter-free backoffs; the jitter itself is tests/test_retry_policy.py's.
"""

from __future__ import annotations

import random

import pytest

from h0.config import load_settings
from h0.errors import AuthRequired, InternalError, RateLimited, SendFailed
from h0.mail.providers.retry import RetryPolicy
from h0.retry import Backoff


def flaky(errors: list[Exception], result: str = "ok"):
    calls: list[int] = []

    def attempt(number: int) -> str:
        calls.append(number)
        if errors:
            raise errors.pop(0)
        return result

    return attempt, calls


def exact(base: float, multiplier: float = 2.0) -> Backoff:
    return Backoff(base, multiplier, jitter="none")


def test_given_retryable_failures_then_it_backs_off_exponentially_and_succeeds():
    slept: list[float] = []
    attempt, calls = flaky([InternalError("5xx", retryable=True), SendFailed("conn refused", retryable=True)])
    assert RetryPolicy(3, exact(0.5)).run(attempt, what="t", sleep=slept.append) == "ok"
    assert calls == [0, 1, 2] and slept == [0.5, 1.0]


def test_given_a_failure_not_marked_retryable_then_it_is_raised_at_once():
    for error in (
        SendFailed("timeout after sending", outcome="unknown", retryable=False),
        AuthRequired("x"),
        SendFailed("x"),
    ):
        attempt, calls = flaky([error])
        with pytest.raises(type(error)):
            RetryPolicy(3, exact(0.001)).run(attempt, what="t", sleep=lambda _: None)
        assert calls == [0]


def test_given_rate_limits_then_retry_after_is_honoured_and_the_last_one_is_returned():
    slept: list[float] = []
    attempt, calls = flaky([RateLimited("429", retry_after=0.3) for _ in range(5)])
    with pytest.raises(RateLimited) as caught:
        RetryPolicy(3, exact(0.1)).run(attempt, what="t", sleep=slept.append)
    assert calls == [0, 1, 2, 3]
    assert slept == [0.3, 0.3, 0.4]  # max(backoff, Retry-After)
    assert caught.value.retry_after == 0.3


def test_given_jittered_backoff_then_a_rate_limit_still_waits_at_least_its_retry_after():
    slept: list[float] = []
    attempt, _ = flaky([RateLimited("429", retry_after=0.3) for _ in range(3)])
    RetryPolicy(3, Backoff(0.2, 2.0, rng=random.Random(7))).run(attempt, what="t", sleep=slept.append)
    assert len(slept) == 3 and all(wait >= 0.3 for wait in slept)
    assert 0.4 <= slept[2] <= 0.8  # the third backoff, jittered within [d/2, d], beats the Retry-After


def test_given_a_retry_after_beyond_the_wait_budget_then_the_caller_gets_it_immediately():
    slept: list[float] = []
    attempt, calls = flaky([RateLimited("daily quota", retry_after=3600)])
    with pytest.raises(RateLimited):
        RetryPolicy(3, exact(0.1), max_wait_s=30).run(attempt, what="t", sleep=slept.append)
    assert calls == [0] and slept == []


def test_given_a_backoff_longer_than_the_wait_budget_then_it_waits_the_budget_not_longer():
    slept: list[float] = []
    attempt, _ = flaky([InternalError("5xx", retryable=True)] * 3)
    RetryPolicy(3, exact(20.0), max_wait_s=30).run(attempt, what="t", sleep=slept.append)
    assert slept == [20.0, 30.0, 30.0]


def test_given_retries_then_each_is_reported():
    seen: list[tuple[int, str]] = []
    attempt, _ = flaky([InternalError("a", retryable=True)])
    RetryPolicy(2, exact(0.0)).run(
        attempt, what="t", on_retry=lambda n, e, w: seen.append((n, e.code)), sleep=lambda _: None
    )
    assert seen == [(1, "internal_error")]


def test_given_the_retry_settings_then_the_policy_uses_them_with_jitter():
    """Given MAX_RETRIES=4, RETRY_DELAY_MS=1000 and RETRY_BACKOFF_MULTIPLIER=3, then there are four
    retries, the n-th waiting between half and all of 1 s·3ⁿ (never past the 30 s budget)."""
    policy = RetryPolicy.from_settings(load_settings(max_retries=4, retry_delay_ms=1000, retry_backoff_multiplier=3.0))
    assert policy.max_retries == 4 and policy.backoff.jitter == "equal"
    error = InternalError("5xx", retryable=True)
    for retry, nominal in enumerate([1.0, 3.0, 9.0, 27.0], start=1):
        wait = policy.wait_before(retry, error)
        assert wait is not None and nominal / 2 <= wait <= nominal
    assert policy.wait_before(5, error) is None
