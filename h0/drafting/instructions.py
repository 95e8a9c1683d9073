"""The `h0:` revision instruction: what counts as one, and that only the owner's words can be one.

The owner asks for a rewrite by writing a line `h0: shorter, offer Friday instead` above a
draft's text (or the property `h0`); h0.drafting.revise sends it to the model as an order. So
no text H0 puts in a draft from someone else's words may hold such a line: the email's text
and subject a rules template quotes, a sender's or recipient's name a greeting is built from, a
greeting or sign-off learned from mail, a model's reply, a follow-up H0 composes. Every such
text passes `without_instructions` before a draft holds it, and the one pattern that finds an
instruction is the one that removes it — a line that would be read as an order is never left in.
"""

from __future__ import annotations

import re

# A line starts after any character str.splitlines() breaks at (an editor may show \r or U+2028 as one),
# and around `h0` and the colon may stand any blank but a break (a no-break space too); any case.
_BREAKS = "\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029"
_LINE = re.compile(
    rf"(?:^|(?<=[{_BREAKS}]))[^\S{_BREAKS}]*h0[^\S{_BREAKS}]*:[^\S{_BREAKS}]*([^{_BREAKS}]*?)[^\S{_BREAKS}]*"
    rf"(?=[{_BREAKS}]|\Z)",
    re.IGNORECASE,
)
_WHOLE_LINE = re.compile(_LINE.pattern + rf"(?:\r\n|[{_BREAKS}])?", _LINE.flags)  # the same lines, with their breaks


def instruction_line(text: str) -> str | None:
    """The first `h0:` instruction in `text` (what follows the colon), or None."""
    match = _LINE.search(text)
    return match.group(1) if match and match.group(1).strip() else None


def without_instructions(text: str) -> tuple[str, int]:
    """`text` with every line that would read as an `h0:` instruction removed, and how many there were."""
    return _WHOLE_LINE.subn("", text)
