"""What is worth trying again (h0.mail.providers.retry), and that the mail room never waits to try it.

The mail server makes one attempt per tool call and answers a failure at once, typed: "try again at T"
(`rate_limited` with the provider's Retry-After, or `retryable`), "outcome unknown", or for good. The
delays are the work queue's (tests/pipeline/test_workqueue.py); the backoff itself tests/test_retry_policy.py's.
"""

from __future__ import annotations

import pytest

from h0.errors import AuthRequired, H0Error, InternalError, NotFound, RateLimited, SendFailed
from h0.mail.incoming.sync_batches import Batches
from h0.mail.providers.retry import is_retryable


def test_given_a_providers_typed_errors_then_only_those_it_marked_are_worth_trying_again():
    assert is_retryable(RateLimited("429", retry_after=3))
    assert is_retryable(InternalError("5xx", retryable=True))
    assert is_retryable(SendFailed("connection refused, nothing sent", retryable=True, outcome="not_sent"))
    assert not is_retryable(SendFailed("the server took it and went silent", outcome="unknown", retryable=False))
    assert not is_retryable(SendFailed("550 no such user", bounce=True))
    assert not is_retryable(AuthRequired("token revoked"))
    assert not is_retryable(ValueError("not ours"))


class Parts:
    """A batch endpoint that refuses the parts past `accepts` of each call with 429 (Gmail's concurrency),
    for `refusing` calls, then takes every part: it records each call's ids."""

    def __init__(self, accepts: int, refusing: int = 1_000) -> None:
        self.accepts = accepts
        self.refusing = refusing
        self.calls: list[list[str]] = []

    def __call__(self, ids: list[str]) -> dict[str, str | H0Error]:
        self.calls.append(list(ids))
        if len(self.calls) > self.refusing:
            return {i: f"read {i}" for i in ids}
        refused = RateLimited("Too many concurrent requests for user.", retry_after=2)
        return {i: f"read {i}" if n < self.accepts else refused for n, i in enumerate(ids)}


def test_given_parts_refused_past_a_concurrency_then_the_rest_go_at_once_in_batches_that_fit():
    """Given Gmail takes 7 parts of a batch and refuses the others (429), when 30 ids are read, then the refused
    parts go again at once in batches of 7 (no wait: each round made progress), and every id is read once."""
    parts = Parts(accepts=7)
    done, skipped = Batches(50, clock=lambda: 0.0).run([f"m{i}" for i in range(30)], parts)
    assert sorted(done) == sorted(f"m{i}" for i in range(30)) and skipped == {}
    assert [len(c) for c in parts.calls] == [30, 7, 7, 7, 2]


def test_given_a_round_where_nothing_gets_through_then_the_refusal_is_the_answer_with_its_retry_after():
    """Given a batch endpoint that takes no part at all, when ids are read, then after that one round the
    provider's refusal is raised as it is (Retry-After 2): the caller tries again later, nothing waits here."""
    parts = Parts(accepts=0)
    with pytest.raises(RateLimited) as caught:
        Batches(50, clock=lambda: 0.0).run(["a", "b", "c"], parts)
    assert caught.value.retry_after == 2 and len(parts.calls) == 1


def test_given_ids_the_provider_says_are_gone_then_they_are_skipped_not_retried():
    def call(ids: list[str]) -> dict[str, str | H0Error]:
        return {i: NotFound("deleted") if i == "gone" else i for i in ids}

    done, skipped = Batches(50, clock=lambda: 0.0).run(["a", "gone", "b"], call)
    assert sorted(done) == ["a", "b"] and list(skipped) == ["gone"]
