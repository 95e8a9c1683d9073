"""What to do about a YAML error in a note's frontmatter, said so a person who never read the YAML
spec can fix it: which line, what it says, and the usual repair ("quote a value containing `: `").

ruamel's messages ("mapping values are not allowed in this context") name the parser's state, not
the mistake. The mistakes people make in Obsidian's frontmatter are few: a colon and space inside
a value (`subject: Re: hello`), a value starting with a character YAML reserves (`@`, `` ` ``,
`%`, `*`, `&`, `!`, `|`, `>`), a quote or bracket left open, a tab, a line indented differently,
a key written twice. Each gets its repair; anything else gets "quote the value".
"""

from __future__ import annotations

from typing import Any

from h0.printable import printable

# (words in ruamel's problem text, the repair), first match wins.
_REPAIRS: tuple[tuple[str, str], ...] = (
    ("mapping values are not allowed", 'quote a value containing ": " (e.g. subject: "Re: hello")'),
    ("cannot start any token", "quote a value that starts with @, `, % or another reserved character"),
    ("expected alphabetic or numeric character", "quote a value that starts with * or &"),
    ("found undefined alias", "quote a value that starts with *"),
    ("found undefined tag", "quote a value that starts with !"),
    ("could not determine a constructor", "quote a value that starts with !"),
    ("tab character", "indent with spaces, not tabs"),
    ("found unexpected end of stream", "close the quote this value opens (or remove it)"),
    ("expected ',' or ']'", 'close the [list] with "]", or quote the value if it is not meant as a list'),
    ("expected ',' or '}'", 'close the {mapping} with "}", or quote the value if it is not meant as one'),
    ("duplicate key", "keep one of the two lines with this key"),
    ("did not find expected key", 'write each line as "key: value" at the same indent as the others'),
    ("expected <block end>", 'write each line as "key: value" at the same indent as the others'),
    ("could not find expected ':'", 'write "key: value", with a space after the colon; quote a value on more lines'),
)
DEFAULT_REPAIR = 'put the value in double quotes ("…")'


def repair(exc: Exception, text: str) -> str:
    """' Line 1: `subject: Re: hello` — to fix: quote a value containing ": " (…)'; the line is the
    frontmatter's (the note's line is one more, after its opening ---)."""
    problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
    fix = next((how for words, how in _REPAIRS if words in problem), DEFAULT_REPAIR)
    lines = text.splitlines()
    where = ""
    # The problem's line; for a quote or bracket never closed, the line that opened it.
    marks = [getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)]
    if "end of stream" in problem:
        marks.reverse()
    for mark in marks:
        line: Any = getattr(mark, "line", None)
        if isinstance(line, int) and 0 <= line < len(lines):
            where = f" Line {line + 1}: `{printable(lines[line].strip(), 80)}`."
            break
    return f"{where} To fix: {fix}."
