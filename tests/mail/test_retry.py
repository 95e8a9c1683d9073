"""The retry policy, on its own (the send ledger is the state database: tests/vault/test_state.py)."""

from __future__ import annotations


import pytest

from h0.errors import AuthRequired, InternalError, RateLimited, SendFailed
from h0.mail.retry import RetryPolicy


def flaky(errors: list[Exception], result: str = "ok"):
    calls: list[int] = []

    def attempt(number: int) -> str:
        calls.append(number)
        if errors:
            raise errors.pop(0)
        return result

    return attempt, calls


def test_given_retryable_failures_then_it_backs_off_exponentially_and_succeeds():
    slept: list[float] = []
    attempt, calls = flaky([InternalError("5xx", retryable=True), SendFailed("conn refused", retryable=True)])
    assert RetryPolicy(3, 0.5, 2.0).run(attempt, what="t", sleep=slept.append) == "ok"
    assert calls == [0, 1, 2] and slept == [0.5, 1.0]


def test_given_a_failure_not_marked_retryable_then_it_is_raised_at_once():
    for error in (SendFailed("timeout after sending", outcome="unknown", retryable=False), AuthRequired("x"), SendFailed("x")):
        attempt, calls = flaky([error])
        with pytest.raises(type(error)):
            RetryPolicy(3, 0.001, 2.0).run(attempt, what="t", sleep=lambda _: None)
        assert calls == [0]


def test_given_rate_limits_then_retry_after_is_honoured_and_the_last_one_is_returned():
    slept: list[float] = []
    attempt, calls = flaky([RateLimited("429", retry_after=0.3) for _ in range(5)])
    with pytest.raises(RateLimited) as caught:
        RetryPolicy(3, 0.1, 2.0).run(attempt, what="t", sleep=slept.append)
    assert calls == [0, 1, 2, 3]
    assert slept == [0.3, 0.3, 0.4]  # max(backoff, Retry-After)
    assert caught.value.retry_after == 0.3


def test_given_a_retry_after_beyond_the_wait_budget_then_the_caller_gets_it_immediately():
    slept: list[float] = []
    attempt, calls = flaky([RateLimited("daily quota", retry_after=3600)])
    with pytest.raises(RateLimited):
        RetryPolicy(3, 0.1, 2.0, max_wait_s=30).run(attempt, what="t", sleep=slept.append)
    assert calls == [0] and slept == []


def test_given_retries_then_each_is_reported():
    seen: list[tuple[int, str]] = []
    attempt, _ = flaky([InternalError("a", retryable=True)])
    RetryPolicy(2, 0.0, 2.0).run(attempt, what="t", on_retry=lambda n, e, w: seen.append((n, e.code)), sleep=lambda _: None)
    assert seen == [(1, "internal_error")]
