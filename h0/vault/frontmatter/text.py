"""A note's text cut into BOM, frontmatter block and body, and put back together."""

from __future__ import annotations

import re
from dataclasses import dataclass

from h0.errors import ParseError
from h0.vault.frontmatter.limits import MAX_YAML_CHARS

BOM = "\ufeff"
OPEN = re.compile(r"---[ \t]*(\r?\n|$)")
# The closing line, found from the newline before it (a search for a line start, `^` with MULTILINE, tries the
# pattern at every character: three times the cost on a note's frontmatter).
_CLOSE = re.compile(r"\n((?:---|\.\.\.)[ \t]*(?:\r?\n|$))")


@dataclass(frozen=True, slots=True)
class Split:
    """A note's text cut into its parts; `yaml is None` when there is no frontmatter block."""

    bom: str
    newline: str
    yaml: str | None
    body: str
    open_line: str = "---"
    close_line: str = "---"


def split(text: str) -> Split:
    """Cut a note into BOM, frontmatter YAML and body; raise ParseError if `---` is unclosed.

    The closing line is looked for only within MAX_YAML_CHARS of the opening one, so a
    10 MB note costs the same as a 256 KB one.
    """
    bom = BOM if text.startswith(BOM) else ""
    rest = text[len(bom) :]
    newline = _newline(rest)
    opened = OPEN.match(rest)
    if not opened:
        return Split(bom, newline, None, rest)
    start = opened.end()
    if not opened.group(1):  # the file is just "---"
        raise ParseError("The frontmatter block opened with '---' is never closed.")
    window = min(len(rest), start + MAX_YAML_CHARS + 8)  # room for the closing line itself
    closed = _CLOSE.search(rest, start - 1, window)  # from the newline ending the opening line
    if closed and closed.end() == window < len(rest):
        closed = _CLOSE.match(rest, closed.start())  # the window cut that line: read all of it
    if not closed and window < len(rest):
        raise ParseError(
            f"The frontmatter block opened with '---' is not closed within {MAX_YAML_CHARS:,} characters "
            f"({MAX_YAML_CHARS // 1024} KiB), the most H0 reads. Close it with a '---' line, and move long "
            "text below that line, into the note's body.",
            limit=MAX_YAML_CHARS,
        )
    if not closed:
        raise ParseError("The frontmatter block opened with '---' is never closed.")
    open_line = rest[: opened.end()].rstrip("\r\n")
    close_line = closed.group(1).rstrip("\r\n")
    return Split(bom, newline, rest[start : closed.start(1)], rest[closed.end() :], open_line, close_line)


def _newline(text: str) -> str:
    """The note's line ending: CRLF when one is in its first 4 KiB (a one-character search finds the CRs)."""
    cr = text.find("\r", 0, 4095)
    while cr >= 0:
        if text.startswith("\n", cr + 1):
            return "\r\n"
        cr = text.find("\r", cr + 1, 4095)
    return "\n"


def compose(parts: Split | None, frontmatter_yaml: str | None, body: str) -> str:
    """Assemble note text from (old) parts, new frontmatter YAML and a body."""
    bom = parts.bom if parts else ""
    newline = parts.newline if parts else "\n"
    if frontmatter_yaml is None:
        if not OPEN.match((bom + body).removeprefix(BOM)):
            return bom + body
        frontmatter_yaml = ""  # a body starting with '---' would be read as frontmatter: an empty block keeps it body
    open_line = parts.open_line if parts and parts.yaml is not None else "---"
    close_line = parts.close_line if parts and parts.yaml is not None else "---"
    return f"{bom}{open_line}{newline}{frontmatter_yaml}{close_line}{newline}{body}"
