"""Hostile notes and hostile calls against the real vault: a typed result or a typed H0Error, never a crash.

Issue 9, class 1. The vault operations are used directly (h0.vault.store.Vault) on a real temporary
vault; `h0 status` runs as a real process over a vault holding notes that used to segfault it.
"""

from __future__ import annotations

import datetime as dt
import math
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from h0.errors import H0Error
from h0.vault import Vault, frontmatter, init_vault
from h0.vault.note import MAX_NOTE_BYTES, Note
from tests.conftest import H0_BIN, subprocess_env
from tests.properties import examples

FUZZ = settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
DEEP_NOTE = b"---\nsubject: deep\nk: " + b"[" * 100_000 + b"\n---\nThis note once crashed every H0 process.\n"


@pytest.fixture(scope="module")
def fuzz_vault(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    root = tmp_path_factory.mktemp("fuzz") / "vault"
    root.mkdir()
    init_vault(root)
    return Vault(root)


def nest(depth: int, leaf: object, as_dict: bool) -> object:
    for _ in range(depth):
        leaf = {"k": leaf} if as_dict else [leaf]
    return leaf


_ANY_TEXT = st.text(st.characters(codec="utf-8"), max_size=20)  # NUL, controls, surrogates, U+FFFE, NEL…
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([3999, 4000, 4001, 5000]).map(lambda digits: -(10**digits)),  # past str() of 4,300 digits
    st.floats(),  # NaN and ±inf included
    _ANY_TEXT,
    st.sampled_from(
        [
            "yes",
            "null",
            "~",
            "<<",
            "=",
            "1e3",
            "2026-11-21",
            "a: b",
            "# c",
            "[x",
            "*a",
            "&a",
            "!!str",
            "\x85",
            "\u2028",
            "\ufeff",
            "\ufffe",
            "\x7f",
        ]
    ),
    st.integers(0, 300_000).map(lambda n: "x" * n),  # up to past the 256 KiB frontmatter limit
    st.binary(max_size=8),
    st.dates(),
    st.datetimes(timezones=st.sampled_from([None, dt.UTC])),
    st.just(object()),
    st.just({1, 2}),
)
_KEYS = st.one_of(
    _ANY_TEXT,
    st.sampled_from(["", " ", "a\nb", "k\x00", "1e3", "0x10", "null", "True", "<<", "=", "~", "a: b", "- x", "#"]),
    st.integers(),
    st.none(),
    st.booleans(),
    st.binary(max_size=4),
    st.tuples(st.integers()),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.dictionaries(_KEYS, children, max_size=4),
    ),
    max_leaves=12,
)
_HOSTILE_VALUES = st.one_of(
    _VALUES,
    st.builds(nest, st.integers(60, 70), _SCALARS, st.booleans()),  # either side of MAX_DEPTH
    st.builds(nest, st.integers(500, 5000), st.just("x"), st.booleans()),
    st.integers(9_990, 10_010).map(lambda n: list(range(n))),  # either side of MAX_NODES
)
_FRONTMATTER = st.one_of(
    st.dictionaries(_KEYS, _HOSTILE_VALUES, max_size=5),
    st.sampled_from([None, [], "k: v", 3, b"k: v"]),
)
_BODIES = st.one_of(
    _ANY_TEXT,
    st.sampled_from(["", "\x00", "a\x00b", "---\nk: v\n---\n", "\r\n" * 10, "[" * 100_000, "x" * (MAX_NOTE_BYTES + 1)]),
    st.sampled_from([None, b"bytes", 7]),
)
_PATHS = st.sampled_from(["Drafts/fuzz.md"] * 6 + ["Needs_Action/a b.md", "../escape.md", "Drafts/\x00.md", "", 5])


def _typed(call, *args, **kwargs):
    """The call's result, or None when it raised a typed H0Error; anything else fails the test."""
    try:
        return call(*args, **kwargs)
    except H0Error as exc:
        assert exc.code and exc.message
        return None


def _hostile_yaml(kind: int, n: int) -> str:
    shapes = [
        "k: " + "[" * n,
        "k: " + "{a: " * n,
        "k:\n" + "- " * n + "x",
        "".join(" " * i + f"k{i}:\n" for i in range(min(n, 700))),
        "".join(f"k{i}: v\n" for i in range(n)),
        "k: " + "x" * (n * 20),
        "a: &a [x]\n" + "".join(f"b{i}: *a\n" for i in range(n)),
        "k: a" + " " * (n * 10) + "b",
        "k: \x01\x85\u2028\ufffe",
    ]
    return shapes[kind % len(shapes)]


# --------------------------------------------------------------------------- calls with hostile arguments


