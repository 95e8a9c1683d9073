"""The sentences of a message's text, in English, German and French: where a sentence really ends.

A full stop ends far fewer sentences than it appears in. Read as real mail writes them:

- inside a number or a date ("1.250 €", "38.000", "18.12", "3.5 h", "e.g") it is no end: nothing but
  whitespace or the end of the text after a stop ends a sentence;
- before a lower-case word, a digit or a sign ("e.g. from finance", "z. B. die Logos", "no. 2026-114",
  "am 9. schicken", "3 p.m. on Thursday", "p. ex. la page", "approx. $40k") it is an abbreviation's or an
  ordinal's, since a sentence opens with a capital (after a quote or a bracket, maybe);
- before a capital it ends the sentence, except after an initial or a one-letter abbreviation ("J. Smith",
  "M. Dupont", "z. B. Logos"), after a title or an abbreviation that never closes a sentence ("Mr.",
  "Dr.", "Mme", "Nr.", "e.g.", "bzw.", "ca.", "p. ex.": `NEVER_LAST`), and after a German or French
  ordinal or date ("am 9. Dezember", "der 2. Entwurf", "le 18.12. Merci" aside) unless the capital opens
  a sentence (`OPENERS`: pronouns, articles, conjunctions, question words, the verbs a question opens
  with — "am 18.12. Kannst du …" is two sentences);
- "?", "!" and "…" runs end a sentence when whitespace (or the end) follows them ("?" inside a link does not);
- a line break ends a sentence, except a line wrapped by the sender's client: the line above ends without
  a stop and is long (60 characters or more: clients wrap at 72–78), or the line below opens in lower case;
- a blank line always ends one.

One pass over the text (each boundary looked at once, its neighbours by bounded look-behind): linear in
the text, whatever the text.
"""

from __future__ import annotations

import re

WRAPPED_LINE = 60  # a line this long with no stop at its end was wrapped by the sender's client
_BOUNDARY = re.compile(r"([.!?…]+)(\s*)|\n(\s*)")
_WORD_BEFORE = re.compile(r"([^\W_](?:[^\W_]|[.'’])*)$")
_ORDINAL = re.compile(r"\d{1,2}(?:\.\d{1,2})?")  # "9", "18.12": a German/French ordinal or day and month
_LIST_ITEM = re.compile(r"(?:[-*•–]|\d{1,2}[.)])\s")
_STOPS = ".!?:;…"
_OPENING = "\"'“„«‘‚(["

# Abbreviations that never close a sentence: a capital after them is a name or a noun, not a new sentence.
NEVER_LAST = frozenset(
    "mr mrs ms dr prof st mme mlle mm me hr fr frau herr nr no n° nos vs cf vgl e.g i.e eg ie z.b zb d.h dh u.a "
    "bzw ca approx incl inkl zzgl ggf evtl resp env ex p.ex sog gem lt ggü".split()
)
# Words that open a sentence and are never the noun an ordinal counts: "am 18.12. Kannst du …" is two.
OPENERS = frozenset(
    (
        # German
        "und aber oder denn doch also dann bitte danke ich du sie wir ihr er es man das die der den dem ein eine "
        "einen kannst kann können könnten könntest hast habt haben hätten hättest hätte ist sind war waren wird "
        "werden wäre wären soll sollen sollten passt geht gibt gilt bleibt schaffst wann wie was wo wer warum "
        "welche welcher welches wieso weshalb bis ab im zum zur auch noch leider gerne gern viele beste liebe "
        "lieber schöne herzliche mfg lg vg sag sagt meld melde schick schicke "
        # English
        "the a an i we you he she it they this that these those can could would will shall should is are was "
        "were do does did have has had please thanks thank and but or so what when where who why how which let "
        "also best kind regards cheers hi hello dear my our your "
        # French
        "je j tu il elle on nous vous ils elles le la les l un une est pouvez peux peut pourriez pourrais pourrions "
        "merci et mais ou donc quand comment quel quelle quels quelles pourquoi où qui bonne cordialement bien "
        "bonjour salut avez as ai sommes êtes seriez serais auriez aurais c ce cela ça dites dis"
    ).split()
)


def sentences(text: str) -> list[str]:
    """The sentences of `text`, in order, each with its own end ("?", "!", "." runs) and its line breaks
    kept as written (blank ones dropped)."""
    found: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if match.group(1) is not None:
            end = match.end(1) if _stop_ends(text, match) else None
        else:
            end = match.start() if _line_ends(text, match.start(), match.end()) else None
        if end is None:
            continue
        piece = text[start:end].strip()
        if piece:
            found.append(piece)
        start = match.end()
    rest = text[start:].strip()
    if rest:
        found.append(rest)
    return found


def _stop_ends(text: str, match: re.Match[str]) -> bool:
    """Whether the run of stops in `match` (and the whitespace after it) ends a sentence."""
    stops, space = match.group(1), match.group(2)
    after = match.end()
    if after < len(text) and not space:
        return False  # "1.250", "18.12", "e.g", "?q=1": inside a word, a number or a link
    if "?" in stops or "!" in stops or "…" in stops or "..." in stops or after >= len(text) or "\n" in space:
        return True
    following = text[after]
    if following in _OPENING and after + 1 < len(text):
        following = text[after + 1]  # "… today. (See below.)", "… as said. „Passt das?“"
    if not following.isalpha() or following.islower():
        return False  # "e.g. from", "no. 2026", "approx. $40k", "le 18.12. ?": an abbreviation, an ordinal, a number
    word = _word_before(text, match.start())
    if len(word) == 1 and word.isalpha() or word.casefold() in NEVER_LAST:
        return False  # "J. Smith", "M. Dupont", "z. B. Logos", "Dr. Berg"
    if _ORDINAL.fullmatch(word):
        return _next_word(text, after).casefold() in OPENERS  # "am 9. Dezember" / "am 18.12. Kannst du"
    return True


def _line_ends(text: str, at: int, after: int) -> bool:
    """Whether the line break at `at` (with the whitespace after it, to `after`) ends a sentence."""
    if "\n" in text[at + 1 : after] or after >= len(text):
        return True  # a blank line, or the end
    line = text[text.rfind("\n", 0, at) + 1 : at].rstrip()
    if not line or line[-1] in _STOPS or _LIST_ITEM.match(text, after):
        return True
    following = text[after]
    if following.islower() or following.isdigit():
        return False  # "… the updated quote by the\n9th?": a wrapped line goes on
    return not (following.isalpha() and len(line) >= WRAPPED_LINE)


def _word_before(text: str, at: int) -> str:
    """The word just before position `at` ("e.g", "z", "18.12", "Mme"), looked for in the 24 characters before."""
    found = _WORD_BEFORE.search(text, max(0, at - 24), at)
    return found.group(1).strip(".'’") if found else ""


def _next_word(text: str, at: int) -> str:
    end = at
    while end < len(text) and end - at < 24 and text[end].isalpha():
        end += 1
    return text[at:end]
