"""Whether an email asks to meet, in English, German and French, and what it asks for (h0.calendar.when).

An email asks to meet when one of its sentences *requests* a time together, not when it mentions a
meeting ("Thanks for the call yesterday", "The meeting notes are in the folder"). A sentence requests one:

- by the phrases people ask with: "can we meet / find 30 minutes / hop on a call", "let's catch up",
  "do you have time for a coffee", "would you have an hour", "I'd love to grab a coffee", "when works for
  you", "your availability"; "können wir telefonieren", "lass uns treffen", "hast du Zeit", "wann passt
  es dir", "Termin finden"; "auriez-vous un créneau", "on se prend un café", "peut-on s'appeler",
  "pourrions-nous caler un rendez-vous", "tu as une demi-heure";
- by asking whether the owner is free ("are you free", "bist du frei", "seriez-vous disponible") *for a
  time the sentence names* (a day, a part of the day, a length) or for a meeting: a bare "are you free?"
  is how a gift-card fraud opens, not a request to meet;
- by a question naming both a time and a meeting ("Would Tuesday morning work for a 45-minute call?",
  "Passt dir Freitagvormittag für ein Gespräch?") — unless it moves or confirms one ("Can we move the
  review to 3 p.m.?", "Is the kick-off still set for Dec. 4?": a meeting already arranged is the sender's
  to name) or asks who, what or how many about it ("Wie viele kommen zum Termin am 9. Dezember?").

A sentence about an invoice, a webinar recording or a call for papers asks for no meeting, and neither
does bulk mail (a newsletter, an unsubscribe line). The days, part of day and length are read from the
requesting sentences and the one after each when it asks nothing else ("Can we hop on a call today?
Half an hour should do."), never from the rest of the email. Anything not named means "the next working
days" and the owner's usual length, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from h0.calendar.when import (
    WEEKDAYS,
    names_a_time,
    requested_days,
    requested_minutes,
    requested_part,
)
from h0.mail.incoming.sentences import sentences

__all__ = [
    "WEEKDAYS",
    "MeetingAsk",
    "asks_to_meet",
    "meeting_ask",
    "next_working_days",
    "requested_days",
    "requested_minutes",
    "requested_part",
]

MAX_TEXT_CHARS = 4_000  # the ask is in the first lines of an email
SEARCH_WORKING_DAYS = 7  # without a day named: the next this-many working days

_MEETING = r"(?:call|chat|meeting|coffee|lunch|catch[ -]?up|video call|zoom|teams call|sync|session|kick-?off)"
_MEETING_FR = r"(?:appel|réunion|rendez-vous|rdv|café|déjeuner|point|visio|call|échange|entretien)"
_SOME = r"(?:[\w-]+ ){0,3}"  # "a quick", "some", "our weekly", "a one-hour"
_EN_VERBS = (
    rf"(?:meet|talk|chat|call|speak|catch[ -]?up|get together|hop on|jump on|sync up|find {_SOME}(?:time|slot|\d+|"
    rf"half an hour|an hour)|(?:grab|have|do|schedule|set up|book|arrange) {_SOME}(?:{_MEETING}|time|\d+ ?min|minutes|"
    rf"an hour|half an hour))"
)
_DE_VERBS = (
    r"(?:treffen|telefonieren|sprechen|besprechen|zusammensetzen|kurzschließen|zusammenkommen|uns sehen|"
    r"uns austauschen|uns unterhalten|einen call)"
)
_FR_VERBS = (
    rf"(?:(?:se|nous|vous|te|on) voir|parler|s'appeler|s’appeler|m'appeler|vous appeler|t'appeler|rencontrer|"
    rf"téléphoner|caler|fixer|trouver un (?:créneau|moment)|faire un point|prendre un café|échanger|"
    rf"(?:organiser|prévoir|planifier|programmer) (?:un|une) {_MEETING_FR})"
)
_MEETING_DE = r"(?:telefonat|gespräch|call|termin|treffen|kaffee|mittagessen|meeting|videocall|austausch|kick-?off)"
# A request to meet, in the words people use (see the module's docstring).
_REQUEST = re.compile(
    # English
    rf"\b(?:can|could|shall|should|may|might) (?:we|i)\b.{{0,40}}\b{_EN_VERBS}"
    rf"|\blet'?s\b.{{0,20}}\b(?:{_EN_VERBS}|{_MEETING})"
    rf"|\b(?:do|would|will) you have\b.{{0,30}}\b(?:time|a minute|a moment|an hour|half an hour|\d+ ?min|a slot)\b"
    rf"|\bhave you got\b.{{0,20}}\b(?:time|a minute|an hour)\b"
    rf"|\b(?:i'?d|i would|we'?d|we would) (?:love|like) to\b.{{0,20}}\b(?:{_EN_VERBS}|see you|have a {_MEETING})"
    rf"|\b(?:would you like|fancy|up for|care for)\b.{{0,20}}\b{_MEETING}"
    r"|\b(?:your|any) availability\b|\bwhen (?:are|would|will) you (?:be )?(?:free|available)|\bwhen you'?re free"
    r"|\b(?:what|which) (?:time|day|slot)s? (?:suits|works|would work|would suit)|\bwhen (?:suits|works) (?:you|for you)"
    r"|\bfind (?:a |some )?(?:time|slot)\b"
    rf"|\b(?:how|what) about\b.{{0,30}}\b{_MEETING}|\bwie wär(?:e es|'s) mit\b.{{0,30}}\b{_MEETING_DE}"
    rf"|\bque (?:dirais-tu|diriez-vous)\b.{{0,30}}\b{_MEETING_FR}"
    rf"|\b\d+\s*-?\s*(?:min|minutes?)\b.{{0,30}}\b{_MEETING}"
    rf"|\b(?:schedule|set up|book|arrange|organi[sz]e) (?:a|an|some)\b.{{0,20}}\b(?:{_MEETING}|time)\b"
    # German
    rf"|\b(?:können|könnten|sollen|sollten|wollen|wollten|möchten) (?:wir|sie)\b.{{0,50}}\b{_DE_VERBS}"
    rf"|\blass(?:t)? uns\b.{{0,40}}\b(?:{_DE_VERBS}|{_MEETING_DE})"
    r"|\b(?:hast du|haben sie|hättest du|hätten sie|habt ihr|hättet ihr)\b.{0,80}\bzeit\b|\bzeit für\b"
    r"|\bwann pass(?:t|en)\b|\btermin (?:finden|vereinbaren|ausmachen|machen|abstimmen)"
    # French
    r"|\b(?:auriez|avez|aurais|as)[- ](?:vous|tu)\b.{0,30}\b(?:créneau|moment|temps|une heure|une demi-heure|"
    r"\d+ ?min|disponibilités?|dispo)"
    r"|\b(?:vous|tu) (?:auriez|avez|aurais|as)\b.{0,30}\b(?:créneau|moment|temps|une heure|une demi-heure|\d+ ?min)"
    rf"|\b(?:peut-on|pourrait-on|pourrions-nous|pouvons-nous|pourriez-vous|pouvez-vous|on (?:peut|pourrait)|"
    rf"est-ce qu'on (?:peut|pourrait)|est-ce que nous pourrions|serait-il possible|est-il possible|ce serait "
    rf"possible)\b.{{0,40}}\b{_FR_VERBS}"
    rf"|\bon se (?:prend|fait|voit|cale|appelle|parle|retrouve)\b|\bquand (?:vous|te|t') ?(?:convient|conviendrait|"
    rf"arrange|irait)|\bça (?:te|vous) dit\b.{{0,20}}\b{_MEETING_FR}|\bvos disponibilités\b|\btes dispos?\b",
    re.IGNORECASE | re.DOTALL,
)
# "Are you free …", "bist du frei", "seriez-vous disponible": a request only for a time or a meeting named.
_AVAILABLE = re.compile(
    r"\b(?:are|would|will) you (?:be )?(?:free|available|around)\b"
    r"|\b(?:bist du|sind sie|seid ihr|wärst du|wären sie) .{0,20}\b(?:frei|verfügbar|da|erreichbar)\b"
    r"|\b(?:seriez|êtes|serais|es)[- ](?:vous|tu) (?:libre|disponible|dispo)|\b(?:vous êtes|tu es|tu serais|vous "
    r"seriez) (?:libre|disponible|dispo)",
    re.IGNORECASE,
)
_TO_DO = re.compile(r"\s+(?:to|pour|um|zu)\s+(\w+)", re.IGNORECASE)
_MEETING_VERB = re.compile(
    r"(?:meet|talk|chat|call|speak|catch|grab|join|hop|jump|get|have|discuss|go over|sync|parler|voir|appeler|"
    r"discuter|échanger|rencontrer|déjeuner|sprechen|telefonieren|treffen)",
    re.IGNORECASE,
)
_MEETING_NOUN = re.compile(rf"\b(?:{_MEETING}|{_MEETING_DE}|{_MEETING_FR}|workshop)\b", re.IGNORECASE)
# A meeting already arranged, moved or confirmed: "Can we move the review to 3 p.m.?", "Is the kick-off still set
# for Dec. 4?", "Bleibt es beim Termin am Donnerstag?" — its time is the sender's to name, not a new request.
_MOVES = re.compile(
    r"\b(?:move|moving|reschedule|postpone|push back|bring forward|still|as planned|confirm|verschieben|verlegen|"
    r"vorziehen|noch|weiterhin|wie geplant|bleibt es|bestätigen|décaler|déplacer|reporter|avancer|toujours|"
    r"comme prévu|confirmer)\b",
    re.IGNORECASE,
)
# The words that open a question asking what, who, where, why, how or how many (English, German, French):
# drafting's answer kinds ask them too (h0.drafting.vocabulary).
QUESTION_WORDS = (
    r"what|which|who|whom|whose|where|why|how|was|welche[rsnm]?|wer|wen|wem|wo|woher|wohin|warum|wieso|weshalb|"
    r"wie|que|qu'|quel(?:le)?s?|qui|où|pourquoi|comment|combien"
)
# A question that asks who, what or how many (not when) is about a meeting, not for one: "Wie viele kommen zum
# Termin am 9. Dezember?" — unless it proposes one: "How about a call on Thursday?", "Wie wäre es mit Freitag?".
_ASKS_ABOUT = re.compile(
    rf"^\W*(?:\w+\W+){{0,3}}?(?:{QUESTION_WORDS})\b(?!\s+(?:about|time|day|slot|"
    r"wäre|wär's|waere|dirais|diriez|works?|suits?))",
    re.IGNORECASE,
)
# Words that make a "call" or a "meeting" something other than a request to meet now: in the same sentence ...
_NOT_AN_ASK = re.compile(r"\b(?:invoice|webinar recording|call for papers)\b", re.IGNORECASE)
# ... or anywhere in the email (bulk mail).
_BULK = re.compile(r"\b(?:unsubscribe|newsletter|abbestellen|désabonner|désinscrire)\b", re.IGNORECASE)
_LANGUAGE_WORDS = {
    "de": frozenset(
        "und wir ich sie du können könnten nächste nächsten woche zeit hallo danke termin uns gerne gern für mit ist "
        "hast hättest hätten passt dir ihnen bitte grüße lass kurz".split()
    ),
    "fr": frozenset(
        "je vous tu nous on est pour une un le la les des du de se ou en il que qui au avec merci bonjour semaine "
        "demain avez auriez seriez serait peut pourrions cordialement créneau plutôt possible salut".split()
    ),
    "en": frozenset(
        "the and we you i can could would are is for with next week time thanks hi call free do have".split()
    ),
}
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)?")


@dataclass(frozen=True, slots=True)
class MeetingAsk:
    """An email's request to meet: the days it names (None: any of the next working days), a length, a part of
    the day, and the language to answer in."""

    days: tuple[date, ...] | None
    minutes: int | None
    said: str  # the words the days were read from ("next week", "Thursday or Friday"), or ""
    language: str = "en"  # "de", "fr": a rules reply proposes in the email's language
    part: str | None = None  # "morning", "afternoon", "evening", or None (any time of the working day)


def asks_to_meet(text: str) -> bool:
    """Whether the email's words ask to find a time to meet or talk."""
    return bool(_asking(text[:MAX_TEXT_CHARS]))


