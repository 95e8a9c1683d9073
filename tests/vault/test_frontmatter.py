"""Frontmatter: reading as JSON data (ruamel, the one parser), and editing without churn."""

from __future__ import annotations

import io
import itertools
import random
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from h0.errors import InvalidRequest, ParseError
from h0.vault import frontmatter as fm
from h0.vault.frontmatter import limits, yamls
from h0.vault.frontmatter import write as fm_write
from tests.properties import examples

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
    "plain",
    "yes",
    "No",
    "on",
    "true",
    "False",
    "TRUE",
    "null",
    "~",
    "Null",
    "12",
    "-3",
    "+4",
    "0",
    "00",
    "007",
    "01234",
    "1_000",
    "0x1F",
    "0o17",
    "3.25",
    "-0.5",
    "1e3",
    ".5",
    ".inf",
    "-.inf",
    ".nan",
    "2026-11-21",
    "2026-11-21T10:15:00Z",
    "2026-11-21 10:15:00+02:00",
    "2026-11-21T10:15:00",
    "12:30",
    "a b c",
    "C#",
    "x:y",
    "http://example.com/a?b=c",
    "Ünïcödé",
    "emoji 📧",
    "-dash",
    "'single'",
    '"double"',
    '"a \\\\<b\\\\> c"',  # H0's escapes: a backslash and a quote
    '"say \\"hi\\""',
    '"\\\\"',
    '"a\\nb"',  # any other escape is the full loader's
    '"tab\\there"',
    '"open\\"',
    "it''s",
    "[a, b]",
    "[]",
    "[1, two, 2026-01-02]",
    "['q', 2]",
    "{a: 1}",
    "a # comment",
    "'",
    "&anchor x",
    "*alias",
    "!!str 12",
    "|",
    ">",
    "@at",
    "`tick`",
    "%pct",
    "?q",
    "-",
    "- x",
    "k: v",
]


# ruamel's own safe loader with its own resolver, nothing kept between values: what `load` must equal.
REFERENCE = YAML(typ="safe")
REFERENCE.Constructor = yamls.LOCAL.safe.Constructor


def reference(text: str) -> tuple[str, object]:
    """("ok", data) as ruamel's resolver, asked afresh for every value, reads `text`; ("refused", None) when
    the bounds or the loader refuse it."""
    try:
        limits.check_bounds(text)
        data = REFERENCE.load(text)
    except Exception:  # noqa: BLE001 - any refusal
        return ("refused", None)
    if data is None:
        return ("ok", {})
    if not isinstance(data, dict):
        return ("refused", None)
    try:
        return ("ok", fm.to_json(data))
    except ParseError:
        return ("refused", None)


def _outcome(read, text):
    try:
        return ("ok", read(text))
    except ParseError:
        return ("refused", None)


@pytest.mark.parametrize("scalar", SCALARS)
def test_every_scalar_shape_reads_as_ruamels_own_resolver_reads_it(scalar):
    """Given any value shape, read twice (the second time from the kept answers of the resolver), then the
    data is what ruamel's loader with a fresh resolver reads, or both refuse."""
    text = f"key: {scalar}\nother: 1\n"
    assert _outcome(fm.load, text) == _outcome(fm.load, text) == reference(text)


def test_random_documents_read_as_ruamels_own_resolver_reads_them():
    rng = random.Random(7)
    keys = ["status", "to", "subject", "tags", "received", "n", "my key", "a.b", "x-y"]
    for _ in range(examples(3000)):  # the same 750 documents by default, 3,000 under the thorough profile
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
        assert _outcome(fm.load, text) == reference(text), text


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
    values = [
        "plain",
        "yes",
        "01234",
        "12",
        "2026-11-21",
        "a: b",
        "# not a comment",
        "multi\nline",
        "tab\tx",
        "  padded  ",
        "",
        "'quoted'",
        '"dq"',
        "Ünïcödé",
        7,
        -1,
        2.5,
        True,
        False,
        None,
        [],
        ["a", 1, None],
        {"nested": {"deep": [1, "x"]}},
    ]
    for _ in range(200):
        data = {f"k{i}": rng.choice(values) for i in range(rng.randint(1, 8))}
        out = fm.render(None, data)
        assert fm.load(out) == data, out


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

    values = [
        "plain",
        "Alice <a@example.com>",
        "a, b",
        "What's up?",
        "50% off!",
        "x-y_z",
        "1.5",
        "0x1F",
        "null",
        "2026-11-21",
        "yes",
        "Ünï",
        "a: b",
        "a #b",
        "-lead",
        "trail ",
        0,
        -12,
        True,
        False,
        None,
        dt.date(2026, 11, 21),
        dt.datetime(2026, 11, 21, 10, 15, tzinfo=dt.UTC),
        ["a", "b c"],
        [1, True],
        [],
        ["needs: quoting"],
    ]
    for value in values:
        fast = fm_write.fast_render("key", value)
        if fast is None:
            continue
        stream = io.StringIO()
        yamls.LOCAL.dumper.dump({"key": fm_write.quote_ambiguous(value)}, stream)
        assert fm.load(fast) == fm.load(stream.getvalue()), (value, fast)


