"""SQLite's `IN (…)` lists: at most BIND_LIMIT values bound per query, and the `?` marks for them.

SQLite binds up to 32,766 values to one statement (999 before 3.32); a long list is asked in chunks.
Every SQLite database of H0 (the state database, the vault index) asks through these two functions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

BIND_LIMIT = 500  # values per IN (…) clause

T = TypeVar("T")


def chunks(values: Sequence[T], size: int = BIND_LIMIT) -> Iterator[Sequence[T]]:
    """`values` in order, `size` at a time (the last chunk shorter); nothing for no values."""
    if size < 1:
        raise ValueError(f"a chunk holds at least one value, not {size}")
    for start in range(0, len(values), size):
        yield values[start : start + size]


def marks(count: int) -> str:
    """The `?` marks of an `IN (…)` list of `count` values: `?,?,?`."""
    return ",".join("?" * count)
