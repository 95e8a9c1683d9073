"""What to do about a YAML error in a note's frontmatter, said so a person who never read the YAML
spec can fix it: which line, what is wrong there, and the usual repair ("quote a value containing `: `").

ruamel's messages ("mapping values are not allowed in this context") name the parser's state, not
the mistake. The mistakes people make in Obsidian's frontmatter are few: a colon and space inside
a value (`subject: Re: hello`), a value starting with a character YAML reserves (`@`, `` ` ``,
`%`, `*`, `&`, `!`, `|`, `>`), a quote or bracket left open, a tab, a line indented differently,
a key written twice. Each gets its repair; anything else gets "quote the value".

The message never quotes the note: a note whose frontmatter does not parse is private until it does
(h0.vault.disclosure), and its words must not reach an agent through an error, a listing's `skipped`
or the dashboard. The line and column say where to look; the owner has the note open in Obsidian.
"""

from __future__ import annotations

from typing import Any

# (words in ruamel's problem text, what is wrong, the repair), first match wins.
_REPAIRS: tuple[tuple[str, str, str], ...] = (
    (
        "mapping values are not allowed",
        'a value holds ": "',
        'quote a value containing ": " (e.g. subject: "Re: hello")',
    ),
    (
        "cannot start any token",
        "a value starts with a reserved character",
        "quote a value that starts with @, `, % or another reserved character",
    ),
    ("expected alphabetic or numeric character", "a value starts with * or &", "quote a value that starts with * or &"),
    ("found undefined alias", "a value starts with *", "quote a value that starts with *"),
    ("found undefined tag", "a value starts with !", "quote a value that starts with !"),
    ("could not determine a constructor", "a value starts with !", "quote a value that starts with !"),
    ("tab character", "a tab where YAML wants spaces", "indent with spaces, not tabs"),
    ("found unexpected end of stream", "a quote is never closed", "close the quote this value opens (or remove it)"),
    (
        "expected ',' or ']'",
        "a [list] is never closed",
        'close the [list] with "]", or quote the value if it is not meant as a list',
    ),
    (
        "expected ',' or '}'",
        "a {mapping} is never closed",
        'close the {mapping} with "}", or quote the value if it is not meant as one',
    ),
    ("duplicate key", "a key is written twice", "keep one of the two lines with this key"),
    (
        "did not find expected key",
        "a line is indented differently",
        'write each line as "key: value" at the same indent as the others',
    ),
    (
        "expected <block end>",
        "a line is indented differently",
        'write each line as "key: value" at the same indent as the others',
    ),
    (
        "could not find expected ':'",
        'a line is not "key: value"',
        'write "key: value", with a space after the colon; quote a value on more lines',
    ),
)
DEFAULT_REPAIR = 'put the value in double quotes ("…")'


def explain(exc: Exception, text: str, subject: str = "The frontmatter") -> str:
    """'The frontmatter is not valid YAML on line 1 (column 15): a value holds ": ". To fix: quote a value
    containing ": " (…).' — the line is the frontmatter's (the note's line is one more, after its opening
    ---). Never a word of the text itself."""
    problem = " ".join(str(getattr(exc, "problem", None) or "").split())
    what, fix = next(((w, how) for words, w, how in _REPAIRS if words in problem), ("", DEFAULT_REPAIR))
    lines = text.count("\n") + 1
    where = ""
    # The problem's line; for a quote or bracket never closed, the line that opened it.
    marks = [getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)]
    if "end of stream" in problem:
        marks.reverse()
    for mark in marks:
        line: Any = getattr(mark, "line", None)
        column: Any = getattr(mark, "column", None)
        if isinstance(line, int) and 0 <= line < lines:
            where = f" on line {line + 1}" + (f" (column {column + 1})" if isinstance(column, int) else "")
            break
    return f"{subject} is not valid YAML{where}{': ' + what if what else ''}. To fix: {fix}."


def where_of(exc: Exception) -> dict[str, int]:
    """The error's line in the frontmatter (1-based), as the ParseError's details: {"line": 3}, or {}."""
    line = getattr(getattr(exc, "problem_mark", None), "line", None)
    return {"line": line + 1} if isinstance(line, int) else {}
