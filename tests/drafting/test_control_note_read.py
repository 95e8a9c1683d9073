"""Reading a control note (H0_Profile.md, H0_Memory.md) that H0 cannot use: one problem that says why, the
defaults, never an exception."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from h0.drafting.ownernotes import MAX_NOTE_BYTES, load_control_note
from h0.errors import InvalidRequest, ParseError

NAME = "H0_Profile.md"


def _link(root: Path) -> None:
    (root / "elsewhere.md").write_text("---\nname: Mallory\n---\n", encoding="utf-8")
    (root / NAME).symlink_to(root / "elsewhere.md")


def _folder(root: Path) -> None:
    (root / NAME).mkdir()


def _too_large(root: Path) -> None:
    (root / NAME).write_text("x" * (MAX_NOTE_BYTES + 1), encoding="utf-8")


def _bad_yaml(root: Path) -> None:
    (root / NAME).write_text("---\nname: [unclosed\n---\nbody\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("make", "kind", "says"),
    [
        (_link, InvalidRequest, "not a plain note"),
        (_folder, InvalidRequest, "not a plain note"),
        (_too_large, InvalidRequest, "KiB"),
        (_bad_yaml, ParseError, "H0 uses its defaults until it is fixed"),
    ],
)
def test_a_control_note_h0_cannot_use_is_one_problem_and_the_defaults(tmp_path: Path, make, kind, says):
    """Given a profile that is a link, a folder, too large or not valid YAML, when it is read, then it exists
    but is not usable, nothing of it is taken, and one problem of its kind says why."""
    make(tmp_path)
    loaded = load_control_note(tmp_path, NAME)
    assert loaded.exists and not loaded.usable
    assert loaded.frontmatter == {} and loaded.body == "" and loaded.hash is None
    (problem,) = loaded.problems
    assert isinstance(problem, kind) and says in problem.message and problem.details["whole"] is True


def test_an_unreadable_control_note_is_one_problem(tmp_path: Path):
    """Given a profile H0 may not read (no permission), when it is read, then one problem says it cannot be read."""
    if os.geteuid() == 0:
        pytest.skip("root reads everything")
    (tmp_path / NAME).write_text("---\nname: Lena\n---\n", encoding="utf-8")
    (tmp_path / NAME).chmod(0)
    loaded = load_control_note(tmp_path, NAME)
    (problem,) = loaded.problems
    assert isinstance(problem, InvalidRequest) and "cannot be read" in problem.message and not loaded.usable


def test_a_missing_control_note_is_no_problem(tmp_path: Path):
    loaded = load_control_note(tmp_path, NAME)
    assert not loaded.exists and loaded.problems == []


def test_a_good_control_note_is_read(tmp_path: Path):
    (tmp_path / NAME).write_text("---\nname: Lena\n---\nHello\n", encoding="utf-8")
    loaded = load_control_note(tmp_path, NAME)
    assert loaded.usable and loaded.frontmatter == {"name": "Lena"} and loaded.body == "Hello\n" and loaded.hash
