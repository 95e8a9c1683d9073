"""Would the owner send this draft as it is? Judged against the reply they actually sent, by what a
person checks before pressing send — never by how many words the two share.

A draft is **send-ready** when none of these failures is found (each with its reason in words):

| failure | found when |
|---|---|
| placeholder | the draft holds H0's `[FILL: …]`, its template marker, or a template's own (`[Your name]`, `{{date}}`, `XX:XX`) |
| missed ask | it leaves out what the owner's reply gave: a fact of theirs the email did not already hold, most of what their reply was about or a whole paragraph of it, a yes (it answers nothing where they agreed); or it stops mid-sentence |
| wrong fact | it states an amount, date, time, weekday, number, code, address or link that neither the email, the owner's notes given to it, nor the owner's reply holds |
| wrong commitment | it declines where the owner did not ("unfortunately", "leider", "ne … pas possible", a negated "can", "works", "passt"), or agrees where the owner declined |
| voice | it is in another language than the owner's reply, or uses du/Sie, tu/vous the other way |
| padding | it is padded: two stock phrases or more the owner did not write ("I hope this email finds you well", "n'hésitez pas"), or more than 2.5 times the owner's length and 40 words longer |

Facts are compared in one form whatever their writing (h0.drafting.mailfacts): "1.100 €" in a draft says
what "1,100 EUR" said. What the owner's reply was about is its telling words (h0.drafting.knowledgenotes.tokens),
compared by their first five letters, so "screens" finds "screen" and "Entwürfe" finds "Entwurf"; a draft
in another language is judged on its facts and voice only. A text too short for its common words
(h0.drafting.voice.language_of) is told by its function words ("das", "mir" against "that", "me"). A greeting or sign-off of the draft's own
("Hello" for "Hi", "Best regards" for "Best") is a light edit, never a failure, and a signature block
under the sign-off is the owner's, not part of what the reply says. Plain numbers under 10 are counts
people write either way ("two", "2") and are not compared. Saying yes or no is read from phrase lists of
each language's grammar of agreeing and refusing; padding from the stock phrases of padded mail.

Every text is read up to MAX_CHARS: a model's answer is bounded long before that, and a hostile one costs
no more than that.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum

from h0.drafting.knowledgenotes import tokens
from h0.drafting.mailfacts import Fact, FactSet, facts
from h0.drafting.register import LANGUAGE_NAMES
from h0.drafting.replytext import looks_like_sign_off, split_reply
from h0.drafting.voice import language_of
from h0.mail.compose.drafts import PLACEHOLDER, TEMPLATE_MARKER

MAX_CHARS = 20_000
STEM = 5
COVERED = 0.5  # of the owner's telling words, the share a draft must hold
PADDED_RATIO, PADDED_WORDS = 2.5, 40
SMALL_COUNT = 10


class Failure(StrEnum):
    MISSED_ASK = "missed ask"
    WRONG_FACT = "wrong fact"
    WRONG_COMMITMENT = "wrong commitment"
    VOICE = "voice"
    PADDING = "padding"
    PLACEHOLDER = "placeholder"


@dataclass(frozen=True, slots=True)
class Finding:
    failure: Failure
    detail: str  # for the owner, in words


@dataclass(frozen=True, slots=True)
class Verdict:
    findings: tuple[Finding, ...]

    @property
    def send_ready(self) -> bool:
        return not self.findings

    @property
    def failures(self) -> tuple[Failure, ...]:
        return tuple(dict.fromkeys(f.failure for f in self.findings))


# A template's own placeholders, as models and mail templates write them (H0's are PLACEHOLDER).
_TEMPLATE_HOLES = re.compile(
    r"\[(?:your|insert|add|enter|ihr|ihre|dein|deine|votre|ton|ta)\b[^\[\]\n]{0,60}\]"
    r"|\[(?:name|date|time|amount|company|link|number|recipient|datum|uhrzeit|betrag|firma|nom|montant|heure|lien"
    r"|tbd|todo|x+|\.\.\.|…)\]"
    r"|\{\{[^{}\n]{1,60}\}\}|<(?:insert|your)\b[^<>\n]{0,60}>|\bX{2,}(?:[.,:]X{2,})*\b",
    re.IGNORECASE,
)
# Saying no, in the three languages' grammar: a refusal word, or a negated "can", "works", "fits".
_DECLINES = re.compile(
    r"\b(?:unfortunately|regrettably|i'?m afraid|can'?t|cannot|won'?t be able|will not be able|(?:not|un)able to"
    r"|(?:is|isn'?t) not possible|not possible|doesn'?t work|does not work|won'?t work|will not work"
    r"|(?:have to|must) (?:decline|pass)|no longer works)\b"
    r"|\b(?:leider|bedauerlicherweise|nicht möglich|unmöglich|absagen)\b"
    r"|\b(?:kann|können|könnte|schaffe|schaffen|geht|klappt|passt)\b[^.!?\n]{0,25}?\bnicht\b"
    r"|\b(?:malheureusement|hélas|pas possible|impossible)\b"
    r"|\bne\s(?:[\w']+\s){0,2}?(?:peux|pourrai|pourrons|pouvons|convient|marche|va)\s(?:pas|plus)\b",
    re.IGNORECASE,
)
# Saying yes: an agreeing word or phrase of each language (a refusal above wins over it).
_AGREES = re.compile(
    r"\b(?:yes|yep|sure|of course|works|fine|sounds good|agreed|happy to|glad to|okay|ok|no problem|perfect|great"
    r"|suits|can do|confirm(?:ed)?)\b"
    r"|\b(?:ja|gerne?|passt|klappt|einverstanden|in ordnung|okay|ok|kein problem|prima|super|perfekt|mache ich"
    r"|machen wir|kann ich|bestätigt|bestätige|geht (?:bei mir|klar|für mich|in ordnung))\b"
    r"|\b(?:oui|d'accord|ok|volontiers|avec plaisir|parfait|ça marche|ça me va|me convient|pas de souci"
    r"|pas de problème|entendu|très bien|je (?:vous |te )?confirme|confirmé)\b",
    re.IGNORECASE,
)
# The stock phrases of padded mail, per language; one is a courtesy, two are padding.
_FILLERS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bhope (?:this|my) (?:e-?mail|message|note) finds you",
        r"\b(?:i )?hope you(?:'re| are) (?:doing )?well",
        r"\bhope you(?:'ve| have) (?:had )?a (?:great|good|lovely|nice) (?:week|weekend|day)",
        r"\b(?:do not|don'?t) hesitate to",
        r"\bfeel free to (?:reach out|contact|get in touch|let me know)",
        r"\blet me know if you have any (?:other |further |more )?questions",
        r"\bthank you (?:so much |very much )?for (?:reaching out|your (?:e-?mail|message|patience|time))",
        r"\bi (?:just )?wanted to (?:reach out|follow up|touch base)",
        r"\blooking forward to (?:hearing from you|your (?:reply|response)|(?:our|continuing) (?:continued )?collaborat)",
        r"\b(?:always )?happy to help\b",
        r"\bich hoffe,? (?:es geht (?:dir|ihnen|euch) gut|diese (?:e-?mail|nachricht))",
        r"\b(?:zögere|zögern sie|zögert) nicht\b",
        r"\b(?:melde dich|melden sie sich|meldet euch) (?:gerne|jederzeit)",
        r"\bbei (?:weiteren )?fragen stehe ich\b",
        r"\bstehe ich (?:ihnen|dir|euch) (?:jederzeit |gerne )+zur verfügung",
        r"\b(?:vielen|herzlichen) dank für (?:deine|ihre|eure) (?:e-?mail|nachricht|geduld)",
        r"\bj'espère que (?:vous allez|tu vas) bien",
        r"\bj'espère que ce (?:message|mail|courriel)",
        r"\bn'hésite[zr]? pas\b",
        r"\bje reste à (?:votre|ta) (?:entière )?disposition",
        r"\bmerci (?:beaucoup )?pour (?:votre|ton) (?:message|mail|courriel|patience)",
        r"\bdans l'attente de (?:votre|ta) réponse",
    )
)
_DU = re.compile(r"\b(?:du|dich|dir|dein|deine[mnrs]?|euch|euer|eure[mnrs]?)\b", re.IGNORECASE)
_SIE = re.compile(r"(?<![.!?:\n]\s)(?<![.!?:\n])(?<!^)\b(?:Sie|Ihnen|Ihr|Ihre[mnrs]?)\b")
_TU = re.compile(r"\b(?:tu|te|toi|ton|ta|tes)\b|\bt'", re.IGNORECASE)
_VOUS = re.compile(r"\b(?:vous|votre|vos)\b", re.IGNORECASE)
_NOT_WORDS = re.compile(  # addresses, links and domains; every repetition bounded (linear on any text)
    r"[^\s@]{0,64}@\S{1,300}|\b(?:https?://|www\.)\S{1,300}|\b(?:[\w-]{1,63}\.){1,6}[a-z]{2,6}\b(?:/\S{0,300})?"
)
_ENDS = tuple(".!?…:;)\"'»”›*_")
# Words that carry no content of their own, by language: what a reply "was about" is the rest, and in a
# text too short for h0.drafting.voice.language_of they tell its language.
# fmt: off
FUNCTION_WORDS_BY_LANGUAGE = {
    "en": frozenset("""
