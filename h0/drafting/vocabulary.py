"""What a question asks for, and a small en/de/fr vocabulary of business terms: how a rules briefing
(h0.drafting.briefing) tells which lines of the owner's notes answer it.

**The kind of answer.** A "when" question ("When …", "Wann …", "Quand …", "bis wann", "quelle date", or
one that names a date: "Passt der Beta-Start am 18.12.?") is answered by a line that holds a date or a
time; a "how much" question ("how much", "what is your rate", "wie hoch", "was kostet", "combien", or one
that names an amount: "Gilt der Preis von 1.250 € noch?") by a line that holds an amount; a "how many"
("wie viele", "combien de") by a line with a number. Anything else by the lines that share its words.

**The vocabulary.** People write to the owner in their language and the owner keeps notes in hers: "Wie
hoch ist dein Tagessatz?" is answered by "Day rate: 950 EUR". Each concept below is a handful of words
per language (nouns and their plurals, German compounds found by their ending: "Projektbudget" is a
budget). It is used only when the sender's People note says their `language:` — a word is read in *that*
language, so a false friend reads right (German "Rate" is an instalment, English "rate" a price; English
"start" is any beginning, German "Start" a launch).

| concept | en | de | fr |
|---|---|---|---|
| invoice | invoice, bill | Rechnung | facture |
| rate | rate, day rate, fee, price, pricing, cost | Tagessatz, Stundensatz, Honorar, Preis, Kosten | tarif, taux, prix, honoraires, coût |
| budget | budget | Budget | budget |
| launch | launch, go-live, release | Start, Launch, Livegang, Veröffentlichung | lancement, mise en ligne |
| deadline | deadline, due | Frist, Deadline, Abgabe, fällig | échéance, délai, date limite |
| meeting | meeting, call, kick-off | Termin, Besprechung, Meeting, Treffen, Kickoff | réunion, rendez-vous, appel |
| workshop | workshop | Workshop | atelier |
| quote | quote, estimate, offer, proposal | Angebot, Kostenvoranschlag | devis, offre |
| payment | payment, transfer, paid | Zahlung, Überweisung, Rate, bezahlt, Zahlungsziel | paiement, virement, réglé, payé |
| contract | contract, agreement | Vertrag | contrat |
| designs | design, mockup, screen | Entwurf, Entwürfe, Screen | maquette, écran |
| delivery | delivery, lead time | Lieferung, Lieferzeit | livraison |
| scope | scope | Umfang, Scope | périmètre |
"""

from __future__ import annotations

import re

from h0.calendar.phrases import QUESTION_WORDS


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


_CONCEPTS: dict[str, dict[str, tuple[str, ...]]] = {
    "invoice": {"en": ("invoice", "bill", "billing"), "de": ("rechnung", "faktura"), "fr": ("facture", "facturation")},
    "rate": {
        "en": ("rate", "fee", "price", "pricing", "cost"),
        "de": ("tagessatz", "stundensatz", "honorar", "preis", "kosten"),
        "fr": ("tarif", "taux", "prix", "honoraires", "coût"),
    },
    "budget": {"en": ("budget",), "de": ("budget", "etat"), "fr": ("budget",)},
    "launch": {
        "en": ("launch", "go-live", "golive", "release"),
        "de": ("start", "launch", "livegang", "veröffentlichung", "go-live"),
        "fr": ("lancement", "sortie"),
    },
    "deadline": {
        "en": ("deadline", "due"),
        "de": ("frist", "deadline", "abgabe", "fällig"),
        "fr": ("échéance", "délai", "limite"),
    },
    "meeting": {
        "en": ("meeting", "call", "kick-off", "kickoff"),
        "de": ("termin", "besprechung", "meeting", "treffen", "kickoff", "kick-off"),
        "fr": ("réunion", "rendez-vous", "appel"),
    },
    "workshop": {"en": ("workshop",), "de": ("workshop",), "fr": ("atelier",)},
    "quote": {
        "en": ("quote", "estimate", "offer", "proposal"),
        "de": ("angebot", "kostenvoranschlag"),
        "fr": ("devis", "offre"),
    },
    "payment": {
        "en": ("payment", "transfer", "paid"),
        "de": ("zahlung", "überweisung", "rate", "bezahlt", "zahlungsziel"),
        "fr": ("paiement", "virement", "réglé", "payé"),
    },
    "contract": {"en": ("contract", "agreement"), "de": ("vertrag",), "fr": ("contrat",)},
    "designs": {
        "en": ("design", "mockup", "screen"),
        "de": ("entwurf", "entwürfe", "screen"),
        "fr": ("maquette", "écran"),
    },
    "delivery": {"en": ("delivery",), "de": ("lieferung", "lieferzeit"), "fr": ("livraison",)},
    "scope": {"en": ("scope",), "de": ("umfang", "scope"), "fr": ("périmètre",)},
}
LANGUAGES = ("en", "de", "fr")
_BY_WORD: dict[tuple[str, str], str] = {
    (lang, _stem(word)): concept
    for concept, words in _CONCEPTS.items()
    for lang, said in words.items()
    for word in said
}
_ALL_WORDS: dict[str, frozenset[str]] = {
    concept: frozenset(_stem(word) for said in words.values() for word in said) for concept, words in _CONCEPTS.items()
}
# Words two concepts share across languages (German "Rate", an instalment; English "rate", a price): in a line
# of unknown language they name neither.
_AMBIGUOUS = frozenset(
    word for word in {w for (_, w) in _BY_WORD} if len({c for (lang, w), c in _BY_WORD.items() if w == word}) > 1
)
_GERMAN_ENDINGS = tuple(sorted({w for (lang, w) in _BY_WORD if lang == "de" and len(w) >= 4}, key=len, reverse=True))

