"""What a text is about, as keys a note and an email can share: a note's names (its title and aliases),
codes (`INV-2041`, `PO-88/3`), and capitalised names (`Quanta Dashboard`, `Brightline`).

A note's keys are computed once, when the index reads the note (h0.vault.index.extract), and kept in
the index's `entities` table; an email's keys are computed when a reply's context is assembled, and a
note is about the email when they share a key (h0.vault.index.about). Shared common words never
count: a capitalised word must be rare in the vault to count alone (the caller checks how many notes
hold it), and weekdays, months, greetings and sentence openers are never names.

Keys are lower-cased and their words joined by one space, so "Quanta  dashboard" and "quanta
dashboard" are the same key. Kinds: NAME (a note's title or alias, matched against any phrase of the
email, capitalised or not) and ENTITY (a code or a capitalised name, matched against the email's own).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

NAME = "n"
ENTITY = "e"
MAX_KEYS = 300  # per note: a long note is known by its first names and codes
MAX_PHRASE_WORDS = 4  # a name longer than this is matched by its capitalised runs only
MIN_NAME_CHARS = 3
MAX_PHRASE_TEXT = 6_000

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_CODE = re.compile(
    r"(?<![\w-])(?=[\w/-]*\d)(?=[\w/-]*[^\W\d_])[^\W_]+(?:[-/][^\W_]+)+(?![\w-])"  # INV-2041, PO-88/3, A-12
    r"|(?<![\w-])[A-Z]{2,}\d{2,}(?![\w-])",  # PO12345
    re.UNICODE,
)
# Every code holds a digit and lies inside one run of [\w/-] characters, whose ends its look-arounds cannot see past:
# the pattern need only be tried inside the runs that hold a digit (h0.vault.index.entities._codes_in).
_DIGIT = re.compile(r"\d")
_RUN_FROM = re.compile(r"[\w/-]*")
_SENTENCE_END = re.compile(r"[.!?:;\n\r\"“(\[]\s*$")
# A list item's first word is capitalised because it opens the item ("- Budget: 38.000 €", "1. Lieferzeit"), not
# because it is a name: an item's marker at a line's start stands for the start of a sentence (for a lone word).
_ITEM_START = re.compile(r"(?:^|[\n\r])[ \t]*(?:[-*+•–—]|\d{1,3}[.)])[ \t]+$")
_UPPER = "A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĖĘĚĜĞĠĢĤĦĨĪĮİĶĹĻĽŁŃŅŇŌŐŒŔŖŘŚŜŞŠŢŤŨŪŬŮŰŲŴŶŸŹŻŽ"
# A run of capitalised words on one line ("Northwind Product Summit", "Ben & Jerry"), found in one pass.
_RUN = re.compile(rf"(?<![\w'’-])[{_UPPER}][\w'’]*(?:[ \t]+(?:&[ \t]+)?[{_UPPER}][\w'’]*)*")
_LAST_WORD = re.compile(r"([^\W\d_]+)[\s,]*$")
# Capitalised, yet not a name: calendar words, greetings, openers, pronouns (en, de, fr).
# fmt: off
NOT_NAMES = frozenset("""
monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec today tomorrow yesterday
montag dienstag mittwoch donnerstag freitag samstag sonntag januar februar märz mai juni juli oktober dezember
lundi mardi mercredi jeudi vendredi samedi dimanche janvier février mars avril juin juillet août
hi hello hey dear thanks thank regards best cheers kind warm many please sorry yes no ok okay
hallo liebe lieber sehr geehrte geehrter grüße gruss viele danke bonjour salut merci cordialement madame monsieur
i im i'm i’m we you he she it they me my our your his her their this that these those there here
the a an and or but if so as at by for from in into of on to with about after before re fwd fw aw
mr mrs ms dr prof herr frau mme mlle gmbh ltd inc llc ag sa sarl corp plc bv co kg
""".split())
# fmt: on
GREETING_WORDS = frozenset("hi hello hey dear hallo liebe lieber bonjour salut guten morning".split())


def normal(text: str) -> str:
    """One key for a phrase: NFKC, case-folded, words joined by one space."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def _codes_in(text: str) -> Iterator[re.Match[str]]:
    """`_CODE.finditer(text)`, the same matches in the same order, tried only inside the runs of [\\w/-]
    characters that hold a digit (a mail's text holds few: the pattern is costly at every position)."""
    end = 0
    backwards = ""
    for digit in _DIGIT.finditer(text):
        at = digit.start()
        if at < end:
            continue  # in the run just searched
        backwards = backwards or text[::-1]
        start = len(text) - _run_end(backwards, len(text) - 1 - at)
        end = _run_end(text, at)
        yield from _CODE.finditer(text, start, end)


def _run_end(text: str, at: int) -> int:
    run = _RUN_FROM.match(text, at)
    return run.end() if run is not None else at


def codes(text: str) -> set[str]:
    """The codes in a text (`INV-2041`, `PO12345`), as keys."""
    return {normal(m.group()) for m in _codes_in(text)} - {""}


def _without_codes(text: str) -> str:
    """`_CODE.sub(" ", text)`."""
    kept: list[str] = []
    last = 0
    for match in _codes_in(text):
        kept += (text[last : match.start()], " ")
        last = match.end()
    kept.append(text[last:])
    return "".join(kept)