i me my mine we us our ours you your yours he him his she her it its they them their a an the and or but if so
to of in on at by for with from as is am are was were be been being do does did have has had will would can
could shall should may might must not no yes that this these those there here what which who when where how
why all any some just also only very more much still again then than about into over up out let lets i'll i'd
else everything anything something
""".split()),
    "de": frozenset("""
ich mich mir mein meine meinen meinem meiner du dich dir dein deine deinen wir uns unser unsere ihr euch euer
eure sie ihnen ihre er es man der die das den dem des ein eine einen einem einer und oder aber wenn dass als
wie so zu von vom zum zur mit bei bis für auf an am im in aus nach über um ist bin bist sind war waren sein
hat habe hast haben wird werde wirst werden kann kannst können muss soll noch schon auch nur sehr mal gerne
gern ja nein nicht kein keine hier da dann lass alles andere anderen anderes etwas
""".split()),
    "fr": frozenset("""
je me moi mon ma mes tu te toi ton ta tes il elle on nous vous votre vos ils elles leur le la les un une des
du de et ou mais si que qui quoi quand comme pour par avec sans sur sous dans en au aux ce cet cette ces est
suis es sont était ai as avons avez ont être avoir fait peux peut pouvez très bien aussi encore déjà ne pas
plus cela ça ceci tout tous toute toutes
""".split()),
}
# fmt: on
FUNCTION_WORDS = frozenset().union(*FUNCTION_WORDS_BY_LANGUAGE.values())


def judge_draft(draft: str, reference: str, *, email: str = "", known: str = "") -> Verdict:
    """The failures of `draft` against `reference` (what the owner sent), for an `email` (its words, the
    history it quotes included) and `known` (the owner's notes the draft was given)."""
    draft, reference, email, known = (t[:MAX_CHARS] for t in (draft, reference, email, known))
    if not draft.strip():
        return Verdict((Finding(Failure.MISSED_ASK, "no draft: H0 would not have written a reply"),))
    ours, theirs = split_reply(_signed_off(draft)), split_reply(_signed_off(reference))
    found: list[Finding] = []
    found += _placeholders(draft)
    ours_lang, theirs_lang = _language(ours.body or draft), _language(theirs.body or reference)
    other_language = ours_lang is not None and theirs_lang is not None and ours_lang != theirs_lang
    if ours_lang is not None and theirs_lang is not None and other_language:
        mine, yours = LANGUAGE_NAMES.get(ours_lang, ours_lang), LANGUAGE_NAMES.get(theirs_lang, theirs_lang)
        found.append(Finding(Failure.VOICE, f"written in {mine}; you wrote {yours}"))
    elif (register := _register_change(ours.body, theirs.body)) is not None:
        found.append(Finding(Failure.VOICE, register))
    found += _facts(draft, ours.body, theirs.body, email, known)
    if not other_language:
        found += _coverage(ours.body, theirs.body)
    if _cut_off(ours.body, ours.sign_off or ours.signed, theirs.body):
        found.append(Finding(Failure.MISSED_ASK, "it stops mid-sentence"))
    found += _commitment(ours.body, theirs.body)
    found += _padding(ours.body, theirs.body)
    return Verdict(tuple(found))


def _signed_off(text: str) -> str:
    """The text up to its sign-off and the name under it: a signature block after them (name, studio, phone
    number, with or without "-- ") is the owner's, not what the reply says."""
    lines = text.rstrip().split("\n")
    for index in range(len(lines) - 1, max(-1, len(lines) - 10), -1):
        if looks_like_sign_off(lines[index]):
            name = next((i for i in range(index + 1, len(lines)) if lines[i].strip()), None)
            return "\n".join(lines[: (name if name is not None else index) + 1])
    return text


def _language(text: str) -> str | None:
    """The text's language. In English, German and French, by their function words, a far longer list than
    h0.drafting.voice.language_of's common words (which read "My day rate is 1,100 EUR." as Dutch: "is");
    in other languages, or when too few function words tell, by language_of. Addresses, links, domains and
    H0's placeholders are no words of the draft's language."""
    text = _NOT_WORDS.sub(" ", PLACEHOLDER.sub(" ", text))
    found = language_of(text)
    words = [w.lower() for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text[:2_000])]
    counts = {lang: sum(w in vocab for w in words) for lang, vocab in FUNCTION_WORDS_BY_LANGUAGE.items()}
    ranked = sorted(counts, key=lambda lang: -counts[lang])
    best, second = ranked[0], ranked[1]
    told = best if counts[best] >= 2 and counts[best] > counts[second] else None
    if told is not None and (found is None or found == "nl" or found in FUNCTION_WORDS_BY_LANGUAGE):
        return told
    return found


