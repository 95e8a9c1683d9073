"""No note can crash a process: frontmatter past H0's limits is refused, cheaply, before any parser recurses.

Issue 9, class 1. Before: 30,000+ nesting levels segfaulted ruamel's C composer (exit 139) and every
`h0 watch` / `h0 status` / vault server start died on that one note; a run of spaces made the line
scanner's regex quadratic (60 K spaces: 18 s); 2.5 KB of nested YAML merge keys took 74 s.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from h0.errors import H0Error, InvalidRequest, ParseError
from h0.vault import frontmatter as fm
from h0.vault.note import MAX_NOTE_BYTES, parse
from tests.conftest import ROOT
from tests.properties import examples


def nested(levels: int, leaf: str = "x") -> str:
    return "[" * levels + leaf + "]" * levels


def refused(text: str) -> ParseError:
    """`load` refuses `text`; its error is returned."""
    with pytest.raises(ParseError) as caught:
        fm.load(text)
    return caught.value


def read_or_refused(call, *args) -> bool:
    """Whether `call` read the text (True) or refused it with a typed error (False). How fast is
    scripts/bench/bench_hostile.py's to measure; these tests carry a pytest timeout far below the
    seconds-to-minutes a quadratic or exponential blow-up took, so a regression fails them."""
    try:
        call(*args)
    except H0Error:
        return False
    return True


# --------------------------------------------------------------------------- each limit, and its message


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("k: " + "a" * fm.MAX_YAML_CHARS, "H0 reads at most 262,144 (256 KiB). Move long text below the closing '---'"),
        ("k: " + nested(40_000), "nests lists or mappings more than 64 levels deep; H0 reads at most 64. Flatten"),
        ("k: " + "{a: " * 100 + "x" + "}" * 100, "more than 64 levels deep"),
        ("k:\n" + "- " * 100 + "x\n", "more than 64 levels deep"),  # block nesting, compact form
        ("".join(" " * i + f"k{i}:\n" for i in range(100)) + " " * 100 + "v\n", "more than 64 levels deep"),
        ("".join(f"k{i}: v\n" for i in range(5_001)), "more than 10,000 keys, values and list items"),
        ("k: [" + "a," * 10_000 + "]\n", "more than 10,000 keys, values and list items"),
        ("k: " + "a" * (fm.MAX_SCALAR_CHARS + 1), "value 65,537 characters long; H0 reads values up to 65,536"),
        ("k: '" + "a" * (fm.MAX_SCALAR_CHARS + 1) + "'", "H0 reads values up to 65,536"),
        ("a: &a x\nb: [" + ", ".join(["*a"] * 101) + "]\n", "more than 100 YAML aliases (*name)"),
        ("".join(f"k{i}: &a{i} x\n" for i in range(101)), "more than 100 YAML anchors (&name)"),
        ("k: a\x01b\n", "The frontmatter contains the character U+0001 on line 1 of it, which YAML does not allow"),
        ("a: 1\nk: a\ud800b\n", "U+D800 on line 2"),
    ],
)
def test_frontmatter_past_a_limit_is_a_parse_error_naming_the_limit_and_the_fix(text, says):
    """Given frontmatter past one of H0's limits, when it is read, then it raises
    ParseError (code parse_error) whose message says which limit and how to fix the note."""
    error = refused(text)
    assert error.code == "parse_error"
    assert says in error.message


def test_the_limits_are_inclusive():
    at_depth = "k: " + nested(fm.MAX_DEPTH) + "\n"  # 64 levels: k's list and 63 inside it
    # the top-level mapping, 4,998 keys with their values, then a key, its list and one item: 10,000 nodes
    nodes_at_limit = "".join(f"k{i}: v\n" for i in range((fm.MAX_NODES - 4) // 2)) + "last:\n- x\n"
    at_limit = [
        at_depth,
        "k: " + "a" * fm.MAX_SCALAR_CHARS + "\n",
        nodes_at_limit,
        "a: &a x\nb: [" + ", ".join(["*a"] * fm.MAX_ALIASES) + "]\n",
    ]
    for text in at_limit:
        assert isinstance(fm.load(text), dict)
    refused("k: " + nested(fm.MAX_DEPTH + 1) + "\n")
    refused(nodes_at_limit + "- y\n")
    refused("k: " + "a" * (fm.MAX_SCALAR_CHARS + 1) + "\n")


def test_what_h0_writes_it_can_read_and_what_it_cannot_read_it_refuses_to_write():
    """check_representable and render apply the reading limits: H0 never writes a note it would refuse."""
    deep: object = "leaf"
    for _ in range(fm.MAX_DEPTH):
        deep = [deep]
    out = fm.render(None, {"k": deep})
    assert fm.load(out) == {"k": deep}
    with pytest.raises(InvalidRequest, match="more than 64 levels deep"):
        fm.render(None, {"k": [deep]})
    with pytest.raises(InvalidRequest, match="65,536"):
        fm.render(None, {"k": "a" * (fm.MAX_SCALAR_CHARS + 1)})
    with pytest.raises(InvalidRequest, match="10,000"):
        fm.render(None, {f"k{i}": i for i in range(fm.MAX_NODES)})
    with pytest.raises(InvalidRequest, match="262,144"):
        fm.render(None, {f"k{i}": "a" * 60_000 for i in range(5)})
    with pytest.raises(InvalidRequest, match="digits"):
        fm.render(None, {"k": 10**5000})
    shared = ["x"]
    out = fm.render(None, {"k": [[shared] for _ in range(150)]})  # one list, 150 times: written out, no aliases
    assert "*" not in out and fm.load(out) == {"k": [[["x"]]] * 150}


def test_check_bounds_is_public_for_any_yaml_h0_reads_with_its_own_subject():
    """The triage rules note's ```yaml block is parsed by ruamel too: check_bounds guards it the same way."""
    with pytest.raises(ParseError, match=r"^The rules block \(line 2 of it\) nests lists or mappings more than 64"):
        fm.check_bounds("rules:\n  - " + nested(100), "The rules block")
    fm.check_bounds("rules:\n  - name: x\n", "The rules block")


