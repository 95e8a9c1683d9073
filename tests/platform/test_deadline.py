"""A call with a deadline on a thread of its own (h0.platform.deadline): the answer, the call's own error, or
`Late` — and `within`, the form that takes a late or failed answer as no answer."""

from __future__ import annotations

import threading

import pytest

from h0.platform.deadline import Late, answer_within, within


class Refused(Exception):
    pass


def refuse() -> str:
    raise Refused("no")


def test_an_answer_in_time_is_the_answer() -> None:
    assert answer_within(5.0, lambda: "ok", "h0-test") == "ok"
    assert within(5.0, lambda: "ok", "h0-test") == "ok"


def test_a_failed_call_raises_its_own_error_or_is_no_answer() -> None:
    with pytest.raises(Refused, match="no"):
        answer_within(5.0, refuse, "h0-test")
    assert within(5.0, refuse, "h0-test") is None


def test_given_a_call_that_hangs_when_its_deadline_passes_then_late_and_the_thread_is_left_to_end() -> None:
    release = threading.Event()
    started = threading.Event()

    def hang() -> str:
        started.set()
        release.wait(30)
        return "too late"

    try:
        with pytest.raises(Late, match="h0-test-hang"):
            answer_within(0.05, hang, "h0-test-hang")
        assert started.is_set()
        assert within(0.05, hang, "h0-test-hang") is None
        assert any(t.name == "h0-test-hang" and t.daemon for t in threading.enumerate())
    finally:
        release.set()