# --------------------------------------------------------------------------- hostile shapes, read and kept

TRICKY_KEYS = [
    "status",
    "to",
    "my key",
    "a.b",
    "x-y",
    "a/b",
    "_",
    "k",
    "1e3",
    "0x10",
    "1_000",
    "0o17",
    ".5",
    "+1",
    "-1",
    "1:30",
    "12:30:00",
    "=",
    "<<",
    "~",
    "null",
    "Null",
    "NULL",
    "true",
    "True",
    "FALSE",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "2026-11-21",
    "2026-11-21T10:15:00Z",
    "01234",
    "007",
    "0",
    "1.0",
    "1.5e2",
    ".inf",
    ".nan",
    "a:b",
    "a b ",
    "key with  spaces",
    "Ünï",
    "a#b",
    "a #b",
    "?q",
    "-dash",
    "k" * 1100,
]
TRICKY_SCALARS = SCALARS + [
    "=",
    "<<",
    "1:30",
    "1:30:00",
    "0b101",
    "+.inf",
    "-.INF",
    ".NaN",
    "1__0",
    "0x_1",
    "+0x10",
    "-0o7",
    "0.",
    "1.",
    "-.5",
    "+.5",
    "1e+3",
    "1E3",
    "1.e3",
    "2026-1-2",
    "2026-11-21t10:15:00z",
    "2026-11-21 10:15:00 +2",
    "yes # no",
    "a#b",
    "a :b",
    "a:\tb",
    "a\t#b",
    "'a' # c",
    '"a" # c',
    "'it''s' x",
    '"esc \\" q"',
    '"back\\\\slash"',
    "@x",
    "a,b",
    "a]",
    "a}",
    "[a]x",
    "a [b]",
    "{}",
    "[a, [b]]",
    "[a, {b: c}]",
    "[a,]",
    "[,]",
    "[ ]",
    "[a b, c]",
    "[a#b]",
    "[a #b]",
    "['a']",
    '["a"]',
    "[a: b]",
    "[~, null, true]",
    "-",
    "--",
    "- -",
    "? x",
    "!x",
    "&a x",
    "*a",
    "%x",
    "\u00a0",
    "a\u00a0",
    "\u3000x",
    "x\u2003",
]
_TEXT_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))
_QUOTED_CHARS = st.sampled_from(list('ab \\"<>nxu0#:') + ["\t", "é"])
_PLAIN_CHARS = st.sampled_from(list("abcXYZ019 _.-/:#'\",[]{}?!&*|>%@`~=<+\t") + ["\u00a0", "é", "📧"])