def test_a_key_written_twice_in_two_spellings_is_a_duplicate_not_last_wins():
    error = refused("1: a\n'1': b\n")
    assert "twice" in error.message


# --------------------------------------------------------------------------- refusals are cheap


@pytest.mark.timeout(10)
def test_a_10_mb_note_of_brackets_is_refused_in_milliseconds():
    """Given a 10 MB note whose frontmatter is `[[[[…`, when it is parsed, then ParseError comes
    within milliseconds (measured: ~2 ms; the closing line is looked for only within 256 KiB), not seconds."""
    closed = b"---\nk: " + b"[" * (MAX_NOTE_BYTES - 20) + b"\n---\nbody\n"
    unclosed = b"---\nk: " + b"[" * (MAX_NOTE_BYTES - 20)
    for data in (closed, unclosed):
        with pytest.raises(ParseError):
            parse(data, "hostile.md")


@pytest.mark.parametrize(
    "yaml",
    [
        "k: " + "[" * (fm.MAX_YAML_CHARS - 10),  # just under the size limit: the depth walk stops at level 65
        "k:\n" + "- " * (fm.MAX_YAML_CHARS // 2 - 10),
        "".join(f"k{i}:\n" for i in range(28_000)),  # 227 K characters: the node count stops at 10,001
        "k: [" + "a," * 100_000 + "]",
        "a: &a [x]\n" + "".join(f"b{i}: *a\n" for i in range(20_000)),
        "k: " + "a" * (fm.MAX_YAML_CHARS - 10),
        "k: a" + " " * 60_000 + "b",  # the old line regex was quadratic in a run of blanks: 18 s here
        "k:\n- a" + " " * 60_000 + "b",
        "a" + " " * 60_000 + "b: c",
    ],
)
@pytest.mark.timeout(10)
def test_frontmatter_just_under_the_size_limit_is_read_or_refused_fast(yaml):
    # The note reader and the YAML reader agree: both read it, or both refuse it.
    assert read_or_refused(fm.load, yaml) == read_or_refused(parse, f"---\n{yaml}\n---\nbody\n".encode(), "n.md")


@pytest.mark.timeout(10)
def test_nested_merge_keys_no_longer_expand_exponentially():
    """`<<` is an ordinary key (YAML 1.2 has no merge key): 2.5 KB of merges of merges took 74 s."""
    text = "a0: &a0 {" + ", ".join(f"k{i}: {i}" for i in range(200)) + "}\n"
    text += "".join(f"a{n}: &a{n} {{<<: [*a{n - 1}, *a{n - 1}], x{n}: 1}}\n" for n in range(1, 40))
    with pytest.raises(ParseError, match="too many values"):  # refused by the expansion budget, at once
        fm.load(text)


def test_split_looks_for_the_closing_line_only_within_the_size_limit():
    body = "x\n" * 1000
    at_limit = "---\n" + "k: " + "a" * (fm.MAX_YAML_CHARS - 4) + "\n---\n" + body
    assert fm.split(at_limit).body == body
    for beyond in ("---\n" + "k: v\n" * 100_000 + "---\nbody\n", "---\n" + "k: v\n" * 100_000):
        with pytest.raises(ParseError, match="not closed within 262,144 characters"):
            fm.split(beyond)
    with pytest.raises(ParseError, match="never closed"):
        fm.split("---\n" + "k: v\n" * 100)
    cut = "---\nk: " + "a" * (fm.MAX_YAML_CHARS - 4) + "\n---" + " " * 20 + "x\n---\nbody"  # not a closing line
    with pytest.raises(ParseError):
        fm.load(fm.split(cut).yaml)


# --------------------------------------------------------------------------- fuzz: a dict or a ParseError


_ANY_CHAR = st.characters(codec="utf-8")  # controls, surrogates, NUL, unassigned: everything
_YAML_CHARS = st.sampled_from(list("[]{}:,-?#&*!|>'\"%@`\\ \t\n\r\x85\u2028\x00\x01\ufeffak0.~="))


@st.composite
def hostile_yaml(draw) -> str:
    parts = draw(
        st.lists(
            st.one_of(
                st.text(_ANY_CHAR, max_size=30),
                st.text(_YAML_CHARS, max_size=40),
                st.builds(lambda n, c: c * n, st.integers(1, 3000), st.sampled_from(["[", "{", "- ", " ", "a", "*a "])),
                st.builds(lambda n: "k: " + nested(n), st.integers(1, 500)),
                st.builds(lambda n: "".join(" " * i + "k:\n" for i in range(n)), st.integers(1, 120)),
                st.sampled_from(
                    [
                        "a: &a [x]\n",
                        "b: *a\n",
                        "<<: *a\n",
                        "? [a]\n: b\n",
                        "!!binary aGk=\n",
                        "k: !!int 1\n",
                        "k: !!python/object:os.system x\n",
                        "%YAML 1.1\n",
                        "--- x\n",
                        "k: 1" + "0" * 5000,
                    ]
                ),
            ),
            max_size=6,
        )
    )
    return "".join(parts)


@settings(
    max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(hostile_yaml())
def test_load_returns_a_dict_or_raises_parse_error_on_any_text(text):
    try:
        data = fm.load(text)
    except ParseError:
        return
    assert isinstance(data, dict)


@settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(st.binary(max_size=300), hostile_yaml())
def test_parse_returns_a_note_or_raises_a_typed_error_on_any_bytes(raw, yaml):
    for data in (
        raw,
        b"---\n" + raw + b"\n---\n",
        f"\ufeff---\r\n{yaml}\r\n---\r\nbody".encode("utf-8", "surrogatepass"),
    ):
        try:
            note = parse(data, "fuzz.md")
        except H0Error as exc:
            assert exc.code in ("parse_error", "invalid_request")
            continue
        assert isinstance(note.frontmatter, dict) and isinstance(note.body, str)


# --------------------------------------------------------------------------- the segfault class is gone


def test_a_100000_level_note_in_a_separate_process_exits_0_with_a_parse_error_not_sigsegv(tmp_path):
    """Given a note whose frontmatter opens 100,000 `[`, when a fresh Python process parses it through
    h0.vault.note.parse, then the process exits 0 having printed the ParseError (before: SIGSEGV, 139)."""
    note = tmp_path / "deep.md"
    note.write_bytes(b"---\nk: " + b"[" * 100_000 + b"\n---\nbody\n")
    script = textwrap.dedent(
        """
        import sys
        from h0.errors import ParseError
        from h0.vault.note import parse
        data = open(sys.argv[1], "rb").read()
        try:
            parse(data, "deep.md")
        except ParseError as exc:
            print("ParseError:", exc.code, exc.message)
        else:
            print("parsed?!")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(note)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.startswith("ParseError: parse_error The frontmatter (line 1 of it) nests lists or mappings")
