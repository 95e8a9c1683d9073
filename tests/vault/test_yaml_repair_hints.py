"""A YAML error on a note says how to fix it: the line, what is wrong there, and the repair a person makes in
Obsidian — and never a word of the note (issue 40: a note whose frontmatter does not parse is private until
it does, and its error reaches places an agent reads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.errors import ParseError
from h0.vault import Vault
from h0.vault import frontmatter as fm


@pytest.mark.parametrize(
    ("yaml_text", "line", "fix"),
    [
        ("subject: Re: zqhello\nto: a@b.example", "on line 1 (column 12)", 'quote a value containing ": "'),
        ("to: ann@x.example\nnote: @zqann said so", "on line 2", "quote a value that starts with @"),
        ("subject: zqhi\n\tto: x", "on line 2", "indent with spaces, not tabs"),
        ('subject: "zq open quote\nto: x', "on line 1", "close the quote"),
        ("to: [zq@b.example", "on line 1", 'close the [list] with "]"'),
        ("zqa: b\nzqa: c", "on line 2", "keep one of the two lines"),
        ("tags:\n  - zqx\n zqbad: indent", "on line 3", 'write each line as "key: value"'),
        ("x: !!python/object:os.system zqls", "on line 1", "quote a value that starts with !"),
        ("x: zqabc\u202eRe: there", "on line 1", 'quote a value containing ": "'),
    ],
)
def test_given_broken_frontmatter_then_the_error_names_the_line_and_the_repair_and_quotes_nothing(
    yaml_text: str, line: str, fix: str
):
    with pytest.raises(ParseError) as caught:
        fm.load(yaml_text)
    message = caught.value.message
    assert line in message and f"To fix: {fix}" in message, message
    assert "zq" not in message.lower() and "zq" not in str(caught.value.details), message


def test_given_a_note_with_a_colon_in_its_title_then_reading_it_names_the_line_not_the_words(
    vault: Vault, vault_dir: Path
):
    (vault_dir / "Drafts" / "d.md").write_text("---\nto: ann@x.example\ntitle: Therapy: session 3\n---\nHi\n")
    with pytest.raises(ParseError) as caught:
        vault.read_note("Drafts/d.md")
    message = caught.value.message
    assert 'quote a value containing ": "' in message and "line 2" in message
    assert "Therapy" not in message and "session" not in message
    assert caught.value.details["line"] == 2