@st.composite
def obsidian_shaped_documents(draw) -> str:
    """Frontmatter text built from the shapes Obsidian writes (`key: scalar`, flow and block lists), and
    their near misses."""
    key = st.one_of(st.sampled_from(TRICKY_KEYS), st.text(_PLAIN_CHARS, min_size=1, max_size=8))
    scalar = st.one_of(
        st.sampled_from(TRICKY_SCALARS),
        st.text(_PLAIN_CHARS, min_size=1, max_size=10),
        st.text(_PLAIN_CHARS, max_size=8).map(lambda s: "'" + s.replace("'", "''") + "'"),
        st.text(_PLAIN_CHARS, max_size=8).map(lambda s: '"' + s + '"'),
        st.text(_QUOTED_CHARS, max_size=8).map(lambda s: '"' + s + '"'),  # escapes and near misses
        st.text(_QUOTED_CHARS, max_size=8).map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    )
    sep = st.sampled_from([" ", " ", "  ", "\t", " \t"])
    end = st.sampled_from(["", "", " ", "\t", " # note", "  #x", "#x"])
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        shape = draw(st.integers(0, 9))
        k = draw(key)
        if shape <= 4:
            lines.append(f"{k}:{draw(sep)}{draw(scalar)}{draw(end)}")
        elif shape <= 6:
            lines.append(f"{k}:{draw(end)}")
            indent = draw(st.sampled_from(["", "  ", "    ", "\t", " "]))
            for _ in range(draw(st.integers(0, 3))):
                lines.append(f"{indent}-{draw(sep)}{draw(scalar)}{draw(end)}")
        elif shape == 7:
            items = draw(
                st.lists(st.one_of(st.sampled_from(SCALARS[:30]), st.text(_PLAIN_CHARS, max_size=5)), max_size=4)
            )
            lines.append(f"{k}:{draw(sep)}[{', '.join(items)}]{draw(end)}")
        elif shape == 8:
            lines.append(
                draw(st.sampled_from(["", "   ", "\t", " \t ", "# comment", "  # indented", "\t# tab", "---", "..."]))
            )
        else:
            lines.append(draw(st.text(_PLAIN_CHARS, max_size=12)))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r", "\u2028", "\x85"]))
    return newline.join(lines) + draw(st.sampled_from([newline, ""]))


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obsidian_shaped_documents(), st.data())
@example("1e3: v\n", None)  # YAML 1.2 reads this key as the float 1000.0
@example("True: v\n", None)  # ...and this one as the bool true
@example("k: =\n", None)  # `=` and `<<` are strings in YAML 1.2; ruamel's loader used to refuse them
@example("k: <<\n", None)
@example("k: a\u2028b: c\n", None)  # a line break for YAML, not for str.splitlines' every count
@example("k: a\x01b\n", None)  # a control character YAML forbids
@example("k: v\n\t\n", None)  # a blank line with a tab, which libyaml refuses
@example("k: [a\u00a0]\n", None)  # str.strip() strips NBSP; YAML does not
@example("k" * 1100 + ": v\n", None)  # libyaml forgets a simple key 1024 characters before its ':'
@example("a: 1\r b: 2\n", None)  # a lone CR: a line break for YAML
def test_hostile_frontmatter_reads_as_ruamel_reads_it_and_an_edit_keeps_every_other_key(text, data):
    """Given frontmatter in the shapes Obsidian writes and their near misses, then `load` reads what ruamel's
    loader with a fresh resolver reads (or both refuse); and when one key is changed, the note reads back
    with that change and every other key as it was."""
    outcome = _outcome(fm.load, text)
    assert outcome == reference(text), text
    if outcome[0] != "ok" or not outcome[1]:
        return
    old = outcome[1]
    key = data.draw(st.sampled_from(sorted(old))) if data is not None else min(old)
    edited = {**old, key: "changed"}
    try:
        out = fm.render(text, edited)
    except InvalidRequest:
        return  # a key H0 will not write (past a limit): refused, nothing half-written
    assert fm.load(out) == edited, (text, out)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(_TEXT_CHARS, max_size=200))
def test_arbitrary_text_reads_as_ruamels_own_resolver_reads_it(text):
    assert _outcome(fm.load, text) == reference(text), text


def test_duplicate_keys_are_refused_even_when_written_two_ways():
    """Decision: a duplicate key is a parse_error (never last-wins), however it is written."""
    for text in ["a: 1\na: 2\n", "a:\n  - x\na: [y]\n", "1: a\n'1': b\n", "null: a\n~: b\n", "0x10: a\n16: b\n"]:
        with pytest.raises(ParseError):
            fm.load(text)


def test_a_merge_key_is_an_ordinary_key_so_merges_cannot_expand_exponentially():
    text = "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n"
    assert fm.load(text) == {"base": {"x": 1}, "m": {"<<": {"x": 1}, "y": 2}}


def test_a_body_that_starts_like_frontmatter_stays_the_body():
    """Given no frontmatter and a body starting with '---', when composed, then an empty block is
    written in front, so reading the note back gives that body, not frontmatter made from it."""
    for body in ["---\nk: v\n---\nrest\n", "\ufeff---\nk: v\n---\n", "---\n"]:
        text = fm.compose(None, None, body)
        parts = fm.split(text)
        assert parts.body == body and fm.load(parts.yaml) == {}
    assert fm.compose(None, None, "plain\n") == "plain\n"


