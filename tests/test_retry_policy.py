"""H0's one backoff policy and one Retry-After parser (h0/retry.py), on their own."""

from __future__ import annotations

import email.utils
import itertools
import random
import statistics

import pytest

from h0.retry import RETRY_AFTER_LIMIT_S, Again, Backoff, Unqueued, Waits, requested_wait, retry_after, retry_words

NOW = 1_700_000_000.0  # a fixed clock for HTTP-dates


def http_date(epoch: float) -> str:
    return email.utils.formatdate(epoch, usegmt=True)


# -- Backoff ------------------------------------------------------------------------------------


def test_given_no_jitter_then_delays_grow_by_the_multiplier_up_to_the_cap():
    assert Backoff(0.5, 2.0, cap=5.0, jitter="none").delays(6) == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert Backoff(1.0, 3.0, jitter="none").delays(4) == [1.0, 3.0, 9.0, 27.0]


@pytest.mark.parametrize("attempt", range(12))
def test_given_equal_jitter_then_each_delay_lies_between_half_and_all_of_the_nominal(attempt: int):
    backoff = Backoff(0.1, 2.0, cap=30.0, rng=random.Random(attempt))
    nominal = backoff.nominal(attempt)
    draws = [backoff.delay(attempt) for _ in range(200)]
    assert all(nominal / 2 <= d <= nominal for d in draws)
    assert max(draws) - min(draws) > nominal / 4  # it does spread: threads that failed together part


@pytest.mark.parametrize("attempt", range(12))
def test_given_full_jitter_then_each_delay_lies_between_zero_and_the_nominal(attempt: int):
    backoff = Backoff(0.1, 2.0, cap=30.0, jitter="full", rng=random.Random(attempt))
    nominal = backoff.nominal(attempt)
    assert all(0.0 <= backoff.delay(attempt) <= nominal for _ in range(200))


@pytest.mark.parametrize("jitter", ["equal", "full"])
def test_given_jitter_then_no_delay_ever_exceeds_the_cap(jitter: str):
    backoff = Backoff(1.0, 2.0, cap=60.0, jitter=jitter, rng=random.Random(1))  # type: ignore[arg-type]
    assert max(backoff.delay(n) for n in range(64) for _ in range(20)) <= 60.0


def test_given_equal_jitter_then_the_expected_delay_grows_until_the_cap_and_stays_there():
    backoff = Backoff(0.05, 2.0, cap=5.0, rng=random.Random(42))
    means = [statistics.fmean(backoff.delay(n) for _ in range(400)) for n in range(10)]
    # each mean sits near 3/4 of its nominal delay, and the nominal delays double up to the cap
    assert all(abs(mean - 0.75 * backoff.nominal(n)) <= 0.05 * backoff.nominal(n) for n, mean in enumerate(means))
    below_cap = [mean for n, mean in enumerate(means) if backoff.nominal(n) < backoff.cap]
    assert len(below_cap) == 7 and all(later > earlier for earlier, later in itertools.pairwise(below_cap))


def test_given_equal_jitter_and_a_multiplier_of_two_then_no_retry_waits_less_than_the_one_before():
    backoff = Backoff(0.05, 2.0, rng=random.Random(3))
    for _ in range(50):
        delays = backoff.delays(10)
        assert delays == sorted(delays)


def test_given_the_same_seed_then_the_same_delays():
    first = Backoff(0.2, 2.0, cap=10.0, rng=random.Random(1234)).delays(8)
    again = Backoff(0.2, 2.0, cap=10.0, rng=random.Random(1234)).delays(8)
    other = Backoff(0.2, 2.0, cap=10.0, rng=random.Random(4321)).delays(8)
    assert first == again and first != other


def test_given_very_many_attempts_then_the_delay_stays_the_cap_without_overflowing():
    assert Backoff(1.0, 2.0, cap=60.0, jitter="none").delay(5000) == 60.0
    assert Backoff(0.0, 2.0, cap=60.0, jitter="none").delay(5000) == 0.0
    assert 30.0 <= Backoff(1.0, 2.0, cap=60.0, rng=random.Random(0)).delay(10**6) <= 60.0


