"""Honest drafts: what a model wrote, made safe to show, and what it stood on, said below the line.

A model's reply text goes through `clean_reply` before anyone sees it: characters that render
as nothing (format and tag characters: zero-width spaces, bidi overrides) are removed and
counted; the placeholders models leave ("[Your Name]", "{date}", "<time>") become H0's named
placeholder `[FILL: …]`, which the mail server refuses to send (h0.mail.compose.drafts names each);
a line starting `h0:` (a revision instruction, h0.drafting.instructions) is removed so no draft
asks for its own rewrite. `notes_section` writes what goes under the cut-off line: the notes and
past replies the draft drew on as [[links]], "Questions for you" (the model's, one per
placeholder), and a warning for every note the draft quotes word for word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from h0.drafting.context import ContextItem, DraftContext
from h0.drafting.instructions import without_instructions
from h0.mail.compose.drafts import PLACEHOLDER
from h0.mail.incoming.htmltext import inert_inline

QUOTE_WORDS = 8  # this many words in a row, copied from a note, is a quote
MAX_LISTED = 12
_KEEP_FORMAT = {"\u200d"}  # zero-width joiner: part of emoji sequences, shown as one glyph
_PLACEHOLDER_WORDS = (
    r"insert|your|add|enter|specify|fill(?: in)?|tbd|todo|name|first name|last name|recipient|date|time|day|"
    r"phone(?: number)?|address|company|title|link|url|amount|number|price|location|place|meeting time"
)
_BRACKETED = re.compile(rf"\[(?!\[)\s*((?:{_PLACEHOLDER_WORDS})\b[^\[\]\n]{{0,60}})\](?!\()", re.IGNORECASE)
# Any other short, all-lower-case word(s) in square brackets that is not a link: "[venue]", "[meeting room]".
_BARE = re.compile(r"(?<![\[!\\])\[([a-z][a-z \-]{1,40})\](?![\(\[:])")
_BRACED = re.compile(r"\{\{?\s*([A-Za-z][A-Za-z _]{1,40})\s*\}?\}")
_ANGLED = re.compile(rf"<\s*((?:{_PLACEHOLDER_WORDS})\b[^<>\n]{{0,40}})\s*>", re.IGNORECASE)
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class CleanReply:
    text: str
    removed_invisible: int = 0
    placeholders: tuple[str, ...] = ()  # what each [FILL: …] asks for
    removed_instructions: int = 0


def clean_reply(text: str) -> CleanReply:
    """A model's reply made safe to put in a draft (see the module's docstring)."""
    cleaned, removed = text, 0
    if not text.isascii():  # no ASCII character is a format character (Cf): nothing to look for
        kept = []
        for ch in text:
            if unicodedata.category(ch) == "Cf" and ch not in _KEEP_FORMAT:
                removed += 1
                continue
            kept.append(ch)
        cleaned = "".join(kept)
    cleaned, instructions = without_instructions(cleaned)
    cleaned = _BRACKETED.sub(lambda m: _fill(m.group(1)), cleaned)
    cleaned = _BARE.sub(lambda m: _fill(m.group(1)), cleaned)
    cleaned = _BRACED.sub(lambda m: _fill(m.group(1).replace("_", " ")), cleaned)
    cleaned = _ANGLED.sub(lambda m: _fill(m.group(1)), cleaned)
    asks = tuple(dict.fromkeys(m.group(1).strip() for m in PLACEHOLDER.finditer(cleaned)))
    return CleanReply(cleaned.strip(), removed, asks, instructions)


def _fill(what: str) -> str:
    what = " ".join(what.split()).removeprefix("FILL:").strip()
    return f"[FILL: {what}]"


def quoted_notes(reply: str, items: Sequence[ContextItem]) -> list[ContextItem]:
    """The owner's notes (not past replies or the profile) the reply copies QUOTE_WORDS words in a row from."""
    words = [w.lower() for w in _WORDS.findall(reply)]
    shingles = {tuple(words[i : i + QUOTE_WORDS]) for i in range(len(words) - QUOTE_WORDS + 1)}
    if not shingles:
        return []
    found = []
    for item in items:
        if item.kind not in ("person", "linked", "related"):
            continue
        theirs = [w.lower() for w in _WORDS.findall(item.text)]
        if any(tuple(theirs[i : i + QUOTE_WORDS]) in shingles for i in range(len(theirs) - QUOTE_WORDS + 1)):
            found.append(item)
    return found


@dataclass(frozen=True, slots=True)
class Grounding:
    """What a draft stood on and what it still needs, for the part under the cut-off line."""

    used: tuple[ContextItem, ...] = ()
    given: tuple[ContextItem, ...] = ()  # shown to the model but not named by it
    questions: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()
    quoted: tuple[ContextItem, ...] = ()
    notes: tuple[str, ...] = field(default=())  # other remarks (invisible characters removed, …)
    by_model: bool = True  # False: a rules template (the notes are listed as found, not as used)


def grounding(
    context: DraftContext | None,
    reply: CleanReply,
    sources: Sequence[str] = (),
    questions: Sequence[str] = (),
    *,
    by_model: bool = True,
) -> Grounding:
    """Match the model's named sources against what it was given; add a question per placeholder."""
    if context is None:
        return Grounding(questions=tuple(questions), placeholders=reply.placeholders, by_model=by_model)
    listed = context.links()
    named = {_label_key(s) for s in sources}
    used = [i for i in listed if _label_key(i.label) in named] if by_model else []
    given = [i for i in listed if i not in used]
    asks = list(dict.fromkeys(q for q in questions if q.strip()))
    for what in reply.placeholders:
        asks.append(f"{what[:1].upper()}{what[1:]}? (replace [FILL: {what}] in the text above)")
    remarks = []
    if reply.removed_invisible:
        remarks.append(f"H0 removed {reply.removed_invisible} invisible character(s) from the model's text.")
    if reply.removed_instructions:
        remarks.append("H0 removed a line starting `h0:` from the model's text (only you ask for revisions).")
    quoted = quoted_notes(reply.text, context.items) if by_model else []
    return Grounding(
        tuple(used), tuple(given), tuple(asks), reply.placeholders, tuple(quoted), tuple(remarks), by_model
    )


def _label_key(label: str) -> str:
    return " ".join(label.strip().strip("[]").lower().split())


def notes_section(found: Grounding) -> str:
    """The draft's lines about its grounding (Markdown, every model- or email-made string escaped)."""
    lines: list[str] = []
    for item in found.quoted:
        lines.append(
            f"> [!warning] H0: this draft quotes your note {item.label} word for word. Check that you mean "
            "to share it before you approve."
        )
    if found.quoted:
        lines.append("")
    if found.used:
        lines.append("**Drawn from:** " + _list(found.used))
    if found.given:
        title = "**Also given to the model:** " if found.by_model else "**Notes H0 found for this reply:** "
        lines.append(title + _list(found.given))
    if found.questions:
        lines.append("")
        lines.append(
            "**Questions for you**"
            + (" — the draft cannot be sent until each [FILL: …] is replaced" if found.placeholders else "")
        )
        lines += [f"- {inert_inline(q)}" for q in found.questions[:MAX_LISTED]]
    for remark in found.notes:
        lines.append(f"_{remark}_")
    return "\n".join(lines) + "\n" if lines else ""


def _list(items: Sequence[ContextItem]) -> str:
    shown = []
    for item in items[:MAX_LISTED]:
        label = item.label if item.label.startswith("[[") else inert_inline(item.label)
        shown.append(f"{label} ({inert_inline(item.why)})")
    more = f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return " · ".join(shown) + more
