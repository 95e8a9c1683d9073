"""SQLite's `IN (…)` lists asked in chunks (h0.state.binds): every value is asked, none twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.state import StateDB
from h0.state.binds import BIND_LIMIT, chunks, marks


def test_chunks_cut_values_in_order_the_last_one_shorter() -> None:
    values = list(range(2 * BIND_LIMIT + 1))
    got = list(chunks(values))
    assert [len(c) for c in got] == [BIND_LIMIT, BIND_LIMIT, 1]
    assert [v for c in got for v in c] == values
    assert list(chunks("abcde", 2)) == ["ab", "cd", "e"]
    assert list(chunks([])) == []


def test_a_chunk_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        list(chunks([1, 2], 0))


def test_marks_are_one_question_mark_a_value() -> None:
    assert marks(3) == "?,?,?"
    assert marks(1) == "?"


def test_given_more_ingested_ids_than_one_query_binds_when_asked_then_every_one_is_found(tmp_path: Path) -> None:
    db = StateDB(tmp_path)
    ids = [f"m{i}" for i in range(BIND_LIMIT * 2 + 7)]
    db.record_ingested("gmail", [(i, f"<{i}@x>") for i in ids[::2]])
    asked = [*ids, *ids[:10]]  # a repeated id is asked once
    assert db.ingested_among("gmail", asked) == set(ids[::2])
    assert db.ingested_among("gmail", [], [f"<{i}@x>" for i in ids]) == {f"<{i}@x>" for i in ids[::2]}
