"""The register and language a reply answers in: formal when the sender wrote formally, in the
email's language — and the greeting and sign-off H0 uses there when the owner has none of their own.

"Dear Mr Berg," or "Sehr geehrter Herr Berg," opening an email is a formal register: the reply is
formal too ("Dear {name},", "Kind regards,"), unless the owner's past replies to that person say
otherwise (h0.drafting.voice decides). Language is detected cheaply by common words
(`h0.drafting.voice.language_of`, seven European languages); a person's People note may fix it
with `language: de`.
"""

from __future__ import annotations

import re

# fmt: off
_FORMAL_OPENING = re.compile(
    r"^\s*(?:dear\s+(?:mr|mrs|ms|miss|mx|dr|prof|professor|sir|madam|sirs|colleagues?)\b|to whom it may concern"
    r"|sehr\s+geehrte[rn]?\b|geachte\b|madame\b|monsieur\b|messieurs\b|ch[eè]re?\s+(?:madame|monsieur)\b"
    r"|estimad[oa]s?\b|distinguid[oa]s?\b|egregi[oa]\b|gentile\s+(?:sig|dott|prof)|prezad[oa]\b|exm[oa]\b)",
    re.IGNORECASE,
)
_FORMAL_CLOSING = re.compile(
    r"^\s*(?:yours\s+(?:sincerely|faithfully|truly)|respectfully|mit\s+freundlichen\s+gr[üu](?:ß|ss)en"
    r"|hochachtungsvoll|veuillez\s+agr[ée]er|je\s+vous\s+prie|atentamente|distinti\s+saluti"
    r"|met\s+vriendelijke\s+groet|hoogachtend|atenciosamente)\b",
    re.IGNORECASE | re.MULTILINE,
)
# (greeting, sign-off) H0 uses in a language when neither the owner's replies nor the profile give one:
# informal, then formal. Formal greetings name the person in full ("Dear Felix Hartmann,"): H0 does not
# guess a title or gender.
LOCAL_VOICE: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "en": (("Hi {first_name},", "Best,"), ("Dear {name},", "Kind regards,")),
    "de": (("Hallo {first_name},", "Viele Grüße"), ("Guten Tag {name},", "Mit freundlichen Grüßen")),
    "fr": (("Bonjour {first_name},", "Bien à vous,"), ("Bonjour {name},", "Cordialement,")),
    "es": (("Hola {first_name}:", "Un saludo,"), ("Estimado/a {name}:", "Atentamente,")),
    "it": (("Ciao {first_name},", "Un saluto,"), ("Gentile {name},", "Cordiali saluti,")),
    "nl": (("Hoi {first_name},", "Groeten,"), ("Geachte {name},", "Met vriendelijke groet,")),
    "pt": (("Olá {first_name},", "Abraços,"), ("Prezado/a {name},", "Atenciosamente,")),
}
LANGUAGE_NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
}
# fmt: on


def formal_register(words: str) -> bool:
    """True when the email's newest message (`words`: its text with quoted history cut, e.g. by
    h0.drafting.replytext.strip_quoted) opens or closes formally: "Dear Mr Berg,", "Sehr geehrter
    Herr …", "Yours sincerely", "Mit freundlichen Grüßen"."""
    lines = [line for line in words[:20_000].splitlines() if line.strip()]
    if lines and _FORMAL_OPENING.match(lines[0]):
        return True
    return any(_FORMAL_CLOSING.match(line) for line in lines[-6:])


def is_formal(line: str) -> bool:
    """A greeting or sign-off line that is formal in itself ("Dear Mr …", "Kind regards", "Mit freundlichen Grüßen")."""
    low = line.strip().lower()
    return bool(_FORMAL_OPENING.match(line) or _FORMAL_CLOSING.match(line)) or low.startswith(
        ("dear ", "kind regards", "best regards", "regards", "guten tag", "cordialement", "atentamente")
    )


def local_voice(language: str | None, formal: bool) -> tuple[str, str] | None:
    """H0's own (greeting template, sign-off) in `language` and register, or None for a language it has none for."""
    pair = LOCAL_VOICE.get((language or "").lower()[:2])
    return None if pair is None else pair[1 if formal else 0]


def language_name(code: str | None) -> str:
    return LANGUAGE_NAMES.get((code or "").lower()[:2], code or "")