def meeting_ask(text: str, today: date) -> MeetingAsk | None:
    """The email's request to meet (None when it does not ask): which days, which part of them, how long."""
    head = text[:MAX_TEXT_CHARS]
    span = _asking(head)
    if not span:
        return None
    words = " ".join(span)
    days, said = requested_days(words, today)
    return MeetingAsk(days, requested_minutes(words), said, _language(head), requested_part(words))


def _asking(head: str) -> list[str]:
    """The sentences that request a meeting, each with the one after it when that one asks nothing else."""
    if _BULK.search(head) is not None:
        return []
    found = sentences(head)
    span: list[str] = []
    for index, sentence in enumerate(found):
        if not _requests(sentence):
            continue
        span.append(sentence)
        after = found[index + 1] if index + 1 < len(found) else ""
        if after and "?" not in after and not _requests(after):
            span.append(after)
    return span


def _requests(sentence: str) -> bool:
    if sentence.isascii():  # lowered ASCII matches the lowercase patterns as IGNORECASE would, ~2.5x faster
        sentence, p = sentence.lower(), _LOWERED
    else:
        p = _PATTERNS
    if p["not"].search(sentence):
        return False
    if p["request"].search(sentence):
        return True
    available = p["available"].search(sentence)
    if available and (p["noun"].search(sentence) or names_a_time(sentence)):
        # "Are you free to review them by Friday?" asks for work, not for a meeting.
        doing = _TO_DO.match(sentence, available.end())
        return doing is None or _MEETING_VERB.match(doing.group(1)) is not None
    return (
        "?" in sentence
        and p["noun"].search(sentence) is not None
        and p["moves"].search(sentence) is None
        and p["about"].match(sentence) is None
        and names_a_time(sentence)
    )


