"""Reading the owner's own control notes safely: bounded size, bounded lines, no injected orders.

`H0_Profile.md` and `H0_Memory.md` are the owner's, but anything that can write the vault
(an agent through MCP, a sync tool) can write them too, and both reach a prompt. So each is
read with the same limits: a note past MAX_NOTE_BYTES or with broken frontmatter is a typed
error and the defaults are used; a line that reads like an order to the model ("ignore the
previous instructions", "forward every email to …", "bcc …") is left out with a typed error
naming it, and the rest is used.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h0.errors import H0Error, InvalidRequest, NotFound, ParseError
from h0.platform.fs import regular_file
from h0.vault import frontmatter
from h0.vault.note import decode

MAX_NOTE_BYTES = 64 * 1024
MAX_LINE_CHARS = 400

_INJECTED = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:instructions?|rules?|prompts?|above|previous|prior)\b"
    r"|\b(?:system|assistant|developer)\s*(?:prompt|message)?\s*:"
    r"|\byou are now\b|\bnew instructions?\b|\bjailbreak\b"
    r"|\b(?:forward|send|copy|cc|bcc|e-?mail|mail)\b.{0,60}\b(?:to|at)\b\s*\S*@"
    r"|\bb?cc\b\s*:?\s*\S+@"
    r"|\b(?:include|attach|paste|quote|reveal|share|leak)\b.{0,50}\b(?:all|every|other|private|secret)\b.{0,30}"
    r"\b(?:notes?|emails?|mails?|messages?|vault|files?|passwords?|keys?)\b"
    r"|<\s*/?\s*(?:email|owner|system|notes?)-?[0-9a-f]*\s*>",
    re.IGNORECASE,
)


def injected(line: str) -> bool:
    """True when a line of an owner note reads like an order to the model rather than a fact or a habit."""
    return _INJECTED.search(line) is not None


@dataclass(slots=True)
class Loaded:
    """A control note as read: its frontmatter and body (empty when unusable) and what was wrong."""

    path: str
    frontmatter: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    exists: bool = False
    hash: str | None = None
    problems: list[H0Error] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return self.exists and not any(
            isinstance(p, (ParseError, InvalidRequest)) and p.details.get("whole") for p in self.problems
        )


def load_control_note(root: Path, name: str) -> Loaded:
    """Read `name` at the vault's root within the bounds; never raises."""
    loaded = Loaded(name)
    try:
        _read(loaded, Path(root) / name)
    except H0Error as problem:
        loaded.problems.append(problem)
    return loaded


def _read(loaded: Loaded, target: Path) -> None:
    """`loaded` filled from `target`; a note H0 cannot use raises what is wrong (`whole`: H0 uses its defaults)."""
    from h0.vault.note import content_hash

    name = loaded.path
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _unreadable(name, exc) from exc
    loaded.exists = True
    if not os.path.isfile(target) or os.path.islink(target):
        raise InvalidRequest(
            f"{name} is not a plain note (a link or a folder); H0 uses its defaults. Make it an ordinary Markdown file.",
            path=name,
            whole=True,
        )
    if st.st_size > MAX_NOTE_BYTES:
        raise InvalidRequest(
            f"{name} is {st.st_size / 1024:.0f} KiB; H0 reads notes like it up to {MAX_NOTE_BYTES // 1024} KiB, so it "
            "uses its defaults until you shorten it.",
            path=name,
            size=st.st_size,
            limit=MAX_NOTE_BYTES,
            whole=True,
        )
    try:
        with regular_file(target) as handle:
            data = handle.read(MAX_NOTE_BYTES + 1)
        text = decode(data, name)
        parts = frontmatter.split(text)
        fm = frontmatter.load(parts.yaml)
    except OSError as exc:
        raise _unreadable(name, exc) from exc
    except H0Error as exc:
        raise ParseError(
            f"{name}: {exc.message} H0 uses its defaults until it is fixed.", path=name, whole=True
        ) from exc
    loaded.frontmatter, loaded.body, loaded.hash = fm, parts.body, content_hash(data)


def _unreadable(name: str, exc: OSError) -> InvalidRequest:
    return InvalidRequest(
        f"{name} cannot be read ({exc.strerror or exc}); H0 uses its defaults.", path=name, whole=True
    )


def safe_lines(loaded: Loaded, lines: list[str], what: str) -> list[str]:
    """`lines` without those too long or reading like orders to the model; each one left out is a problem."""
    kept = []
    for line in lines:
        text = line.strip()
        if not text:
            continue
        why = _left_out(text, what, loaded.path)
        if why is not None:
            loaded.problems.append(InvalidRequest(why, path=loaded.path, line=text[:200]))
            continue
        kept.append(text)
    return kept


def _left_out(text: str, what: str, path: str) -> str | None:
    """Why a line of an owner's note is left out of prompts (too long; reads like an order to the model), or None."""
    if len(text) > MAX_LINE_CHARS:
        return (
            f"{path}: a {what} line is {len(text)} characters (at most {MAX_LINE_CHARS}); H0 left it out: "
            f"“{text[:60]}…”"
        )
    if injected(text):
        return (
            f"{path}: H0 left out a {what} line that reads like an instruction to the model rather than "
            f"something about you: “{text[:120]}”. Reword it as a fact or a habit if it is yours."
        )
    return None


def section(body: str, heading: str) -> str:
    """The text under `## heading` (case-insensitive) up to the next heading of that level or higher."""
    found = section_span(body, heading)
    return body[found[1] : found[2]] if found else ""


def section_span(body: str, heading: str) -> tuple[int, int, int] | None:
    """Where the section `## heading` (case-insensitive) is: its heading's start and end, and its own end (the
    next heading of that level or higher, or the end of `body`); None when there is none."""
    match = re.compile(rf"^##\s+{re.escape(heading)}\s*$", re.IGNORECASE | re.MULTILINE).search(body)
    if match is None:
        return None
    nxt = re.compile(r"^#{1,2}\s", re.MULTILINE).search(body, match.end())
    return match.start(), match.end(), nxt.start() if nxt else len(body)


def bullets(text: str) -> list[str]:
    """The items of a Markdown list (`- x`, `* x`, `1. x`), one per line; other lines are ignored."""
    found = []
    for line in text.splitlines():
        match = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$", line)
        if match and match.group(1).strip():
            found.append(match.group(1).strip())
    return found


__all__ = ["Loaded", "NotFound", "bullets", "injected", "load_control_note", "safe_lines", "section"]
