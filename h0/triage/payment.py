"""Business-email compromise: an email asking to pay to new bank details, to make an urgent transfer, or to
buy gift cards and send their codes — in English, German and French.

These requests are dangerous from anyone, a real correspondent's own account included (accounts get taken
over, and then DMARC passes): the defence every bank and insurer gives is to confirm by phone, on a number
you already have, before paying. So H0 flags them whoever sent them (h0.triage.phishing), as a request to
confirm — not as an impostor.

Each phrase list names the move itself, not a topic: "our bank details have changed" / "neue
Bankverbindung" / "nouveau RIB" (a *change*: an invoice that merely states an IBAN is ordinary mail);
a transfer asked for *urgently* or with an amount for today (a "transfer" of files is not); gift cards
*and* a request to send their codes (a shop sends codes, it never asks for them). The text looked at is the
subject and the first SCAN_CHARS of the body, where such a request stands.
"""

from __future__ import annotations

import re

__all__ = ["SCAN_CHARS", "payment_request"]

SCAN_CHARS = 8_000

_FLAGS = re.IGNORECASE
_BANK_EN = r"(?:bank(?:ing)?|account|payment|remittance|wire)\s+(?:details|information|info|instructions|account)"
_BANK_DE = r"(?:Bankverbindung|Kontoverbindung|Bankdaten|Kontodaten|Zahlungsdaten|IBAN|Kontonummer)"
_BANK_FR = r"(?:coordonnées\s+bancaires|RIB|IBAN|compte\s+bancaire|domiciliation\s+bancaire)"
_NEW_DETAILS = re.compile(
    "|".join(
        (
            # en: new/updated/changed bank details; the details have changed; pay to our new account
            rf"\b(?:new|updated|changed|different)\s+{_BANK_EN}\b",
            rf"\b{_BANK_EN}\s+(?:have|has)\s+(?:changed|been\s+(?:changed|updated))\b",
            r"\bchanged?\s+(?:our|my|the)\s+(?:bank(?:ing)?\s+(?:details|account)|bank|iban)\b",
            r"\b(?:to|into)\s+(?:our|my|the)\s+new\s+(?:bank\s+)?account\b",
            r"\bnew\s+(?:iban|bank\s+account|account\s+(?:number|details))\b",
            # de: neue/geänderte Bankverbindung; die Bankverbindung hat sich geändert; Kontoänderung
            rf"\b(?:neue[nrs]?|geänderte[nrs]?|aktualisierte[nrs]?)\s+{_BANK_DE}\b",
            rf"\b{_BANK_DE}\s+(?:hat\s+sich\s+)?(?:geändert|ändert\s+sich)\b",
            r"\bsich\s+unsere\s+Bankverbindung\s+geändert\b",
            r"\b(?:Kontoänderung|Änderung\s+(?:der|unserer|meiner)\s+Bankverbindung)\b",
            r"\bauf\s+(?:unser|mein)\s+neues\s+Konto\b",
            # fr: nouveau RIB / nouvelles coordonnées bancaires; changement de banque; nous avons changé de banque
            rf"\b(?:nouveau|nouvel|nouvelle|nouvelles|nouveaux)\s+{_BANK_FR}",
            r"\bchangement\s+de\s+(?:coordonnées\s+bancaires|RIB|banque|compte\s+bancaire)",
            r"\bchangé\s+de\s+(?:banque|RIB|compte\s+bancaire)",
            rf"\b{_BANK_FR}\s+(?:ont|a)\s+changé",
        )
    ),
    _FLAGS,
)
_AMOUNT = r"(?:\d[\d.,\s]*\s?(?:€|EUR|USD|\$|GBP|£|CHF|Euro)|(?:€|\$|£)\s?\d)"
_URGENT_TRANSFER = re.compile(
    "|".join(
        (
            r"\burgent(?:ly)?\s+(?:wire|transfer|bank\s+transfer|payment)\b",
            r"\b(?:wire|transfer)\s+(?:transfer\s+)?(?:is\s+)?urgent(?:ly)?\b",
            rf"\b(?:wire|transfer)\b[^.!?\n]{{0,40}}{_AMOUNT}[^.!?\n]{{0,60}}\b(?:today|immediately|asap|right\s+away)\b",
            r"\bdringend\w*\b[^.!?\n]{0,30}\bÜberweisung\b",
            r"\bÜberweisung\b[^.!?\n]{0,30}\b(?:dringend|sofort|heute\s+noch)\b",
            r"\bvirement\s+(?:urgent|immédiat)",
            r"\burgent\s*:?\s+(?:un\s+)?virement\b",
        )
    ),
    _FLAGS,
)
_GIFT_CARDS = re.compile(
    r"\b(?:gift[\s-]?cards?|(?:apple|itunes|amazon|google\s+play|steam)[\s-](?:gift[\s-])?cards?|"
    r"[\w-]*gutscheine?|geschenkkarten?|cartes?[\s-]cadeaux?)\b",
    _FLAGS,
)
_SEND_CODES = re.compile(
    r"\b(?:send|e-?mail|text|forward|give)\s+(?:me|us)?\s*(?:the|their|all\s+the)?\s*(?:card\s+)?codes?\b|"
    r"\bschick\w*\s+(?:mir|uns)?\s*(?:bitte\s+)?(?:die|alle)\s+Codes\b|"
    r"\b(?:envoie|envoyez)(?:[\s-]+(?:moi|nous))?\s+les\s+codes\b",
    _FLAGS,
)


# Words every match of each pattern contains, case-folded: a text with none of them is not searched (each
# pattern tries every alternative at every character, ~0.1 ms per KB). Folded as IGNORECASE matches: `ſ` is
# `s`, the Kelvin sign `k`, and a dotless `ı` is taken for `i` (casefold keeps it).
_CUES = (
    (_NEW_DETAILS, ("bank", "account", "payment", "remittance", "wire", "iban", "konto", "zahlungsdaten", "rib")),
    (_NEW_DETAILS, ("compte", "coordonn", "domiciliation")),
    (_URGENT_TRANSFER, ("urgent", "wire", "transfer", "dringend", "berweisung", "virement")),
)


def payment_request(subject: str, body: str) -> str | None:
    """The words of a request to pay to new bank details, to transfer urgently, or to send gift-card codes;
    None when the email makes none."""
    text = f"{subject}\n{body[:SCAN_CHARS]}"
    folded = text.casefold().replace("ı", "i")
    searched = set()
    for pattern, cues in _CUES:
        if pattern in searched or not any(cue in folded for cue in cues):
            continue
        searched.add(pattern)
        found = pattern.search(text)
        if found is not None:
            return " ".join(found.group(0).split())
    if not any(cue in folded for cue in ("gift", "gutschein", "geschenkkarte", "cadeau", "card")):
        return None
    cards = _GIFT_CARDS.search(text)
    if cards is not None:
        codes = _SEND_CODES.search(text)
        if codes is not None:
            return f"{' '.join(cards.group(0).split())} … {' '.join(codes.group(0).split())}"
    return None
