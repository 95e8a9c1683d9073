"""Issue 40: a note is private by a tag exactly as Obsidian's tag pane lists it — in its properties or in its
text, nested tags too — and not by text Obsidian does not read as a tag (code, `#privateer`, `a#private`)."""

from __future__ import annotations

import pytest

from h0.vault.model import marked_private, note_facts
from h0.vault.tags import property_tags, text_tags

PRIVATE_TEXTS = [
    "#private",
    "Session notes #private",
    "#Private",
    "#PRIVATE, and more",
    "first line\n#private",
    "ends a sentence #private.",
    "(see) #private)",
    "#private/health",
    "#health/private",
    "#private/",
    "tabbed\t#private",
    "a list:\n- item #private",
    "> quoted #private",
    "%% a comment Obsidian does not show #private %%",  # read as text: fail closed
    "    indented #private",  # an indented code block is read as text: fail closed
    "`unclosed code span #private",
    "a `span` then #private",
    "``two ` ticks`` #private",
    "escaped \\`x #private\\`",  # escaped backticks are text, so is the tag
    "```\ncode\n```\nafter the fence #private",
    "~~~\ncode\n~~~\n#private",
    "````\n```\nstill code\n````\n#private",
    "```js `x`\n#private",  # backticks in a backtick fence's info string: not a fence
    "text\r#private",
    "text\r\n#private",
    "\u00a0#private",
    "`a\nb` #private",  # a code span over two lines is read as text: fail closed
]
PUBLIC_TEXTS = [
    "#privateer",
    "#private-beta",
    "#privately",
    "#projects/private-beta",
    "a#private",
    "https://example.com/page#private",
    "`#private`",
    "``a `#private` b``",
    "```\n#private\n```",
    "````text\n```\n#private\n````",
    "~~~\n#private\n~~~",
    "```\nnever closed\n#private",
    "# private heading",
    "no tag here, private and #work",
    "",
]


@pytest.mark.parametrize("text", PRIVATE_TEXTS)
def test_given_a_private_tag_in_the_text_then_the_note_is_private(text: str):
    assert marked_private({}, text), text
    assert note_facts("Notes/a.md", {}, text).private


@pytest.mark.parametrize("text", PUBLIC_TEXTS)
def test_given_no_private_tag_as_obsidian_reads_tags_then_the_text_does_not_make_it_private(text: str):
    assert not marked_private({}, text), text


@pytest.mark.parametrize(
    "frontmatter",
    [
        {"tags": ["private/health"]},
        {"tags": "#Private/Health, work"},
        {"tags": "work health/private"},
        {"Tags": ["x", "PRIVATE"]},
        {"tag": "private"},
        {"tags": [["private"]]},  # `tags: [[private]]` unquoted: a list in a list
    ],
)
def test_given_a_private_or_nested_private_tag_in_the_properties_then_the_note_is_private(frontmatter):
    assert marked_private(frontmatter)


@pytest.mark.parametrize("frontmatter", [{"tags": ["privateer"]}, {"tags": "private-beta"}, {"tags": {"private": 1}}])
def test_given_a_tag_that_only_looks_private_then_the_properties_do_not_make_it_private(frontmatter):
    assert not marked_private(frontmatter)


def test_the_tags_read_are_the_ones_obsidian_lists():
    text = "#one and #two/three, `#code`, x#no, #four.\n```\n#five\n```\n#six"
    assert list(text_tags(text)) == ["one", "two/three", "four", "six"]
    assert property_tags(["#a", "b/c"]) == ["a", "b/c"] and property_tags("#a, b c") == ["a", "b", "c"]
