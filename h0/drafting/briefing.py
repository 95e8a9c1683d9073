"""Rules mode's draft body: an honest briefing for the owner, not a holding reply.

Without a model H0 cannot write the answer, but it can put what the owner's notes say next to each
question the email asks (`answers`): for every question, the lines of the notes in the context that
answer it, each with where it comes from, and the questions the notes do not answer. The whole block is
marked for the owner and opens with a `[FILL: …]` placeholder, so the draft cannot be sent until the
owner has written the answer and removed it.

A line answers a question when it shares the question's telling words (rarer words counting more; a
property line also by its note's title: "date: 2026-03-02" of [[Kranich Kickoff]] speaks of the kickoff,
of nothing else) and holds what the question asks for (h0.drafting.vocabulary): a date for "when", an
amount for "how much", a number for "how many". When the sender's People note says their `language:`,
the question's words are read in it and also find the same business terms in the owner's other
languages ("Tagessatz" finds "Day rate"). Lines come from the notes the context carries (the sender's
People note with its properties, the notes it links to, related notes, the profile) — which of their
commercial facts a reply may see is decided there (h0.drafting.commercial) — and from the owner's past
replies, line by line in her own words ("your sent mail of 2026-11-15, “Invoice”" is where a line comes
from, never the line). A request to meet is answered by the calendar (the times the draft proposes, kept
current while it waits: h0.handlers.reschedule), never by a note.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from h0.calendar.phrases import asks_to_meet
from h0.drafting.context import ContextItem, DraftContext
from h0.drafting.knowledgenotes import tokens
from h0.drafting.replytext import split_reply, strip_quoted
from h0.drafting.vocabulary import DATE, answer_kind, answers_kind, concepts, known, line_concepts, words
from h0.drafting.voice import language_of
from h0.mail.incoming.htmltext import inert_inline
from h0.mail.incoming.sentences import sentences

KINDS = ("person", "linked", "related", "profile", "past_reply", "similar_reply")
REPLY_KINDS = ("past_reply", "similar_reply")
MAX_QUESTIONS = 5
LINES_PER_QUESTION = 3
TERM_WEIGHT = 2.0  # a business term the vocabulary finds in another language counts like a fairly rare word
WEAKEST = 1 / 3  # a line scoring under a third of the best line's shares a word by chance
MAX_LINE_CHARS = 200
MAX_SCAN_CHARS = 20_000
MAX_READ_CHARS = 100_000  # of the email, read for its own words (its quoted history cut)
_LIST_MARK = re.compile(r"^(?:[-*•–]|\d{1,2}[.)])\s+")
# A lead-in to the question: "quick q: would …?", "unser Controlling fragt nach: Could you …?" (3 words on at least).
_INTRODUCED = re.compile(r"^(?:[^\s?:]+\s+){0,6}?[^\s?:]+:\s+(?=\S+\s+\S+\s+\S)")
_ENDS_ASKING = re.compile(r"\?[?!\s»”\"')]*$")
_GREETING = re.compile(
    r"^(?:hi|hello|hey|dear|hallo|liebe[r]?|bonjour|salut)\b[^,!?—–]{0,40}(?:[,!—–]|\s-\s)\s*", re.IGNORECASE
)
_SENT_HEADER = re.compile(r"^Sent \S+ to .{0,300}:$")  # h0.drafting.context's line above a past reply's text
# Words every question has: they say nothing about what the answer is.
_ASKING = frozenset(
    "what when where which who why how could would can will did does is are was were do you your our we "
    "please know tell let still again also any there wann wie was wer welche kannst können könnten hast haben "
    "ist sind gibt passt bitte noch schon dein deine ihr ihre quand comment quel quelle quels qui est-ce "
    "pouvez peux peut avez votre vos ton tes toujours".split()
)
_CURRENCIES = frozenset("eur euro euros usd gbp chf".split())
CALENDAR_LINE = "a request to meet: the reply proposes times from your calendar whenever H0 can read it"


@dataclass(frozen=True, slots=True)
class BriefingLine:
    line: str
    link: str  # "[[Dana Rivera]]", or where a past reply's line comes from
    path: str | None = None  # the vault note it comes from
    title: str = ""  # a property line's note title (what the property speaks of)
    language: str | None = None  # its note's language, by its common words (None: cannot tell)


@dataclass(frozen=True, slots=True)
class Answer:
    """One question of the email and the lines of the owner's notes that answer it (none: not answered)."""

    question: str
    kind: str  # "when", "how much", "how many", "meeting" or ""
    lines: tuple[BriefingLine, ...] = ()


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
    """Every line the context's notes and past replies could answer with, a sentence at a time."""
    found: list[BriefingLine] = []
    for item in items:
        if item.kind not in KINDS:
            continue
        link = item.label if item.label.startswith("[[") else f"“{inert_inline(item.label)}”"
        language = language_of(item.text)
        if item.kind in REPLY_KINDS:
            found += [BriefingLine(line, link, item.path, "", language) for line in _reply_lines(item.text)]
            continue
        title = item.label.strip("[]").rsplit("/", 1)[-1]
        for raw in item.text.splitlines():
            if raw.startswith("Properties: "):
                properties = [p.strip() for p in raw[12:].split("; ") if p.strip()]
                found += [BriefingLine(p, link, item.path, title, language) for p in properties]
                continue
            for sentence in sentences(raw.strip().lstrip("-*#> ").strip()):
                if len(sentence) >= 4:
                    found.append(BriefingLine(sentence[:MAX_LINE_CHARS], link, item.path, "", language))
    return found


