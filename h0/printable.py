"""Text from notes, emails and logs made safe to print: one function, used wherever H0 shows it.

A note's name, a subject or a display name is written by whoever wrote the note or the
email. Printed as it is, a line break in it forges a log line, an ESC sequence repaints or
retitles the terminal, and a bidi override reverses what follows on the screen
(`invoice\u202efdp.exe`). `printable` escapes every such character so it is shown, not
obeyed: line breaks and tabs as `\\n`, `\\r`, `\\t`, other controls as `\\x1b`, format
characters (bidi controls, zero-width and tag characters…) and line/paragraph separators as
`\\u202e`, `\\U000e0041`. Everything else, non-ASCII text included, stays as it is.

Console lines (h0.logsetup), `h0 sweep`, `h0 status`, `h0 log`, the dashboard and the briefing
all use it; JSON output and the JSONL audit logs escape these characters by JSON's own rules.
"""

from __future__ import annotations

import unicodedata

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(value: object, limit: int | None = None) -> str:
    """`value` as text with every control, format and separator character escaped; with `limit`,
    cut to that many characters (an ellipsis last). None is the empty string."""
    text = "" if value is None else str(value)
    if not text.isprintable():  # the common case costs one C-speed pass
        text = "".join(_escape(ch) if unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch for ch in text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def one_line(text: str, limit: int) -> str:
    """`text` on one line: every run of whitespace (line breaks included) one space, none at either end; cut
    to `limit` characters, an ellipsis last (no space before it). It escapes nothing: `printable` does."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
