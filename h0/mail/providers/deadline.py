"""A provider's answer within a deadline, from a client library that keeps its sockets to itself."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def within(timeout: float, ask: Callable[[], T], name: str) -> T | None:
    """`ask()`'s answer if it comes within `timeout` seconds, else None — a failure too (health then says
    "account unknown"; the tools report the details). It runs on a daemon thread (`name`), left to end alone."""
    answer: list[T] = []

    def run() -> None:
        try:
            answer.append(ask())
        except Exception:  # noqa: BLE001, S110 — an answer that did not come is the whole report
            pass

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join(timeout)
    return answer[0] if answer else None