def _placeholders(draft: str) -> list[Finding]:
    holes = [m.group(0) for m in PLACEHOLDER.finditer(draft)]
    holes += [line.strip() for line in draft.splitlines() if TEMPLATE_MARKER.match(line.strip())]
    holes += [m.group(0) for m in _TEMPLATE_HOLES.finditer(draft)]
    if not holes:
        return []
    shown = ", ".join(dict.fromkeys(h[:60] for h in holes[:5]))
    return [Finding(Failure.PLACEHOLDER, f"it still holds {shown}")]


def _counted(found: list[Fact]) -> list[Fact]:
    """The facts worth comparing: a plain number under SMALL_COUNT is a count, written either way."""
    return [f for f in found if not (f.kind == "number" and _small(f.value))]


def _small(value: str) -> bool:
    try:
        return float(value) < SMALL_COUNT
    except ValueError:
        return False


@functools.lru_cache(maxsize=64)
def _facts_of(text: str) -> tuple[Fact, ...]:
    """The facts of a text judged against many drafts (an email, the notes given): read once."""
    return tuple(facts(text))


def _facts(draft: str, ours: str, theirs: str, email: str, known: str) -> list[Finding]:
    in_email = FactSet(list(_facts_of(email)))
    in_draft = FactSet(facts(draft))
    said = _counted(facts(theirs))
    grounded = FactSet([*said, *_facts_of(email), *_facts_of(known)])
    out: list[Finding] = []
    missing = [f for f in said if not in_email.says(f) and not in_draft.says(f)]
    if missing:
        shown = ", ".join(dict.fromkeys(f.shown for f in missing[:4]))
        out.append(Finding(Failure.MISSED_ASK, f"your reply said {shown}; the draft does not"))
    invented = [f for f in _counted(facts(ours)) if not grounded.says(f)]
    if invented:
        shown = ", ".join(dict.fromkeys(f.shown for f in invented[:4]))
        out.append(
            Finding(Failure.WRONG_FACT, f"it says {shown}, which neither the email, your notes nor your reply say")
        )
    return out


