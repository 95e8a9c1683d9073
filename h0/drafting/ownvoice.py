"""The owner's greeting and sign-off enforced on a model's reply: its own replaced, never doubled.

A model asked to open with "Hi Dana," and close with "— J." may still write "Dear Dana," or
nothing at all, and end "Best regards,\\nJonas Berg" above the owner's "— J.". The prompt asks;
this enforces: the reply's first line goes when it is a greeting (a known one, the one asked
for, or a short "Name," line), its closing block goes when it is a sign-off (a known closing,
the owner's own, their name, initials or signature, a "[Your Name]" placeholder), and the
owner's greeting and sign-off (h0.drafting.voice) are put in their place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from h0.drafting.replytext import looks_like_greeting, looks_like_sign_off
from h0.drafting.voice import Voice

MAX_CLOSING_LINES = 5  # a closing block: sign-off, name, title, initials — never more
MAX_NAME_LINE = 60
_NAME_ONLY_GREETING = re.compile(r"^[^\W\d_][\w .'\-]{0,40}[,:]$", re.UNICODE)
_PLACEHOLDER_NAME = re.compile(r"^\[?\s*(?:FILL:\s*)?(?:your|my|sender'?s?)\s+name\s*\]?$", re.IGNORECASE)
_DASH_SIGNATURE = re.compile(r"^[—–-]{1,2}\s*\S{1,20}$")


def in_owner_voice(reply: str, voice: Voice, names: Sequence[str] = ()) -> str:
    """`reply` opening with `voice.greeting` and ending with `voice.sign_off`, whatever the model wrote
    there. `names`: the owner's name, initials and signature lines (a closing naming them goes too).
    Where the voice has no greeting or sign-off, the model's own stays."""
    opening, body, closing = split_model_reply(reply, voice, names)
    parts = [voice.greeting.strip() or opening, body, voice.sign_off.strip() or closing]
    return "\n\n".join(part for part in parts if part)


def split_model_reply(reply: str, voice: Voice, names: Sequence[str] = ()) -> tuple[str, str, str]:
    """(greeting, body, closing block) of a model's reply; "" where it has none."""
    lines = reply.replace("\r\n", "\n").strip("\n").split("\n")
    owned = _owner_lines(voice, names)
    while lines and not lines[0].strip():
        lines.pop(0)
    opening = lines.pop(0).strip() if lines and _is_greeting(lines[0], voice.greeting) else ""
    cut = _closing_start(lines, owned)
    closing = ""
    if cut is not None:
        closing = "\n".join(line.strip() for line in lines[cut:] if line.strip())
        del lines[cut:]
    return opening, "\n".join(lines).strip("\n").strip(), closing


def _owner_lines(voice: Voice, names: Sequence[str]) -> set[str]:
    owned = {line.strip().lower() for line in voice.sign_off.splitlines() if line.strip()}
    for name in names:
        for line in name.splitlines():
            if line.strip():
                owned.add(line.strip().lower())
                words = line.split()
                if len(words) > 1:
                    owned.add(words[0].lower())  # "Jonas" for "Jonas Berg"
                    owned.add("".join(w[0] for w in words).lower())  # "JB"
                    owned.add(".".join(w[0] for w in words).lower() + ".")  # "J.B."
    return owned


def _is_greeting(line: str, wanted: str) -> bool:
    text = line.strip()
    if not text:
        return False
    if wanted and text.lower() == wanted.strip().lower():
        return True
    if looks_like_greeting(text):
        return True
    # "Dana," / "Mr Berg:" — a bare name as the first line, as many people open.
    return len(text.split()) <= 3 and _NAME_ONLY_GREETING.match(text) is not None and not looks_like_sign_off(text)


def _is_closing_line(line: str, owned: set[str]) -> bool:
    text = line.strip()
    if text.lower() in owned or text.lower().rstrip(",.!") in owned:
        return True
    if _PLACEHOLDER_NAME.match(text) or _DASH_SIGNATURE.match(text):
        return True
    # "Best regards," / "Cheers!" / "Thanks" — but not a sentence ("Thanks for asking.").
    return looks_like_sign_off(text) and not text.endswith((".", "?", ":"))


def _is_name_line(text: str, owned: set[str]) -> bool:
    """A line under a sign-off: a name, initials, a title — short, no sentence."""
    if text.lower() in owned or _PLACEHOLDER_NAME.match(text) or _DASH_SIGNATURE.match(text):
        return True
    words = text.split()
    if not words or len(text) > MAX_NAME_LINE or len(words) > 6 or text.endswith(("?", ":", "!")):
        return False
    return not text.endswith(".") or len(words) == 1 or all(len(w) <= 3 for w in words)


def _closing_start(lines: list[str], owned: set[str]) -> int | None:
    """Where the reply's closing block starts (None: it has none). The block is the last few non-empty
    lines from the first sign-off-like line on; what follows that line must be short (names, titles)."""
    end = len(lines)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    tail = [i for i in range(end) if lines[i].strip()][-MAX_CLOSING_LINES:]
    for position, index in enumerate(tail):
        if not _is_closing_line(lines[index], owned):
            continue
        after = [lines[i].strip() for i in tail[position + 1 :]]
        if all(_is_name_line(text, owned) for text in after):
            return index
    return None
