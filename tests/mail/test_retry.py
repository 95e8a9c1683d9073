"""The retry policy and the send ledger, on their own."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from h0.errors import AuthRequired, InternalError, RateLimited, SendFailed
from h0.mail.ledger import DAY, HOUR, PRE_SEND, SENT, SendLedger
from h0.mail.retry import RetryPolicy
from h0.vault.audit import AuditLog


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


def _sent(audit: AuditLog, n: int) -> None:
    for i in range(n):
        audit.write(PRE_SEND, rfc822_message_id=f"<{i}@t>", idempotency_key=f"k{i}")
        audit.write(SENT, rfc822_message_id=f"<{i}@t>", idempotency_key=f"k{i}", provider_message_id=f"p{i}")


def test_given_sends_in_the_log_when_a_new_ledger_starts_then_the_counts_survive_the_restart(tmp_path: Path):
    audit = AuditLog(tmp_path / "Logs", "gmail_mcp")
    _sent(audit, 3)
    ledger = SendLedger(audit)  # a fresh process
    assert len(ledger.sends_within(HOUR)) == 3 and len(ledger.sends_within(DAY)) == 3
    assert ledger.for_key("k1").state == "sent"
    assert ledger.for_message("p2").outcome["provider_message_id"] == "p2"


def test_given_another_process_appends_then_the_ledger_sees_it(tmp_path: Path):
    audit = AuditLog(tmp_path / "Logs", "gmail_mcp")
    ledger = SendLedger(audit)
    other = AuditLog(tmp_path / "Logs", "gmail_mcp")
    _sent(other, 2)
    assert len(ledger.sends_within(HOUR)) == 2


def test_given_a_half_written_last_line_then_it_is_read_once_complete(tmp_path: Path):
    audit = AuditLog(tmp_path / "Logs", "gmail_mcp")
    ledger = SendLedger(audit)
    record = {"timestamp": "2099-01-01T00:00:00.000Z", "event": SENT, "rfc822_message_id": "<x@t>", "provider_message_id": "px"}
    line = json.dumps(record)
    path = audit.path_for(dt.datetime.now(dt.UTC).date())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(line[:20])
    assert ledger.for_message("px") is None
    path.write_text(line + "\n")
    assert ledger.for_message("px").state == "sent"


def test_given_a_pre_send_without_outcome_then_the_key_is_pending(tmp_path: Path):
    audit = AuditLog(tmp_path / "Logs", "gmail_mcp")
    audit.write(PRE_SEND, rfc822_message_id="<a@t>", idempotency_key="k")
    ledger = SendLedger(audit)
    assert ledger.for_key("k").state == "pending"
    audit.write("send_failed", rfc822_message_id="<a@t>", idempotency_key="k", outcome="unknown")
    assert ledger.for_key("k").state == "unknown"
    audit.write("send_failed", rfc822_message_id="<b@t>", idempotency_key="k2", outcome="failed")
    assert ledger.for_key("k2").state == "failed"
