"""Characters that render as nothing, judged in context (see h0.mail.deception.visible for the whole picture).

Unicode format characters (category Cf), the other default-ignorable code points, the blank
Braille pattern and C0/C1 controls — except where they are visible: a zero-width joiner inside
an emoji sequence, a joiner or non-joiner between letters of scripts that need them, a
variation selector after a base character, and the tag sequences of the three recommended flags.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

CONTROL, CHARACTER = "control", "character"  # the two kinds of `Invisible` found here

# Every format character (Cf, Unicode 15.1) and every other default-ignorable code point, the
# blank Braille pattern, the line/paragraph separators and C0/C1 controls but tab and line feed:
# a candidate is then judged in context (`hidden_character`). tests/security/test_invisible_text.py proves
# the class holds every Cf and control character the running Python knows.
SUSPECT = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001345f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
# Format characters that draw a visible sign (Arabic number sign, end of ayah…): not hidden.
_VISIBLE_FORMAT = frozenset([*range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD])
_ZWNJ, _ZWJ = "\u200c", "\u200d"
_VS = frozenset(chr(c) for c in [*range(0xFE00, 0xFE10), *range(0x180B, 0x180E), 0x180F])
_VS_SUPPLEMENT = range(0xE0100, 0xE01F0)
_CANCEL_TAG = "\U000e007f"
_BLACK_FLAG = "\U0001f3f4"
# The flags Unicode recommends that are written with tag characters (RGI_Emoji_Tag_Sequence).
_FLAG_TAGS = frozenset({"gbeng", "gbsct", "gbwls"})
_JOINING_SCRIPTS_FROM = 0x0590  # Hebrew onwards: Arabic, Syriac, Indic, … use ZWJ/ZWNJ between letters

_KNOWN_NAMES = {
    "\u00ad": "soft hyphen",
    "\u200b": "zero-width space",
    "\u200c": "zero-width non-joiner",
    "\u200d": "zero-width joiner",
    "\u200e": "left-to-right mark",
    "\u200f": "right-to-left mark",
    "\u202a": "left-to-right embedding",
    "\u202b": "right-to-left embedding",
    "\u202c": "bidi pop",
    "\u202d": "left-to-right override",
    "\u202e": "right-to-left override",
    "\u2060": "word joiner",
    "\u2066": "left-to-right isolate",
    "\u2067": "right-to-left isolate",
    "\u2068": "first-strong isolate",
    "\u2069": "bidi isolate pop",
    "\ufeff": "zero-width no-break space (BOM)",
    "\u061c": "Arabic letter mark",
    "\u2800": "blank Braille pattern",
    "\u3164": "Hangul filler",
    "\u2028": "line separator",
    "\u2029": "paragraph separator",
    "\u034f": "combining grapheme joiner",
}


@dataclass(frozen=True, slots=True)
class Invisible:
    """One thing that renders as nothing: its kind, its 1-based line, and what it is (short)."""

    kind: str
    line: int
    what: str


def find_in_text(text: str) -> list[Invisible]:
    """Invisible and control characters in plain text (tab and line ends are text)."""
    if text.isascii() and not _ASCII_CONTROL.search(text):
        return []  # the common case, in one C-speed pass
    found = []
    line, counted = 1, 0  # line ends counted up to `counted` once, not from the start for each match
    for match in SUSPECT.finditer(text):
        what = hidden_character(text, match.start())
        if what is not None:
            kind = CONTROL if unicodedata.category(text[match.start()]) == "Cc" else CHARACTER
            line += text.count("\n", counted, match.start())
            counted = match.start()
            found.append(Invisible(kind, line, what))
    return found


_ASCII_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def hidden_character(text: str, i: int) -> str | None:
    """What the suspect character at `i` is, if it is invisible there; None if it is shown."""
    ch = text[i]
    code = ord(ch)
    if ch == "\r" and text[i + 1 : i + 2] == "\n":
        return None  # a CRLF line end
    if code in _VISIBLE_FORMAT:
        return None
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch == _ZWJ and _emoji_side(before) and _emoji_like(after):
        return None  # 👩‍💻, ❤️‍🔥, 🏳️‍🌈
    if ch in (_ZWJ, _ZWNJ) and _joining_letter(before) and _joining_letter(after):
        return None  # Persian, Indic: the joiner changes how the letters join, visibly
    if ch in _VS:
        return None if before and not SUSPECT.match(before) and after not in _VS else _name(ch)
    if code in _VS_SUPPLEMENT:
        # Ideographic variation sequences: one selector after a CJK ideograph.
        return None if unicodedata.name(before, "").startswith("CJK") else _name(ch)
    if 0xE0020 <= code <= 0xE007F and _in_flag(text, i):
        return None
    return _name(ch)


def _emoji_side(ch: str) -> bool:
    # A pictograph, a skin tone modifier (Sk) or the emoji presentation selector before a ZWJ.
    return ch == "\ufe0f" or unicodedata.category(ch) in ("So", "Sk") if ch else False


def _emoji_like(ch: str) -> bool:
    return bool(ch) and unicodedata.category(ch) == "So"


def _joining_letter(ch: str) -> bool:
    return bool(ch) and ord(ch) >= _JOINING_SCRIPTS_FROM and unicodedata.category(ch)[0] in "LM" and ch not in _VS


def _in_flag(text: str, i: int) -> bool:
    """True if the tag character at `i` belongs to 🏴 + one recommended tag sequence + cancel tag."""
    start = i
    while start > 0 and i - start < 8 and 0xE0020 <= ord(text[start - 1]) <= 0xE007F:
        start -= 1
    end = i + 1
    while end < len(text) and end - i < 8 and 0xE0020 <= ord(text[end]) <= 0xE007F:
        end += 1
    run = text[start:end]
    return (
        start > 0
        and text[start - 1] == _BLACK_FLAG
        and run[-1] == _CANCEL_TAG
        and "".join(chr(ord(c) - 0xE0000) for c in run[:-1]) in _FLAG_TAGS
    )


def _name(ch: str) -> str:
    code = f"U+{ord(ch):04X}"
    if ch in _KNOWN_NAMES:
        return f"{_KNOWN_NAMES[ch]} ({code})"
    if 0xE0000 <= ord(ch) <= 0xE007F:
        return f"tag character ({code}), which can carry hidden text"
    if unicodedata.category(ch) == "Cc":
        return f"control character ({code})"
    name = unicodedata.name(ch, "")
    return f"{name.lower()} ({code})" if name else f"invisible character ({code})"


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