def _reply_lines(text: str) -> list[str]:
    """A past reply's own words, a sentence at a time: no header line, greeting or sign-off."""
    lines = text.splitlines()
    if lines and _SENT_HEADER.match(lines[0].strip()):
        lines = lines[1:]
    body = split_reply("\n".join(lines)).body
    return [s[:MAX_LINE_CHARS] for line in body.splitlines() for s in sentences(line.strip().lstrip("-*> ").strip())]


def bearing(
    question: str, lines: Sequence[BriefingLine], vocabulary: dict[str, int], language: str | None = None
) -> list[BriefingLine]:
    """The lines that answer a question: holding what it asks for (a date, an amount, a number) and sharing
    its telling words (or, read in the sender's `language`, its business terms), rarer words counting more.
    The date a question names is what it asks about, not its subject ("by Friday" shares nothing with
    "Monday to Friday"); a property line speaks of its note, so its note's title counts only when the
    question names the whole title ("date: 2026-03-02" of [[Kranich Kickoff]] answers "When was the Kranich
    kickoff?", never "When is the beta launch?")."""
    kind = answer_kind(question)
    subject = DATE.sub(" ", question)
    named = concepts(words(subject), language)
    telling = _telling(subject)
    wanted = {w for w in telling if not known(w, language)}  # a known term: its concept says what it means
    if not wanted and not named:
        return []
    total = max(1, len(lines))
    scored = []
    for position, line in enumerate(lines):
        if not answers_kind(kind, line.line):
            continue
        own = _telling(line.line)
        title = _telling(line.title)
        if title and title <= telling:
            own |= title
        shared = wanted & own
        terms = named & line_concepts(line.line, line.language)
        if not shared and not terms:
            continue
        score = sum(math.log(1 + total / vocabulary.get(w, 1)) for w in shared) + TERM_WEIGHT * len(terms)
        scored.append((-score, position, line))
    best = -min(scored)[0] if scored else 0.0
    return [line for score, _, line in sorted(scored)[:LINES_PER_QUESTION] if -score >= best * WEAKEST]


def _telling(text: str) -> set[str]:
    """The words of a question or a line that say what it is about: no question words, no numbers or
    currencies (a shared "2026" or "EUR" says nothing of the subject)."""
    return {w for w in tokens(text) if w not in _ASKING and not w.isdigit() and w not in _CURRENCIES}


def answers(context: DraftContext | None, text: str, subject: str = "", language: str | None = None) -> list[Answer]:
    """Each question the email asks (its subject when it asks none) and the lines that answer it."""
    asked = questions(text) or ([inert_inline(f"{subject.strip()}?")] if subject.strip() else [])
    lines = _lines(context.items) if context is not None else []
    vocabulary: dict[str, int] = {}
    for line in lines:
        for word in _telling(f"{line.line} {line.title}"):
            vocabulary[word] = vocabulary.get(word, 0) + 1
    found: list[Answer] = []
    for question in asked:
        if asks_to_meet(question):  # the times are the calendar's, kept current while the draft waits
            found.append(Answer(question, "meeting", (BriefingLine(CALENDAR_LINE, "your calendar"),)))
        else:
            found.append(Answer(question, answer_kind(question), tuple(bearing(question, lines, vocabulary, language))))
    return found


def briefing(context: DraftContext | None, text: str, subject: str = "", language: str | None = None) -> str:
    """The owner's briefing for a reply written without a model (Markdown, above the cut-off). `language`:
    the sender's, from their People note (None: their words are matched as written)."""
    found = answers(context, text, subject, language)
    out = [
        "> [!info] For you — H0's briefing (no model is set up, so H0 does not write the answer)",
        "> [FILL: your answer — write it from the lines below, then delete this briefing]",
    ]
    for answer in found:
        if answer.lines:
            out.append(f"> **“{answer.question}”**")
            out += [f"> - {inert_inline(f.line)} — {f.link}" for f in answer.lines]
    unanswered = [a.question for a in found if not a.lines]
    if unanswered:
        out.append("> Your notes do not answer:")
        out += [f"> - “{q}”" for q in unanswered]
    if not found:
        out.append("> The email asks no question H0 could find.")
    return "\n".join(out)
