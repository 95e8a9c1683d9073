"""Frontmatter: reading as JSON data, and editing without churn (round-trip mode)."""

from __future__ import annotations

import itertools
import random

import pytest

from h0.errors import InvalidRequest, ParseError
from h0.vault import frontmatter as fm

EMAIL = """type: email   
status: pending
zip: 01234
answer: yes
when: 2026-11-21
# who wrote it
from: "Alice Example <alice@example.com>"
quoted: 'it''s'
tags:
  - email
  - finance
labels: [INBOX, UNREAD]
received: 2026-11-21T10:15:00Z
score: 3.5
count: 12
flag: true
nothing:
"""


def test_reading_gives_json_values_dates_as_iso_strings_and_zero_padded_numbers_as_strings():
    data = fm.load(EMAIL)
    assert data == {
        "type": "email",
        "status": "pending",
        "zip": "01234",
        "answer": "yes",
        "when": "2026-11-21",
        "from": "Alice Example <alice@example.com>",
        "quoted": "it's",
        "tags": ["email", "finance"],
        "labels": ["INBOX", "UNREAD"],
        "received": "2026-11-21T10:15:00Z",
        "score": 3.5,
        "count": 12,
        "flag": True,
        "nothing": None,
    }


SCALARS = [
    "plain", "yes", "No", "on", "true", "False", "TRUE", "null", "~", "Null", "12", "-3", "+4", "0", "00", "007",
    "01234", "1_000", "0x1F", "0o17", "3.25", "-0.5", "1e3", ".5", ".inf", "-.inf", ".nan", "2026-11-21",
    "2026-11-21T10:15:00Z", "2026-11-21 10:15:00+02:00", "2026-11-21T10:15:00", "12:30", "a b c", "C#",
    "x:y", "http://example.com/a?b=c", "Ünïcödé", "emoji 📧", "-dash", "'single'", '"double"', "it''s",
    "[a, b]", "[]", "[1, two, 2026-01-02]", "['q', 2]", "{a: 1}", "a # comment", "'", "&anchor x", "*alias",
    "!!str 12", "|", ">", "@at", "`tick`", "%pct", "?q", "-", "- x", "k: v",
]


@pytest.mark.parametrize("scalar", SCALARS)
def test_fast_scanner_and_full_loader_agree_on_every_scalar_shape(scalar):
    """Given any value shape, the fast path and ruamel's safe loader read the same data (or both refuse)."""
    text = f"key: {scalar}\nother: 1\n"
    try:
        full = fm.load_full(text)
    except ParseError:
        with pytest.raises(ParseError):
            fm.load(text)
        return
    assert fm.load(text) == full


def test_fast_scanner_and_full_loader_agree_on_random_documents():
    rng = random.Random(7)
    keys = ["status", "to", "subject", "tags", "received", "n", "my key", "a.b", "x-y"]
    for _ in range(3000):
        lines = []
        for key in rng.sample(keys, rng.randint(1, len(keys))):
            shape = rng.random()
            if shape < 0.6:
                lines.append(f"{key}: {rng.choice(SCALARS)}")
            elif shape < 0.8:
                lines.append(f"{key}:")
                for _ in range(rng.randint(0, 3)):
                    lines.append(f"{rng.choice(['', '  ', '    '])}- {rng.choice(SCALARS)}")
            else:
                lines.append(f"{key}: [{', '.join(rng.choice(SCALARS[:30]) for _ in range(rng.randint(0, 3)))}]")
            if rng.random() < 0.1:
                lines.append("# comment")
        text = "\n".join(lines) + "\n"
        try:
            full = fm.load_full(text)
        except ParseError:
            with pytest.raises(ParseError):
                fm.load(text)
            continue
        assert fm.load(text) == full, text


@pytest.mark.parametrize(
    "text",
    [
        "a: [1, 2\n",  # unclosed flow list
        "a: 1\na: 2\n",  # duplicate key
        "- x\n- y\n",  # not a mapping
        "k: v: w\n",  # invalid
        "just a string\n",
        "a: b\n  c: d\n",  # bad indentation
    ],
)
def test_invalid_frontmatter_is_a_parse_error(text):
    with pytest.raises(ParseError):
        fm.load(text)


def test_a_yaml_alias_bomb_is_refused_not_expanded():
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n"
    for name, prev in zip("bcdefgh", "abcdefg"):
        bomb += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
    with pytest.raises(ParseError, match="alias bomb"):
        fm.load(bomb)


def test_split_preserves_bom_line_endings_and_body_bytes():
    text = "\ufeff---\r\nstatus: pending\r\n---\r\nLine 1\r\nLine 2\r\n\r\n"
    parts = fm.split(text)
    assert parts.bom == "\ufeff" and parts.newline == "\r\n"
    assert parts.body == "Line 1\r\nLine 2\r\n\r\n"
    assert fm.load(parts.yaml) == {"status": "pending"}


def test_a_note_without_frontmatter_has_an_empty_mapping():
    parts = fm.split("# Title\n\nNo frontmatter here.\n")
    assert parts.yaml is None and fm.load(parts.yaml) == {}


def test_an_unclosed_block_is_a_parse_error():
    with pytest.raises(ParseError, match="never closed"):
        fm.split("---\nstatus: pending\nbody without a closing line\n")


