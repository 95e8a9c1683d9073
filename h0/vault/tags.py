"""A note's tags as Obsidian's tag pane lists them: in its properties (`tags:`, `tag:`) and in its text
(`#tag`), nested tags (`private/health`) included. The one reader of tags; the disclosure gate asks
it whether a note carries a private tag (h0.vault.model.marked_private).

In the text, a tag is what Obsidian reads as one: `#` at the start of a line or after whitespace,
then every character up to whitespace or a punctuation mark Obsidian ends tags on (letters, digits,
`_`, `-` and `/` go on), outside fenced code blocks and inline code. `#privateer` is the tag
`privateer`, `#private.` the tag `private`, `a#private` and `` `#private` `` no tag at all.

Where H0 cannot be sure it reads the text as Obsidian does, it counts the tag (the gate fails closed):
a code span spread over several lines, an indented code block, a fence inside a list item or a quote,
and `%%comments%%` are read as text, so a `#private` there still makes the note private.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

PRIVATE = "private"
TAG_KEYS = frozenset({"tags", "tag"})
# What ends a tag in Obsidian: whitespace, general and supplemental punctuation, and ASCII punctuation
# other than `_`, `-` and `/`.
_ENDS = r"\s\u2000-\u206f\u2e00-\u2e7f'!\"#$%&()*+,.:;<=>?@^`{|}~\[\]\\"
_INLINE = re.compile(rf"(?:^|(?<=\s))#([^{_ENDS}]+)", re.MULTILINE)
_SPLIT = re.compile(r"[,\s]+")

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_TICKS = re.compile(r"`+")
_LINES = re.compile(r"\r\n|\r|\n")  # the line breaks of Markdown (str.splitlines breaks at more)


def private_tag(tag: str) -> bool:
    """Whether a tag (with or without its `#`) is private: it, or any level of it, is `private`, in any
    case (`private`, `Private/health`, `health/private`; not `privateer`, not `private-beta`)."""
    return any(level.casefold() == PRIVATE for level in tag.strip().lstrip("#").split("/"))


def property_tags(value: Any) -> list[str]:
    """The tags a `tags:` property holds: a list, or a text of tags split by commas or spaces (`#` dropped).
    A list inside the list (`tags: [[private]]`, unquoted) is read as its tags too."""
    items = list(value) if isinstance(value, list) else [value]
    found: list[str] = []
    for depth, item in enumerate(items):
        if isinstance(item, str):
            found += [tag.lstrip("#") for tag in _SPLIT.split(item) if tag.lstrip("#")]
        elif isinstance(item, list) and depth < 1000:
            items += item
    return found


def text_tags(body: str) -> Iterator[str]:
    """The tags written in a note's text, in order, as Obsidian reads them (see the module's docstring)."""
    if "#" not in body:
        return
    for line in _outside_code(body):
        if "#" in line:
            yield from (match.group(1) for match in _INLINE.finditer(line))


def text_private(body: str | None) -> bool:
    """Whether a note's text carries a private tag (`#private`, `#private/health`, …)."""
    if not body or "#" not in body:  # every tag starts with one: most mail holds none, and folding costs a copy
        return False
    folded = body.casefold()  # a private tag's level folds to "private", after a `#` or a `/`: looked for first, in C
    if "#private" not in folded and "/private" not in folded:
        return False
    return any(private_tag(tag) for tag in text_tags(body))


def _outside_code(body: str) -> Iterator[str]:
    """The lines of `body` outside fenced code blocks, each with its inline code spans blanked out."""
    fence: tuple[str, int] | None = None  # the open fence's character and length
    for line in _LINES.split(body):
        opened = _FENCE.fullmatch(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= fence[1]:
                fence = None if not opened.group(2).strip(" \t") else fence
            continue
        if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence = (opened.group(1)[0], len(opened.group(1)))
            continue
        # A backslash may escape a backtick (then what follows is text): such a line is read as text.
        yield _without_code_spans(line) if "`" in line and "\\`" not in line else line


def _without_code_spans(line: str) -> str:
    """The line with each code span (a run of backticks up to the next run of the same length) blanked;
    an opening run never closed on the line leaves the rest as text."""
    kept: list[str] = []
    last = 0
    opening: re.Match[str] | None = None
    for run in _TICKS.finditer(line):
        if opening is None:
            opening = run
        elif len(run.group()) == len(opening.group()):
            kept.append(line[last : opening.start()])
            kept.append(" ")
            last = run.end()
            opening = None
    kept.append(line[last:])
    return "".join(kept)