@pytest.mark.parametrize(
    "options",
    [
        {"base": -1.0},
        {"base": 1.0, "multiplier": 0.5},
        {"base": 1.0, "cap": -1.0},
        {"base": 1.0, "jitter": "decorrelated"},
    ],
)
def test_given_nonsense_parameters_then_the_backoff_refuses_them(options: dict):
    with pytest.raises(ValueError):
        Backoff(**options)


# -- Retry-After --------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "seconds"), [("120", 120.0), ("0", 0.0), ("0.25", 0.25), ("007", 7.0)])
def test_given_delay_seconds_then_that_many_seconds(value: str, seconds: float):
    assert retry_after(value, now=NOW) == seconds


def test_given_an_http_date_in_the_future_then_the_seconds_until_it():
    assert retry_after(http_date(NOW + 90), now=NOW) == 90.0


def test_given_an_http_date_in_the_past_then_retry_now():
    assert retry_after(http_date(NOW - 3600), now=NOW) == 0.0


@pytest.mark.parametrize("shape", ["Tuesday, 14-Nov-23 22:15:20 GMT", "Tue Nov 14 22:15:20 2023"])
def test_given_the_obsolete_http_date_forms_then_they_are_read_too(shape: str):
    # RFC 9110 §5.6.7: recipients accept rfc850-date and asctime-date (both GMT); NOW is 22:13:20.
    assert retry_after(shape, now=NOW) == 120.0


@pytest.mark.parametrize(
    "value",
    [None, "", "   ", "soon", "12 seconds", "1e3", "nan", "inf", "0x10", "1_000", "Mon, 32 Foo 2023", "9" * 200],
)
def test_given_garbage_then_none(value: str | None):
    assert retry_after(value, now=NOW) is None


@pytest.mark.parametrize("value", ["-1", "-0.5", "+5"])
def test_given_a_negative_or_signed_number_then_none(value: str):
    assert retry_after(value, now=NOW) is None


@pytest.mark.parametrize(
    "value", ["99999999999999999999999999", str(int(RETRY_AFTER_LIMIT_S) + 1), "Fri, 31 Dec 9999 23:59:59 GMT"]
)
def test_given_an_enormous_wait_then_it_is_not_believed(value: str):
    assert retry_after(value, now=NOW) is None


def test_given_surrounding_whitespace_then_it_is_ignored():
    assert retry_after("  30\t", now=NOW) == 30.0
    assert retry_after(f" {http_date(NOW + 5)} ", now=NOW) == 5.0


def test_given_response_headers_then_retry_after_ms_wins_and_garbage_falls_through():
    assert requested_wait({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert requested_wait({"retry-after-ms": "soon", "retry-after": "9"}) == 9.0
    assert requested_wait({"retry-after": http_date(NOW + 60)}, now=NOW) == 60.0
    assert requested_wait({}) is None


def test_given_no_work_queue_then_a_failure_is_not_retried_and_the_other_waits_are_the_table():
    """Without the daemon's queue (tests, one-off contexts) nobody retries a failure; a pause still lasts its time."""
    unqueued = Unqueued(Waits(credentials_s=45.0))
    assert unqueued.wait("Approved/a.md", Again.FAILED) is None
    assert unqueued.wait("Approved/a.md", Again.FAILED, 7.0) == 7.0  # a failure that named its Retry-After
    assert unqueued.wait("Approved/a.md", Again.CREDENTIALS) == 45.0
    assert unqueued.wait("Approved/a.md", Again.SEND_CAP, 0.3) == 1.0
    assert unqueued.wait("Approved/a.md", Again.NOT_YET) == 0.2


def test_a_wait_is_said_as_this_process_will_keep_it():
    assert retry_words(12.4) == "retry in 12s" and retry_words(None) == "not retried"
    assert (
        retry_words(12.4, one_pass=True)
        == retry_words(None, one_pass=True)
        == ("the next `h0 sweep` or `h0 watch` retries")
    )