def _stems(text: str) -> set[str]:
    """The telling words of a text by their first letters: neither function words nor saying yes or no
    (judged on their own: h0.drafting.sendready._commitment), nor numbers (facts are)."""
    text = _AGREES.sub(" ", _DECLINES.sub(" ", text))
    return {w[:STEM] for w in tokens(text) if not w.isdigit() and w not in FUNCTION_WORDS}


def _coverage(ours: str, theirs: str) -> list[Finding]:
    """Most of what the owner's reply was about, or a whole paragraph of it, missing from the draft."""
    have = _stems(ours)
    wanted = _stems(theirs)
    if len(wanted) >= 3 and len(wanted & have) < COVERED * len(wanted):
        missing = sorted(wanted - have)
        return [Finding(Failure.MISSED_ASK, f"it leaves out most of what you wrote about ({', '.join(missing[:5])}…)")]
    for paragraph in re.split(r"\n\s*\n", theirs):
        words = _stems(paragraph)
        if len(words) >= 3 and not words & have:
            shown = " ".join(paragraph.split())
            shown = shown if len(shown) <= 60 else shown[:59] + "…"
            return [Finding(Failure.MISSED_ASK, f"it leaves out what you wrote in “{shown}”")]
    return []


def _cut_off(body: str, signed: str | None, reference: str) -> bool:
    """A draft that ends mid-sentence (no sign-off, its last line neither punctuated nor a list item) where
    the owner's reply ended a sentence."""
    lines = [line.strip() for line in body.strip().splitlines() if line.strip()]
    theirs = [line.strip() for line in reference.strip().splitlines() if line.strip()]
    if signed or not lines or not theirs:
        return False
    last = lines[-1]
    listed = last.startswith(("-", "*", "•", "–")) or last[:3].rstrip(".)").isdigit()
    return not listed and not last.endswith(_ENDS) and theirs[-1].endswith(_ENDS)


