"""One client's business stays theirs: a note's commercial facts are shown only to its parties.

Drafting shows the owner's notes to a model (the prompt), to the owner and any agent reading Drafts/
(a rules-mode briefing) and to an MCP client (`draft_context`). Each of these is for one reply, whose
*audience* is the people it goes to (h0.drafting.context: the Reply-To or From address, the others on
the email, the people the owner wrote to in its thread). This module is the one rule every note and
past reply passes on its way there:

- **Commercial** is a property whose key names money — rate, budget, fee, price, cost, invoice, salary,
  amount, discount, payment, retainer, and their German and French words (Tagessatz, Honorar,
  Rechnung, tarif, taux, facture, honoraires, devis, …) — or whose value is commercial text; and a
  sentence of a note's text that holds a money amount with its currency (€1,200, 1.200 EUR, CHF 900,
  $5k, 300 euros) or one of those words. A heading that is commercial takes its whole section along.
- **A note's parties**: a People note's own addresses (its `email:` and the like); any other note's
  are the addresses it names (properties and text) and those of the People notes it links to
  (`client: "[[Felix Wagner]]"`, `With [[Priya Nair]]`). A past reply's parties are its recipients.
- **Shown** whole when one of its parties is in the audience; otherwise without its commercial
  facts. A People or Project note that names nobody is somebody's whose business H0 cannot tell:
  its commercial facts reach no one (fail closed). Any other note naming nobody is the owner's own
  (`Notes/Rates.md`: their standard rates) and is shown as it is.

Why not the disclosure gate (h0.vault.disclosure)? The gate answers "may this note ever leave the
owner's eyes"; this answers "may this part of a note reach *this* reply", which depends on who the
reply is for — a question only drafting can ask. Private notes never get this far.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Iterable
from typing import Any

from h0.drafting.knowledgenotes import KnowledgeNote, link_targets
from h0.vault.model import NoteFacts, note_facts
from h0.vault.values import ADDRESS

MAX_CURRENCY_MARKS = 1_000  # currency signs looked at in one text; more is taken for money
MAX_LINKED_PEOPLE = 20  # links of a note looked up for its parties (each is one index look-up)
PERSON_TYPES = frozenset({"person", "people", "contact", "client", "kunde", "personne"})
PROJECT_TYPES = frozenset({"project", "projects", "projekt", "projet", "deal", "engagement"})
PERSON_FOLDERS = frozenset({"people", "persons", "contacts", "clients", "kunden", "personen", "kontakte"})
PROJECT_FOLDERS = frozenset({"projects", "projekte", "projets", "deals"})

# Words that name money, whole words in any case. German nouns are matched inside compounds
# ("Projektbudget", "Reisekosten", "Rechnungsbetrag"), English and French as words.
_WORDS_EN = (
    r"rates?|dayrates?|ratecards?|pric(?:e|es|ed|ing)|fees?|invoic(?:e|es|ed|ing)|budget(?:s|ed|ing)?|costs?"
    r"|costing|salar(?:y|ies)|amounts?|discounts?|payments?|paid|retainers?|billing|billed|tariffs?"
)
_WORDS_FR = (
    r"tarifs?|taux|prix|factur(?:e|es|é|ée|és|ées|er|ation)|honoraires?|frais|co[uû]ts?|montants?|salaires?"
    r"|remises?|paiements?|devis|r[ée]mun[ée]rations?|forfaits?|pay[ée]e?s?"
)
_STEMS_DE = (
    r"tagess[aä]tz|stundens[aä]tz|honorar|budget|kosten|rechnung|geb[uü]hr|betr[aä]g|geh[aä]lt|rabatt|zahlung"
    r"|verg[uü]tung|preis|pauschal|angebot|tarif"
)
_MONEY_WORDS = re.compile(
    # Each alternative only where a word starts with a letter: digits and spaces fail at the look-ahead.
    rf"\b(?=[^\W\d_])(?:(?:{_WORDS_EN}|{_WORDS_FR})\b|\w{{0,30}}(?:{_STEMS_DE})(?:e|en|n|s|es|er)?\b)",
    re.IGNORECASE,
)
_CURRENCY = (
    r"(?:[€$£¥₹]|\b(?:EUR|USD|GBP|CHF|JPY|CAD|AUD|NZD|SEK|NOK|DKK|PLN|CZK|INR|CNY|HKD|SGD)\b"
    r"|\b(?:euros?|dollars?|pounds?|francs?|franken)\b)"
)
_CURRENCY_AT = re.compile(_CURRENCY, re.IGNORECASE)
# An amount is a currency with a number right after it (€1,200, CHF 900) or right before it (1.200 €,
# 300 euros, 5k€). Found from each currency mention, within a few characters: a hostile run of digits
# or symbols costs a few steps per mention, never a scan of the rest of the text.
_NUMBER_AFTER = re.compile(r"\s?\d")
_NUMBER_BEFORE = re.compile(r"\d[\d.,'’\u202f\u00a0 ]{0,20}(?:k|m|mio\.?|million|millions|bn)?\s?$", re.IGNORECASE)
# A key's words: "day_rate", "hourlyRate", "Tagessatz" (split on separators and camel case).
_KEY_PARTS = re.compile(r"[A-Z]?[a-zà-öø-ÿ]+|[A-Z]+(?![a-z])|\d+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_HEADING = re.compile(r"^(#{1,6})\s")
_PREFIX = re.compile(r"\s*(?:(?:[-*+>]|\d+[.)])\s+)*")


def is_commercial(text: str) -> bool:
    """True when `text` holds a money amount with its currency, or a word that names money."""
    if _MONEY_WORDS.search(text) is not None:
        return True
    for seen, currency in enumerate(_CURRENCY_AT.finditer(text)):
        if seen >= MAX_CURRENCY_MARKS or _amount_at(text, currency):
            return True  # a text this full of currency signs is taken for money (fail closed)
    return False


def _amount_at(text: str, currency: re.Match[str]) -> bool:
    if _NUMBER_AFTER.match(text, currency.end()):
        return True
    return _NUMBER_BEFORE.search(text[max(0, currency.start() - 24) : currency.start()]) is not None


def commercial_property(key: str, value: Any) -> bool:
    """True when a property's key names money (`day_rate`, `hourlyRate`, `Tagessatz`) or its value is
    commercial text (`terms: 1.500 EUR per day`)."""
    words = " ".join(_KEY_PARTS.findall(str(key))) or str(key)
    if is_commercial(words):
        return True
    values = value if isinstance(value, (list, tuple)) else [value]
    return any(isinstance(v, (str, int, float)) and is_commercial(str(v)) for v in values)


def without_commercial(text: str) -> str:
    """`text` without its commercial sentences; a commercial heading takes its section along."""
    kept: list[str] = []
    skipping = 0  # the level of the commercial heading whose section is being left out
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading is not None:
            level = len(heading.group(1))
            if skipping and level > skipping:
                continue
            skipping = level if is_commercial(line) else 0
            if skipping:
                continue
        elif skipping:
            continue
        if not is_commercial(line):
            kept.append(line)
            continue
        bullet = _PREFIX.match(line)  # "- ", "  1. ", "> ": kept with what is left of the line
        prefix = bullet.group(0) if bullet else ""
        rest = " ".join(s for s in _SENTENCE_END.split(line[len(prefix) :]) if not is_commercial(s))
        if any(c.isalnum() for c in rest):
            kept.append(prefix + rest)
    return "\n".join(kept).strip()


def parties(note: KnowledgeNote, resolve: Callable[[str], KnowledgeNote | None]) -> frozenset[str]:
    """The addresses whose business the note is: a People note's own; else those it names and those of
    the People notes it links to (at most MAX_LINKED_PEOPLE links looked up)."""
    own = _lower(note.person.addresses)
    if own:
        return own
    named = set(_lower(ADDRESS.findall(note.text)))
    links: dict[str, None] = {}
    for value in note.frontmatter.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                named.update(_lower(ADDRESS.findall(item)))
                links.update(dict.fromkeys(link_targets(item)))
    links.update(dict.fromkeys(note.links))
    for target in list(links)[:MAX_LINKED_PEOPLE]:
        linked = resolve(target)
        if linked is not None:
            named.update(_lower(linked.person.addresses))
    return frozenset(named)


def for_audience(
    note: KnowledgeNote, audience: Collection[str], resolve: Callable[[str], KnowledgeNote | None]
) -> KnowledgeNote:
    """The note as a reply to `audience` (lower-case addresses) may show it: the note itself when it holds
    nothing commercial, or when one of its parties is in the audience; else a copy without its commercial
    properties and sentences."""
    properties = {k: v for k, v in note.frontmatter.items() if not commercial_property(str(k), v)}
    text = without_commercial(note.text) if is_commercial(note.text) else note.text
    if len(properties) == len(note.frontmatter) and text is note.text:
        return note  # nothing commercial: nothing to decide
    found = parties(note, resolve)
    if found & set(audience):
        return note
    if not found and not _somebodys(note):
        return note  # the owner's own notes (their standard rates)
    return dataclasses.replace(note, text=text, frontmatter=properties)


def reply_for_audience(text: str, recipients: Iterable[str], audience: Collection[str]) -> str:
    """A past reply's text as a reply to `audience` may show it: whole when it went to one of them, else
    without its commercial sentences (what the owner wrote to another client about money is theirs)."""
    if _lower(recipients) & set(audience) or not is_commercial(text):
        return text
    return without_commercial(text)


def audience_of(email: NoteFacts, owner: Collection[str], wrote_to: Iterable[str] = ()) -> frozenset[str]:
    """Everyone a reply to `email` goes to or concerns besides the owner: its Reply-To, else its sender;
    the others on it (Cc, and To when the owner's addresses are known — else To may be the owner's own);
    and whom the owner wrote to in its thread (`wrote_to`). A From the reply does not go to (a Reply-To
    elsewhere) is not in it: a forged From never opens someone's business to another address."""
    to = email.reply_to or (email.sender,)
    others = [*to, *(email.to if owner else ()), *email.cc, *wrote_to]
    return _lower(others) - _lower(owner)


def _somebodys(note: KnowledgeNote) -> bool:
    """A People or Project note (by its `type:` or its top folder): always somebody's business."""
    kind = note_facts(note.path, note.frontmatter).type_word
    folder = note.path.split("/", 1)[0].casefold() if "/" in note.path else ""
    return kind in PERSON_TYPES | PROJECT_TYPES or folder in PERSON_FOLDERS | PROJECT_FOLDERS


def _lower(addresses: Iterable[str]) -> frozenset[str]:
    return frozenset(a.strip().lower() for a in addresses if a and "@" in a)


__all__ = [
    "audience_of",
    "commercial_property",
    "for_audience",
    "is_commercial",
    "parties",
    "reply_for_audience",
    "without_commercial",
]
