"""Rules mode's draft body: an honest briefing for the owner, not a holding reply.

Without a model H0 cannot write the answer, but it can put what the owner's notes say next to
each question the email asks: for every question, the lines of the notes in the context (their
properties first) that share its telling words, each with its `[[link]]`; and the questions the
notes do not answer. The whole block is marked for the owner and opens with a `[FILL: …]`
placeholder, so the draft cannot be sent until the owner has written the answer and removed it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from h0.drafting.context import ContextItem, DraftContext
from h0.drafting.knowledgenotes import tokens
from h0.drafting.replytext import strip_quoted
from h0.mail.incoming.htmltext import inert_inline
from h0.mail.incoming.sentences import sentences

KINDS = ("person", "linked", "related", "profile", "past_reply")
MAX_QUESTIONS = 5
LINES_PER_QUESTION = 3
MAX_LINE_CHARS = 200
MAX_SCAN_CHARS = 20_000
MAX_READ_CHARS = 100_000  # of the email, read for its own words (its quoted history cut)
_LIST_MARK = re.compile(r"^(?:[-*•–]|\d{1,2}[.)])\s+")
_INTRODUCED = re.compile(r"^[^?]{3,}?:\s+(?=[A-ZÄÖÜÀÂÉÈÊÎÔÛÇ][^\s:]*\s+\S+\s+\S)")  # ": Could you …?" (3 words on)
_ENDS_ASKING = re.compile(r"\?[?!\s»”\"')]*$")
_GREETING = re.compile(r"^(?:hi|hello|hey|dear|hallo|liebe[r]?|bonjour|salut)\b[^,!?]{0,40}[,!]\s*", re.IGNORECASE)
# Words every question has: they say nothing about what the answer is.
_ASKING = frozenset(
    "what when where which who why how could would can will did does is are was were do you your our we "
    "please know tell let still again also any there".split()
)


@dataclass(frozen=True, slots=True)
class BriefingLine:
    line: str
    link: str


def questions(text: str) -> list[str]:
    """The questions an email asks (its own words, not the history it quotes, in Outlook's unmarked format
    too), whole, in order: each sentence (h0.mail.incoming.sentences: "18.12.", "am 9.", "z. B.", "e.g.",
    "1.250 €" end none) that ends with "?", up to its first "?"."""
    own = _without_quoted(strip_quoted(text[:MAX_READ_CHARS]))[:MAX_SCAN_CHARS]
    asked = []
    for sentence in sentences(own):
        mark = sentence.find("?", max(0, len(sentence) - 4))  # "?", "??", "?!", "? »"
        if mark >= 0 and _ENDS_ASKING.search(sentence):
            asked.append(_asked(" ".join(sentence[: mark + 1].split())))
    return list(dict.fromkeys(inert_inline(q) for q in asked if len(q) > 3))[:MAX_QUESTIONS]


def _without_quoted(text: str) -> str:
    """`text` without its quoted lines ("> …") and the blank lines just above each: what
    `re.sub(r"^\\s*>.*$", "", text, flags=re.MULTILINE)` leaves, in one pass over the lines (the
    pattern retried its `\\s*` from every line of a blank run: a body of blank lines took minutes)."""
    kept: list[str] = []
    blank: list[str] = []  # blank lines so far: dropped with a quoted line right below them
    for line in text.split("\n"):
        if not line or line.isspace():
            blank.append(line)
        elif line.lstrip().startswith(">"):
            kept.append("")  # the quoted line and the blank ones above it, gone; the line break after stays
            blank = []
        else:
            kept += blank
            kept.append(line)
            blank = []
    return "\n".join(kept + blank)


def _asked(sentence: str) -> str:
    """The question of a sentence that ends with "?": without the greeting or list marker before it, and
    from the colon that introduces it ("unser Controlling fragt nach: Could you split …?")."""
    question = _LIST_MARK.sub("", _GREETING.sub("", sentence))
    introduced = _INTRODUCED.search(question)
    return question[introduced.end() :] if introduced else question


def _lines(items: Sequence[ContextItem]) -> list[BriefingLine]:
    found: list[BriefingLine] = []
    for item in items:
        if item.kind not in KINDS:
            continue
        link = item.label if item.label.startswith("[[") else f"“{item.label}”"
        for raw in item.text.splitlines():
            parts = raw.removeprefix("Properties: ").split("; ") if raw.startswith("Properties: ") else [raw]
            for part in parts:
                line = part.strip().lstrip("-*#> ").strip()
                if len(line) >= 4:
                    found.append(BriefingLine(line[:MAX_LINE_CHARS], link))
    return found


def bearing(question: str, lines: Sequence[BriefingLine], vocabulary: dict[str, int]) -> list[BriefingLine]:
    """The lines that bear on a question: sharing its telling words, rarer words counting more."""
    wanted = {w for w in tokens(question) if w not in _ASKING}
    if not wanted:
        return []
    total = max(1, len(lines))
    scored = []
    for position, line in enumerate(lines):
        shared = wanted & set(tokens(line.line))
        if shared:
            score = sum(math.log(1 + total / vocabulary.get(w, 1)) for w in shared)
            scored.append((-score, position, line))
    return [line for _, _, line in sorted(scored)[:LINES_PER_QUESTION]]


def briefing(context: DraftContext | None, text: str, subject: str = "") -> str:
    """The owner's briefing for a reply written without a model (Markdown, above the cut-off)."""
    asked = questions(text) or ([inert_inline(f"{subject.strip()}?")] if subject.strip() else [])
    lines = _lines(context.items) if context is not None else []
    vocabulary: dict[str, int] = {}
    for line in lines:
        for word in set(tokens(line.line)):
            vocabulary[word] = vocabulary.get(word, 0) + 1
    out = [
        "> [!info] For you — H0's briefing (no model is set up, so H0 does not write the answer)",
        "> [FILL: your answer — write it from the lines below, then delete this briefing]",
    ]
    unanswered: list[str] = []
    for question in asked:
        found = bearing(question, lines, vocabulary)
        if not found:
            unanswered.append(question)
            continue
        out.append(f"> **“{question}”**")
        out += [f"> - {f.line} — {f.link}" for f in found]
    if unanswered:
        out.append("> Your notes do not answer:")
        out += [f"> - “{q}”" for q in unanswered]
    if not asked:
        out.append("> The email asks no question H0 could find.")
    return "\n".join(out)
