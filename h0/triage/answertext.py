"""A model's answer text as real models write it: reasoning blocks out, the one JSON object found.

Reasoning models (DeepSeek-R1, Qwen3, QwQ, gpt-oss through some servers) put their thinking in the
answer itself — `<think>…</think>`, `<thinking>`, `<reasoning>` — often with braces in it, and a
model cut off mid-thought leaves the block unterminated. Small models wrap the object in prose or
code fences. `answer_json` strips the reasoning and returns the first balanced top-level JSON object
outside it; `closed_json` finishes an object cut off at the token limit, so a truncated answer can
still be read (and is then flagged, never sent silently).
"""

from __future__ import annotations

import json
import re

REASONING_TAGS = ("think", "thinking", "reasoning", "reflection", "thought")
_OPEN = re.compile(r"<(" + "|".join(REASONING_TAGS) + r")\b[^>]*>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?")
_LINE_OBJECT = re.compile(r"\n\s*(?:```[ \t]*(?:json)?\s*)?\{")
MAX_CANDIDATES = 8  # object-starting lines tried after an unterminated reasoning block
MAX_SCAN_CHARS = 200_000  # a 50 KB answer is scanned whole; beyond this the model is not answering


def strip_reasoning(text: str) -> str:
    """The text without reasoning blocks. An unterminated block runs to the end of the text, unless a
    JSON object starts on a line of its own after it (models that forget to close the tag)."""
    out: list[str] = []
    pos = 0
    # A closing tag with no opening one: everything before it was reasoning (some servers drop the `<think>`).
    lone_close = re.search(r"</(" + "|".join(REASONING_TAGS) + r")>", text, re.IGNORECASE)
    if lone_close and not _OPEN.search(text, 0, lone_close.start()):
        pos = lone_close.end()
    while True:
        opened = _OPEN.search(text, pos)
        if opened is None:
            out.append(text[pos:])
            break
        out.append(text[pos : opened.start()])
        tag = opened.group(1).lower()
        closed = re.compile(rf"</{tag}\s*>", re.IGNORECASE).search(text, opened.end())
        if closed is not None:
            pos = closed.end()
            continue
        # Unterminated: the answer may still follow on a line that starts an object — the last such
        # line whose object is JSON (the reasoning's own `{…}` lines come before the answer).
        rest = text[opened.end() :]
        starts = [m.start() for m in _LINE_OBJECT.finditer(rest)]
        if not starts:
            break
        # At most the last MAX_CANDIDATES are tried: a hostile answer of a thousand `{` lines stays linear.
        tried = reversed(starts[-MAX_CANDIDATES:])
        pos = opened.end() + next((at for at in tried if _is_json(rest[at:])), starts[-1])
    return "".join(out)


def _is_json(text: str) -> bool:
    found = balanced_object(_FENCE.sub("", text))
    if found is None:
        return False
    try:
        json.loads(found)
    except (ValueError, RecursionError):
        return False
    return True


def balanced_object(text: str) -> str | None:
    """The first balanced top-level `{…}` of `text` (strings and escapes respected), or None."""
    text = text[:MAX_SCAN_CHARS]
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    scan = JsonScan()
    for index in range(start, len(text)):
        ch = text[index]
        if scan.code(ch) and ch in "{}":
            depth += 1 if ch == "{" else -1
            if depth == 0:
                return text[start : index + 1]
    return None  # the first object never closes: nothing later can be the answer's top level


class JsonScan:
    """Where a JSON-like text stands, a character at a time: in a string, or right after a backslash in
    one. The one scanner of strings and escapes for the answer's readers (the balanced object, the closing
    of a cut-off answer, h0.triage.prompt's repair of raw line breaks)."""

    __slots__ = ("escaped", "in_string")

    def __init__(self) -> None:
        self.in_string = self.escaped = False

    def code(self, ch: str) -> bool:
        """Take `ch`; True when it stands outside a string (a string's own quotes count as outside)."""
        if not self.in_string:
            self.in_string = ch == '"'
            return True
        if self.escaped:
            self.escaped = False
        elif ch == '"':
            self.in_string = False
            return True
        else:
            self.escaped = ch == "\\"
        return False


def answer_json(text: str) -> str:
    """The answer's JSON text: reasoning stripped, fences dropped, the first balanced object (else
    the stripped text itself, for the caller's parser to explain what is wrong with it)."""
    stripped = _FENCE.sub("", strip_reasoning(text)).strip()
    found = balanced_object(stripped)
    return found if found is not None else stripped


def closed_json(text: str) -> str | None:
    """A JSON object cut off mid-way, closed: the open string ended, a dangling key or comma dropped,
    the open brackets closed. None when `text` holds no object start."""
    stripped = _FENCE.sub("", strip_reasoning(text))
    start = stripped.find("{")
    if start < 0:
        return None
    body = stripped[start:MAX_SCAN_CHARS]
    stack: list[str] = []
    scan = JsonScan()
    for ch in body:
        if not scan.code(ch):
            continue
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    if scan.escaped:
        body = body[:-1]
    if scan.in_string:
        body += '"'
    body = body.rstrip()
    if stack and stack[-1] == "}":
        # Inside an object a string right after `{` or `,` is a key: without its value it goes.
        body = re.sub(r'([{,])\s*"(?:[^"\\\n]|\\.)*"\s*:?\s*$', r"\1", body)
    body = re.sub(r"[,:]\s*$", "", body)
    return body + "".join(reversed(stack))
