"""The register and language a reply answers in: formal when the sender wrote formally, in the
email's language — and the greeting and sign-off H0 uses there when the owner has none of their own.

German and French address the reader two ways (du / Sie, tu / vous): `address_form` reads which one a text
uses, by the pronouns that address its reader, so a reply's greeting and body agree on it (h0.drafting.replyvoice).

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
# A greeting without a name, for mail no person wrote (a newsletter, a shop's notice): (informal, formal).
IMPERSONAL: dict[str, tuple[str, str]] = {
    "en": ("Hello,", "Hello,"),
    "de": ("Hallo,", "Guten Tag,"),
    "fr": ("Bonjour,", "Bonjour,"),
    "es": ("Hola:", "Buenos días:"),
    "it": ("Buongiorno,", "Buongiorno,"),
    "nl": ("Hallo,", "Goedendag,"),
    "pt": ("Olá,", "Bom dia,"),
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


# The pronouns that address a text's reader, per language: (informal, formal). German's formal ones are
# capitalised ("Sie", "Ihnen", "Ihr"): lower-case "sie" is "she" or "they". French "vous" is formal to one person.
_ADDRESS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "de": (
        re.compile(r"(?<!\w)(?:du|dich|dir|dein|deine[mnrs]?|euch|euer|eure[mnrs]?)(?!\w)", re.IGNORECASE),
        re.compile(r"(?<!\w)(?:Sie|Ihnen|Ihr|Ihre[mnrs]?)(?!\w)"),
    ),
    "fr": (
        re.compile(r"(?<!\w)(?:tu|toi|te|ton|ta|tes)(?!\w)|(?<!\w)t['’](?=\w)", re.IGNORECASE),
        re.compile(r"(?<!\w)(?:vous|votre|vos)(?!\w)", re.IGNORECASE),
    ),
}
ADDRESS_WORDS = {"de": ("du", "Sie"), "fr": ("tu", "vous")}  # how the prompt names each form
Form = str  # "informal" | "formal"


def address_form(text: str, language: str | None) -> Form | None:
    """How `text` addresses its reader in `language` ("de" du/Sie, "fr" tu/vous): "informal", "formal", or None
    (another language, no such pronoun, or as many of each)."""
    patterns = _ADDRESS.get((language or "").lower()[:2])
    if patterns is None:
        return None
    head = text[:20_000]
    informal, formal = (len(pattern.findall(head)) for pattern in patterns)
    if informal == formal:
        return None
    return "informal" if informal > formal else "formal"


def address_words(language: str | None, form: Form | None) -> str | None:
    """The pronoun of `form` in `language` ("Sie", "tu"), or None where the language has one form only."""
    pair = ADDRESS_WORDS.get((language or "").lower()[:2])
    if pair is None or form is None:
        return None
    return pair[1] if form == "formal" else pair[0]


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


def impersonal_greeting(language: str | None, formal: bool) -> str:
    """A greeting that names nobody, in `language` (English where H0 has none for it)."""
    pair = IMPERSONAL.get((language or "").lower()[:2], IMPERSONAL["en"])
    return pair[1 if formal else 0]


def language_name(code: str | None) -> str:
    return LANGUAGE_NAMES.get((code or "").lower()[:2], code or "")