def _register(text: str, informal: re.Pattern[str], formal: re.Pattern[str]) -> str | None:
    casual, polite = bool(informal.search(text)), bool(formal.search(text))
    return "informal" if casual and not polite else "formal" if polite and not casual else None


def _register_change(ours: str, theirs: str) -> str | None:
    for informal, formal, words in ((_DU, _SIE, ("du", "Sie")), (_TU, _VOUS, ("tu", "vous"))):
        mine, yours = _register(ours, informal, formal), _register(theirs, informal, formal)
        if mine and yours and mine != yours:
            said, wrote = (words[0], words[1]) if mine == "informal" else (words[1], words[0])
            return f"it says “{said}” where you wrote “{wrote}”"
    return None


def _stance(text: str) -> str | None:
    return "declines" if _DECLINES.search(text) else "agrees" if _AGREES.search(text) else None


def _commitment(ours: str, theirs: str) -> list[Finding]:
    """No where the owner said yes (or yes where they said no); nothing at all where they said yes."""
    mine, yours = _stance(ours), _stance(theirs)
    if mine == yours or (mine is None and yours == "declines"):
        return []
    if mine is None:
        return [Finding(Failure.MISSED_ASK, "you said yes; the draft gives no answer")]
    if "declines" in (mine, yours):
        return [Finding(Failure.WRONG_COMMITMENT, f"it {mine} where you did not")]
    return []


def _padding(ours: str, theirs: str) -> list[Finding]:
    added = [p for p in _FILLERS if p.search(ours) and not p.search(theirs)]
    if len(added) >= 2:
        shown = "; ".join(f"“{m.group(0)}”" for p in added[:3] if (m := p.search(ours)))
        return [Finding(Failure.PADDING, f"stock phrases you did not write: {shown}")]
    mine, yours = len(ours.split()), len(theirs.split())
    if yours and mine > PADDED_RATIO * yours and mine - yours >= PADDED_WORDS:
        return [Finding(Failure.PADDING, f"{mine} words where you wrote {yours}")]
    return []