_FLAT_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(_PLAIN_CHARS, max_size=12),
    st.text(_QUOTED_CHARS, max_size=12),
    st.lists(st.text(_PLAIN_CHARS, max_size=6), max_size=3),
)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(_PLAIN_CHARS, min_size=1, max_size=8), _FLAT_VALUES, max_size=6))
def test_what_render_writes_passes_the_full_bounds_check_and_reads_back_the_same(data):
    """render checks its output with the bounds' event walk: whatever it writes, the bounds check accepts
    and the loader reads back as written."""
    try:
        text = fm_write.render(None, data)
    except InvalidRequest:
        return
    limits.check_bounds(text)
    assert fm.load(text) == data


def test_a_long_running_process_does_not_grow_with_each_parse() -> None:
    """ruamel's YAML object keeps one record per document it loaded (0.19: `doc_infos`), forever; the
    daemon and the vault server parse frontmatter all day with one object per thread. 3,000 parses of
    text only ruamel reads (a flow mapping) must leave memory where 300 parses left it."""
    import gc
    import tracemalloc

    text = "tags: {a: 1, b: [x, y]}\nstatus: pending\n"
    assert fm.load(text) == {"tags": {"a": 1, "b": ["x", "y"]}, "status": "pending"}
    tracemalloc.start()
    try:
        for _ in range(300):
            fm.load(text)
        gc.collect()  # ruamel's C loader makes a class a load: garbage in cycles, not kept
        settled, _ = tracemalloc.get_traced_memory()
        for _ in range(3_000):
            fm.load(text)
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - settled < 32_000, f"{after - settled} bytes kept by 3,000 parses"


# A note's frontmatter block as the split has always found it: the closing line is the first line (from a line
# start, MULTILINE) that is `---` or `...`, and CRLF is the note's line ending when one is in its first 4 KiB.
_CLOSING_LINE = re.compile(r"^(---|\.\.\.)[ \t]*(?:\r?\n|$)", re.MULTILINE)


def _split_as_specified(text: str) -> tuple[str, str | None, str, str, str] | str:
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    rest = text[len(bom) :]
    newline = "\r\n" if "\r\n" in rest[:4096] else "\n"
    opened = fm.text.OPEN.match(rest)
    if not opened:
        return newline, None, rest, "---", "---"
    if not opened.group(1):
        return "never closed"
    closed = _CLOSING_LINE.search(rest, opened.end())
    if not closed:
        return "never closed"
    return (
        newline,
        rest[opened.end() : closed.start()],
        rest[closed.end() :],
        rest[: opened.end()].rstrip("\r\n"),
        closed.group(0).rstrip("\r\n"),
    )


def _split_now(text: str) -> tuple[str, str | None, str, str, str] | str:
    try:
        parts = fm.split(text)
    except ParseError:
        return "never closed"
    return parts.newline, parts.yaml, parts.body, parts.open_line, parts.close_line


@settings(max_examples=examples(500), deadline=None)
@given(
    st.lists(
        st.sampled_from(["---", "...", "--- ", "---\t", "-- -", "a: 1", "", " ", "\r", "x---", "...."]), max_size=8
    )
)
@example(["---", "---"])
@example(["---", "a: 1", "... ", "body"])
def test_the_split_finds_the_closing_line_and_line_ending_as_specified(lines):
    for newline in ("\n", "\r\n", "\r"):
        text = newline.join(lines)
        assert _split_now(text) == _split_as_specified(text), repr(text)
        assert _split_now(text + newline) == _split_as_specified(text + newline), repr(text)


@pytest.mark.parametrize("at", [4093, 4094, 4095, 4096])
def test_crlf_is_the_line_ending_when_one_starts_within_the_first_4_kib(at):
    text = "---\na: 1\n---\n" + "x" * (at - 13) + "\r\n" + "tail\n"
    assert text.index("\r\n") == at
    assert fm.split(text).newline == ("\r\n" if at <= 4094 else "\n") == _split_as_specified(text)[0]
    lone = "---\na: 1\n---\n" + "\r" * 5000 + "\n"  # CRs before the first CRLF is looked at past 4 KiB
    assert fm.split(lone).newline == "\n" == _split_as_specified(lone)[0]