def test_untouched_keys_keep_their_bytes_when_another_key_changes():
    """Given frontmatter with odd quoting, comments, dates and flow lists,
    when only `status` changes, then every other line is byte-for-byte the same."""
    data = fm.load(EMAIL)
    data["status"] = "done"
    out = fm.render(EMAIL, data)
    assert out == EMAIL.replace("status: pending", "status: done")


def test_writing_back_what_was_read_changes_nothing():
    assert fm.render(EMAIL, fm.load(EMAIL)) == EMAIL


def test_key_order_is_kept_and_new_keys_are_appended_in_the_callers_order():
    data = fm.load(EMAIL)
    reordered = {"sent_at": "2026-11-21T11:00:00Z", **dict(reversed(list(data.items()))), "zz": 1}
    out = fm.render(EMAIL, reordered)
    assert out.startswith(EMAIL)
    assert out[len(EMAIL) :] == "sent_at: 2026-11-21T11:00:00Z\nzz: 1\n"
    assert fm.load(out)["sent_at"] == "2026-11-21T11:00:00Z"


def test_removed_keys_disappear_with_their_lines():
    data = fm.load(EMAIL)
    del data["tags"]
    out = fm.render(EMAIL, data)
    assert "tags:" not in out and "  - finance" not in out
    assert fm.load(out) == data


def test_a_changed_date_stays_a_date_and_a_string_stays_a_string():
    text = "when: 2026-11-21\nlabel: '2026-11-21'\n"
    out = fm.render(text, {"when": "2026-12-01", "label": "2026-12-01"})
    assert "when: 2026-12-01\n" in out
    assert fm.load(out) == {"when": "2026-12-01", "label": "2026-12-01"}
    assert "label: 2026-12-01\n" not in out  # the string kept its quotes


def test_ambiguous_strings_are_quoted_so_every_yaml_reader_sees_strings():
    out = fm.render(None, {"answer": "yes", "zip": "01234", "num": "12", "t": "true", "list": ["no", "on"]})
    assert fm.load(out) == {"answer": "yes", "zip": "01234", "num": "12", "t": "true", "list": ["no", "on"]}
    assert 'answer: "yes"' in out


def test_new_iso_dates_are_written_as_yaml_dates_when_they_read_back_identically():
    out = fm.render(None, {"d": "2026-11-21", "ts": "2026-11-21T10:15:00Z", "odd": "2026-11-21T10:15:00.120Z"})
    assert "d: 2026-11-21\n" in out
    assert fm.load(out) == {"d": "2026-11-21", "ts": "2026-11-21T10:15:00Z", "odd": "2026-11-21T10:15:00.120Z"}


@pytest.mark.parametrize(
    "bad",
    [
        {"x": object()},
        {"x": {1, 2}},
        {"x": float("nan")},
        {"": "empty key"},
        {"a\nb": "newline in key"},
        {"x": "nul\x00byte"},
        {"x": b"bytes"},
        {"x": [1, object()]},
    ],
)
def test_values_that_are_not_yaml_representable_are_refused(bad):
    with pytest.raises(InvalidRequest):
        fm.render(None, bad)


def test_round_trip_of_many_generated_mappings_is_identity():
    rng = random.Random(3)
    values = ["plain", "yes", "01234", "12", "2026-11-21", "a: b", "# not a comment", "multi\nline", "tab\tx",
              "  padded  ", "", "'quoted'", "\"dq\"", "Ünïcödé", 7, -1, 2.5, True, False, None, [], ["a", 1, None],
              {"nested": {"deep": [1, "x"]}}]
    for _ in range(200):
        data = {f"k{i}": rng.choice(values) for i in range(rng.randint(1, 8))}
        out = fm.render(None, data)
        assert fm.load(out) == data, out
        assert fm.load_full(out) == data, out


def test_combinations_of_edit_and_keep_preserve_other_keys():
    data = fm.load(EMAIL)
    for a, b in itertools.combinations(list(data), 2):
        edited = dict(data)
        edited[a] = "changed"
        out = fm.render(EMAIL, edited)
        kept_line = next(line for line in EMAIL.splitlines() if line.startswith(f"{b}:"))
        assert kept_line + "\n" in out
        assert fm.load(out)[a] == "changed"


def test_the_fast_emitter_and_ruamel_write_values_that_read_back_the_same():
    import datetime as dt

    values = ["plain", "Alice <a@example.com>", "a, b", "What's up?", "50% off!", "x-y_z", "1.5", "0x1F", "null",
              "2026-11-21", "yes", "Ünï", "a: b", "a #b", "-lead", "trail ", 0, -12, True, False, None,
              dt.date(2026, 11, 21), dt.datetime(2026, 11, 21, 10, 15, tzinfo=dt.UTC), ["a", "b c"], [1, True], [],
              ["needs: quoting"]]
    for value in values:
        fast = fm._fast_render("key", value)
        if fast is None:
            continue
        stream = fm.io.StringIO()
        fm._local.dumper.dump({"key": fm._quote_ambiguous(value)}, stream)
        assert fm.load(fast) == fm.load(stream.getvalue()), (value, fast)
