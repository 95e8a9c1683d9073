"""Any-of frontmatter filters: one set look-up a field, the same answers as testing each filter."""

from __future__ import annotations

from h0.vault.filters import AnyOf, Filter


def test_many_values_of_one_field_match_as_each_filter_would():
    wanted = AnyOf.parse([f"thread_id:t{i:05}" for i in range(500)])
    assert wanted is not None
    assert wanted.matches({"thread_id": "t00499"})
    assert not wanted.matches({"thread_id": "t00500"})
    assert wanted.matches({"thread_id": ["x", "t00007"]})  # a list: membership
    assert not wanted.matches({"thread_id": {"t00001": 1}})  # a mapping is no scalar
    assert not wanted.matches({"other": "t00001"})


def test_fields_mixed_and_scalars_written_as_yaml_reads_them():
    wanted = AnyOf.parse(["status:pending", "private:true", "count:3", "empty:"])
    assert wanted is not None
    for data, expected in [
        ({"status": "pending"}, True),
        ({"private": True}, True),
        ({"count": 3}, True),
        ({"empty": None}, True),
        ({"status": "done", "private": False, "count": 4, "empty": "x"}, False),
    ]:
        assert wanted.matches(data) is expected
        assert any(f.matches(data) for f in wanted.filters) is expected  # as each filter alone says


def test_one_filter_alone_still_parses_and_matches():
    assert Filter.parse("  ") is None
    single = AnyOf.parse("from:dana@example.com")
    assert single is not None and single.matches({"from": "dana@example.com"})
