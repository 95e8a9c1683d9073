"""A call with a deadline, for a client library that keeps its sockets to itself (CalDAV, Gmail's, IMAP's and
Graph's health checks): the call runs on a daemon thread of its own, waited for at most so long, then left to
end alone by the library's own socket timeouts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Late(TimeoutError):
    """The call did not answer within its deadline."""


def answer_within(seconds: float, work: Callable[[], T], name: str) -> T:
    """`work()`'s answer if it comes within `seconds`; its own exception if it raised one; else `Late`. It runs on
    a daemon thread named `name`."""
    outcome: list[T | BaseException] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, who raises it
            outcome.append(exc)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise Late(f"{name}: no answer within {seconds:g} s")
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def within(seconds: float, work: Callable[[], T], name: str) -> T | None:
    """`work()`'s answer if it comes within `seconds`, else None: late or failed alike (a health check then says
    "account unknown"; the tools report the details)."""
    try:
        return answer_within(seconds, work, name)
    except Exception:  # noqa: BLE001 — an answer that did not come is the whole report
        return None