def capitalised(text: str) -> set[str]:
    """Capitalised names in a text: each maximal run of capitalised words that does not open a
    sentence or follow a greeting ("Quanta Dashboard"), and its first word alone ("quanta")."""
    found: set[str] = set()
    for match in _RUN.finditer(text):
        words = _WORD.findall(match.group())
        before = text[max(0, match.start() - 24) : match.start()]
        previous = _LAST_WORD.search(before)
        # "Could you…" opens a sentence, "Hi Felix" greets: capitalised for another reason than a name.
        skip = not before.strip() or bool(_SENTENCE_END.search(before[-3:]))
        # An item opening with one capitalised word ("- Budget: …") opens with a word; with several ("- Quanta
        # Dashboard beta"), with a name.
        skip = skip or (len(words) == 1 and bool(_ITEM_START.search(before)))
        skip = skip or (previous is not None and previous.group(1).casefold() in GREETING_WORDS)
        kept: list[str] = []
        for word in words:
            folded = word.casefold()
            if not skip and folded not in NOT_NAMES and not word.isdigit():
                kept.append(word)
            skip = folded in GREETING_WORDS
        words = kept
        if len(words) > 1:
            found.add(normal(" ".join(words)))
        if words and len(words[0]) >= 3:  # "Quanta" of "Quanta Dashboard"; not "Product" of "Northwind Product Summit"
            found.add(normal(words[0]))
    return {key for key in found if key and key not in NOT_NAMES}


def text_entities(text: str) -> set[str]:
    """An email's (or any text's) ENTITY keys: its codes and capitalised names (looked for in the text
    with its codes blanked out: `codes(text) | capitalised(_without_codes(text))`, in one pass of the
    code pattern, the costlier of the two)."""
    found: set[str] = set()
    kept: list[str] = []
    last = 0
    for match in _codes_in(text):
        found.add(normal(match.group()))
        kept += (text[last : match.start()], " ")
        last = match.end()
    kept.append(text[last:])
    return (found - {""}) | capitalised("".join(kept))


def phrase_words(text: str) -> list[str]:
    """The words `phrases` makes its runs of: those of the text's first MAX_PHRASE_TEXT characters, as keys."""
    words: list[str] = _WORD.findall(unicodedata.normalize("NFKC", text[:MAX_PHRASE_TEXT]).casefold())
    return words


def phrases(text: str, most: int = MAX_PHRASE_WORDS) -> set[str]:
    """Every run of 1 to `most` words of a text's first MAX_PHRASE_TEXT characters, as keys (what a
    note's NAME is looked up among: an email says what it is about early)."""
    words = phrase_words(text)
    found: set[str] = set(words) if most >= 1 else set()
    for size in range(2, most + 1):  # each run of `size` words: the word lists shifted 0…size-1, zipped
        found.update(map(" ".join, zip(*(words[shift:] for shift in range(size)), strict=False)))
    return found


@dataclass(frozen=True, slots=True)
class Names:
    """The NAME keys of a set of notes, and the first word of each (a phrase can be one only if it starts so)."""

    keys: frozenset[str]
    firsts: frozenset[str]

    @classmethod
    def of(cls, keys: Iterable[str]) -> Names:
        found = frozenset(keys)
        return cls(found, frozenset(key.split(" ", 1)[0] for key in found))


def named(words: list[str], names: Names) -> set[str]:
    """The runs of 1 to MAX_PHRASE_WORDS of these words (`phrase_words`) that are among `names`: the same as
    `phrases(text) & names.keys`, without making every run (only those starting with a name's first word)."""
    found: set[str] = set()
    for at, word in enumerate(words):
        if word in names.firsts:
            for size in range(1, min(MAX_PHRASE_WORDS, len(words) - at) + 1):
                run = " ".join(words[at : at + size])
                if run in names.keys:
                    found.add(run)
    return found


def note_keys(title: str, aliases: Iterable[str], meta: str, body: str) -> list[tuple[str, str]]:
    """A note's (key, kind) pairs: its title and aliases as NAMEs (and their words as ENTITYs), the
    codes and capitalised names of its frontmatter values and body as ENTITYs."""
    keys: dict[str, str] = {}
    names = [normal(name) for name in [title, *aliases]]
    for key in names:
        if len(key) >= MIN_NAME_CHARS and len(key.split()) <= MAX_PHRASE_WORDS and key not in NOT_NAMES:
            keys.setdefault(key, NAME)
    for key in names:
        for word in key.split():
            if len(word) >= 3 and word not in NOT_NAMES and not word.isdigit():
                keys.setdefault(word, ENTITY)
    for line in meta.splitlines():  # a capitalised frontmatter value is a name (`company: Brightline GmbH`)
        if line[:1].isupper() and len(line) <= 60:
            words = [w for w in normal(line).split() if w not in NOT_NAMES and not w.isdigit()]
            if words:
                keys.setdefault(" ".join(words), ENTITY)
                if len(words[0]) >= 3:  # "Brightline" of "Brightline GmbH", never "product" of "Head of Product"
                    keys.setdefault(words[0], ENTITY)
    for key in sorted(codes(f"{meta}\n{body}")) + sorted(capitalised(_without_codes(body))):
        keys.setdefault(key, ENTITY)
        if len(keys) >= MAX_KEYS:
            break
    return list(keys.items())
