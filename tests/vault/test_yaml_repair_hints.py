"""A YAML error on a note says how to fix it: the line, and the repair a person makes in Obsidian."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.errors import ParseError
from h0.vault import Vault
from h0.vault import frontmatter as fm


@pytest.mark.parametrize(
    ("yaml_text", "line", "fix"),
    [
        ("subject: Re: hello\nto: a@b.example", "Line 1: `subject: Re: hello`", 'quote a value containing ": "'),
        ("to: ann@x.example\nnote: @ann said so", "Line 2: `note: @ann said so`", "quote a value that starts with @"),
        ("subject: hi\n\tto: x", "Line 2: `to: x`", "indent with spaces, not tabs"),
        ('subject: "open quote\nto: x', "Line 1", "close the quote"),
        ("to: [a@b.example", "Line 1: `to: [a@b.example`", 'close the [list] with "]"'),
        ("a: b\na: c", "Line 2: `a: c`", "keep one of the two lines"),
        ("tags:\n  - x\n bad: indent", "Line 3: `bad: indent`", 'write each line as "key: value"'),
        ("x: !!python/object:os.system ls", "Line 1", "quote a value that starts with !"),
        ("x: abc\u202eRe: there", "Line 1: `x: abc\\u202eRe: there`", 'quote a value containing ": "'),
    ],
)
def test_given_broken_frontmatter_then_the_error_names_the_line_and_the_repair(yaml_text: str, line: str, fix: str):
    with pytest.raises(ParseError) as caught:
        fm.load(yaml_text)
    assert line in caught.value.message
    assert f"To fix: {fix}" in caught.value.message


def test_given_a_note_with_a_colon_in_its_subject_then_reading_it_says_to_quote(vault: Vault, vault_dir: Path):
    (vault_dir / "Drafts" / "d.md").write_text("---\nto: ann@x.example\nsubject: Re: lunch\n---\nHi\n")
    with pytest.raises(ParseError) as caught:
        vault.read_note("Drafts/d.md")
    assert 'quote a value containing ": "' in caught.value.message
    assert "`subject: Re: lunch`" in caught.value.message