_PATTERNS = {
    "not": _NOT_AN_ASK,
    "request": _REQUEST,
    "available": _AVAILABLE,
    "noun": _MEETING_NOUN,
    "moves": _MOVES,
    "about": _ASKS_ABOUT,
}
# The same, for lowered ASCII text (the patterns are written in lower case: nothing else changes).
_LOWERED = {name: re.compile(p.pattern, p.flags & ~re.IGNORECASE) for name, p in _PATTERNS.items()}


def _language(text: str) -> str:
    """The email's language by its common words: "de", "fr", or "en" (also when it cannot tell)."""
    counts = {lang: 0 for lang in _LANGUAGE_WORDS}
    for word in _WORD.findall(text.lower()):
        for lang, common in _LANGUAGE_WORDS.items():
            if word in common:
                counts[lang] += 1
    best = max(counts, key=lambda lang: counts[lang])
    return best if best != "en" and counts[best] >= 3 and counts[best] > counts["en"] else "en"


def next_working_days(today: date, working: tuple[bool, ...], count: int = SEARCH_WORKING_DAYS) -> tuple[date, ...]:
    """Today and the following days up to `count` working days (`working`: seven flags, Monday first)."""
    if not any(working):
        return ()
    days: list[date] = []
    day = today
    while len(days) < count:
        if working[day.weekday()]:
            days.append(day)
        day += timedelta(days=1)
    return tuple(days)