_MONTHS = (
    r"jan(?:uary|uar)?|feb(?:ruary|ruar)?|mar(?:ch)?|märz|apr(?:il)?|may|mai|june?|juni?|july?|juli?|aug(?:ust)?|"
    r"sep(?:t|tember)?|oct(?:ober)?|okt(?:ober)?|nov(?:ember)?|dec(?:ember)?|dez(?:ember)?|janvier|février|mars|"
    r"avril|juin|juillet|août|septembre|octobre|novembre|décembre"
)
# Month names that mean nothing else ("May" is also a verb, "Mars" a planet: only with a day).
_MONTH_NAMES = (
    r"january|february|march|april|june|july|august|september|october|november|december|januar|februar|märz|juni|"
    r"juli|oktober|dezember|janvier|février|avril|juin|juillet|août|septembre|octobre|novembre|décembre"
)
_WEEKDAYS = (
    r"monday|tuesday|wednesday|thursday|friday|montag|dienstag|mittwoch|donnerstag|freitag|lundi|mardi|mercredi|"
    r"jeudi|vendredi"
)
DATE = re.compile(
    r"\b\d{1,2}\.\d{1,2}\.(?:\d{2,4})?(?!\d)|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"
    rf"|\b\d{{1,2}}(?:\.|st|nd|rd|th|er)?\s+(?:of\s+)?(?:{_MONTHS})\b|\b(?:{_MONTHS})\.?\s+\d{{1,2}}\b"
    rf"|\b(?:{_MONTH_NAMES})\b(?:\s+\d{{4}})?|\b(?:{_WEEKDAYS})\b|\bthe \d{{1,2}}(?:st|nd|rd|th)\b"
    r"|\b(?:am|zum|bis zum|le|du|au) \d{1,2}(?:\.|er)?(?!\d)"
    r"|\b(?:kw|week|woche|semaine)\s*\d{1,2}\b|\bq[1-4]\b"
    r"|\b\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?|uhr|h)\b|\b\d{1,2}:\d{2}\b",
    re.IGNORECASE,
)
AMOUNT = re.compile(
    r"(?:€|\$|£|\b(?:eur|euro|euros|usd|gbp|chf)\b)\s*\d[\d.,' ]*(?:k\b)?"
    r"|\d[\d.,' ]*(?:k\b)?\s*(?:–\s*\d[\d.,' ]*)?(?:€|\$|£|\b(?:eur|euro|euros|usd|gbp|chf)\b)",
    re.IGNORECASE,
)
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w.])")
_WHEN = re.compile(
    r"^\W*(?:and |und |et |also,? )?(?:when|wann|quand)\b|\b(?:what|which) (?:date|day|time)\b(?! ?rate)|\bby when\b|"
    r"\bhow soon\b|\buntil when\b|\b(?:bis|ab) wann\b|\ban welchem tag\b|\bwelche[snm]? (?:datum|tag)\b|"
    r"\bum wie ?viel uhr\b|\bquel(?:le)? (?:date|jour)\b|\bà quelle heure\b|\bd'ici quand\b|\bjusqu'à quand\b",
    re.IGNORECASE,
)
_HOW_MANY = re.compile(r"\bhow many\b|\bwie ?viele\b|\bcombien de\b|\bnombre de\b|\banzahl\b", re.IGNORECASE)
_HOW_MUCH = re.compile(
    r"\bhow much\b|\bwhat (?:is|are|would be) (?:your|the) (?:\w+ )?(?:rates?|fees?|prices?|costs?|budget)\b|"
    r"\bwhat does (?:it|this|that) cost\b|\bwie ?viel\b|\bwie hoch\b|\bwas kostet\b|\bcombien\b|\bquel(?:le)? est "
    r"(?:votre|ton|le|la) (?:tarif|prix|coût|budget|taux)\b|\bà combien\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
# A question that opens with one of these asks what, who, where, why or how: a date in it is not what it asks.
_WH = re.compile(rf"^\W*(?:{QUESTION_WORDS})\b", re.IGNORECASE)


def answer_kind(question: str) -> str:
    """ "when", "how many", "how much" or "" (answered by the lines that share its words). A question that
    names money ("which day rate …", "Gilt der Preis von 1.250 € noch?") asks how much; a yes/no question
    that names a date ("Passt der Beta-Start am 18.12.?") asks whether that is when."""
    if _WHEN.search(question):
        return "when"
    if _HOW_MANY.search(question):
        return "how many"
    found = words(question)
    if _HOW_MUCH.search(question) or AMOUNT.search(question) or names_concept(found, "rate"):
        return "how much"
    if names_concept(found, "budget"):
        return "how much"
    if DATE.search(question) and not _WH.match(question):
        return "when"
    return ""


def answers_kind(kind: str, line: str) -> bool:
    """Whether `line` holds what a question of this kind asks for: a date or time, an amount, a number."""
    if kind == "when":
        return DATE.search(line) is not None
    if kind == "how much":
        return AMOUNT.search(line) is not None
    if kind == "how many":
        return NUMBER.search(line) is not None
    return True


def words(text: str) -> set[str]:
    """The text's words, lower-cased and lightly stemmed ("workshops" is "workshop"); hyphenated words also
    in their parts ("Beta-Start": "beta-start", "beta", "start")."""
    found: set[str] = set()
    for word in _WORD.findall(text.lower()):
        found.add(_stem(word))
        if "-" in word:
            found.update(_stem(part) for part in word.split("-") if part)
    return found


def concepts(found: set[str], language: str | None) -> set[str]:
    """The concepts of the vocabulary that words read in `language` name (none without a language)."""
    if language not in LANGUAGES:
        return set()
    named = {_BY_WORD[(language, w)] for w in found if (language, w) in _BY_WORD}
    if language == "de":  # German compounds: "Projektbudget", "Beta-Start", "Lieferzeit"
        named |= {_BY_WORD[("de", end)] for w in found for end in _GERMAN_ENDINGS if w.endswith(end) and w != end}
    return named


def line_concepts(line: str, language: str | None = None) -> set[str]:
    """The concepts a note's line names: its words read in the note's `language` when it is known, else in any
    of the three — where a word two concepts share is read by its case (German writes its nouns with a
    capital: "die erste Rate" is an instalment, "day rate" a price)."""
    found = words(line)
    readings = (language,) if language in LANGUAGES else LANGUAGES
    named: set[str] = set()
    for word in found:
        for lang in readings:
            concept = _BY_WORD.get((lang, word))
            if concept is None:
                continue
            if word in _AMBIGUOUS and language not in LANGUAGES and (lang == "de") != _capitalised(line, word):
                continue
            named.add(concept)
        if "de" in readings and len(word) > 6:  # German compounds: "Projektbudget", "Lieferzeit"
            named |= {_BY_WORD[("de", end)] for end in _GERMAN_ENDINGS if word.endswith(end) and word != end}
    return named


def names_concept(found: set[str], concept: str) -> bool:
    """Whether words (of a question, in any of the three languages) name the concept."""
    said = _ALL_WORDS[concept]
    return any(w in said or (len(w) > 6 and any(w.endswith(s) for s in said if len(s) >= 4)) for w in found)


def _capitalised(line: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word[:1].upper() + word[1:])}", line) is not None


def known(word: str, language: str | None) -> bool:
    """Whether the vocabulary knows the word in this language (then its concept, not its spelling, says what it
    means)."""
    return language in LANGUAGES and (language, _stem(word.lower())) in _BY_WORD