@FUZZ
@given(path=_PATHS, data=_FRONTMATTER, body=_BODIES)
def test_write_note_with_hostile_frontmatter_and_bodies_gives_a_note_or_a_typed_error(fuzz_vault, path, data, body):
    """Given hostile frontmatter (deep, huge, NaN, bytes, control characters, non-str keys) and bodies
    (NUL, huge), when written, then write_note returns a Note or raises an H0Error — and a note it
    wrote reads back as the same data."""
    written = _typed(fuzz_vault.write_note, path, data, body)
    if written is None:
        return
    assert isinstance(written, Note)
    again = fuzz_vault.read_note(path)  # what H0 writes, H0 can read
    assert again.hash == written.hash and again.frontmatter == written.frontmatter and again.body == body
    assert again.frontmatter == frontmatter.to_json(data)


@FUZZ
@given(changes=st.dictionaries(_KEYS, _HOSTILE_VALUES, max_size=5), remove=st.lists(_KEYS, max_size=3))
def test_update_frontmatter_with_hostile_changes_gives_a_note_or_a_typed_error(fuzz_vault, changes, remove):
    fuzz_vault.write_note("Drafts/update.md", {"subject": "hi", "n": 1, "tags": ["a"]}, "body\n")
    updated = _typed(fuzz_vault.update_frontmatter, "Drafts/update.md", changes, remove=tuple(remove))
    if updated is not None:
        assert fuzz_vault.read_note("Drafts/update.md").frontmatter == updated.frontmatter


# --------------------------------------------------------------------------- hostile notes on disk


@FUZZ
@given(
    kind=st.integers(0, 8),
    n=st.sampled_from([1, 10, 63, 64, 65, 5_000, 10_001, 40_000]),
    raw=st.binary(max_size=200),
    body=st.binary(max_size=50),
    changes=st.dictionaries(st.sampled_from(["status", "k", "new"]), _SCALARS, max_size=2),
)
def test_reading_and_editing_a_hostile_note_gives_a_typed_result_or_error(fuzz_vault, kind, n, raw, body, changes):
    """Given a note on disk whose frontmatter is deep, huge, aliased, full of keys, forbidden
    characters or arbitrary bytes, when H0 reads it, lists it or edits its frontmatter, then it
    gets a Note / a listing / a typed error — and an edit that succeeds leaves a readable note."""
    folder = fuzz_vault.root / "Needs_Action"
    for index, data in enumerate(
        [b"---\n" + _hostile_yaml(kind, n).encode("utf-8", "surrogatepass") + b"\n---\n" + body, raw, b"---\n" + raw]
    ):
        rel = f"Needs_Action/hostile{index}.md"
        (folder / f"hostile{index}.md").write_bytes(data)
        note = _typed(fuzz_vault.read_note, rel)
        assert note is None or isinstance(note.frontmatter, dict)
        if _typed(fuzz_vault.update_frontmatter, rel, changes) is not None:
            assert isinstance(fuzz_vault.read_note(rel).frontmatter, dict)
    listing = fuzz_vault.list_notes("Needs_Action", with_frontmatter=True)
    assert all(isinstance(item.frontmatter, dict) for item in listing.notes)


def test_a_note_nested_100000_deep_is_a_parse_error_on_read_and_can_be_replaced(fuzz_vault):
    path = fuzz_vault.root / "Drafts" / "deep.md"
    path.write_bytes(DEEP_NOTE)
    assert _typed(fuzz_vault.read_note, "Drafts/deep.md") is None
    listing = fuzz_vault.list_notes("Drafts", filter="subject:deep")
    assert {"path": "Drafts/deep.md", "error": "parse_error"}.items() <= next(
        s for s in listing.skipped if s["path"] == "Drafts/deep.md"
    ).items()
    replaced = fuzz_vault.write_note("Drafts/deep.md", {"subject": "fixed"}, "ok\n")
    assert replaced.frontmatter == {"subject": "fixed"}


def test_non_finite_and_unrepresentable_values_are_refused_before_anything_is_written(fuzz_vault):
    for bad in ({"x": math.nan}, {"x": b"b"}, {1: "x"}, {"x": "a" * 70_000}, {"x": nest(65, 1, True)}):
        assert _typed(fuzz_vault.write_note, "Drafts/refused.md", bad, "") is None
    assert not (fuzz_vault.root / "Drafts" / "refused.md").exists()


# --------------------------------------------------------------------------- a real process


def test_h0_status_over_a_vault_of_notes_that_used_to_segfault_exits_0_and_touches_none(vault_dir: Path):
    """Given the 100,000-level note in Approved/, Needs_Action/ and Drafts/, when `h0 status`
    runs, then it exits 0 (before: SIGSEGV, exit 139) and each hostile note's bytes are unchanged."""
    hostile = [vault_dir / folder / "deep.md" for folder in ("Approved", "Needs_Action", "Drafts")]
    for path in hostile:
        path.write_bytes(DEEP_NOTE)
    env = subprocess_env(VAULT_PATH=str(vault_dir), LOG_LEVEL="INFO")
    for args in (["status"], ["status", "--json"]):
        result = subprocess.run([H0_BIN, *args], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
        assert "Traceback" not in result.stderr
    assert all(path.read_bytes() == DEEP_NOTE for path in hostile)
