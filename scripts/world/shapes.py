"""How a message is laid out: greetings, sign-offs, signatures, mobile footers, and quoted history in
Gmail's, Outlook's and Apple Mail's formats in English, German and French, top- or bottom-posted.

`owner_reply` returns the whole body the owner sent and, separately, her reply exactly as she wrote it
(greeting, body, sign-off and name: no quoted history, no signature block, no "Sent from my iPhone").
"""

from __future__ import annotations

import datetime as dt
import random

from scripts.world import texts
from scripts.world.persona import OWNER, OWNER_NAME, SIGNATURE, Person

WEEKDAYS = {
    "en": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    "de": ("Mo.", "Di.", "Mi.", "Do.", "Fr.", "Sa.", "So."),
    "fr": ("lun.", "mar.", "mer.", "jeu.", "ven.", "sam.", "dim."),
}
LONG_WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "de": ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
}
MONTHS = {
    "en": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    "de": (
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ),
    "fr": (
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ),
}
MOBILE = {"en": "Sent from my iPhone", "de": "Von meinem iPhone gesendet", "fr": "Envoyé de mon iPhone"}


def greeting(person: Person, rng: random.Random) -> str:
    if person.lang == "de":
        if person.formal:
            title = "Herr" if person.first in ("Jonas", "Tobias") else "Frau"
            return rng.choice(
                (
                    f"Guten Tag {title} {person.last},",
                    f"Sehr geehrter {title} {person.last},"
                    if title == "Herr"
                    else f"Sehr geehrte {title} {person.last},",
                )
            )
        return rng.choice(
            (
                f"Hallo {person.first},",
                f"Hi {person.first},",
                f"Liebe {person.first}," if person.first in ("Sabine",) else f"Lieber {person.first},",
            )
        )
    if person.lang == "fr":
        if person.formal:
            return rng.choice((f"Bonjour {person.first},", f"Chère {person.first},", "Bonjour,"))
        return rng.choice((f"Salut {person.first},", f"Bonjour {person.first},"))
    return rng.choice(
        (f"Hi {person.first},", f"Hello {person.first},", f"Dear {person.first},", f"Hey {person.first},")
    )


def sign_off(lang: str, rng: random.Random) -> str:
    choices = {
        "en": ("Best,", "Cheers,", "Thanks,", "Best regards,", "All the best,", "Kind regards,"),
        "de": ("Viele Grüße", "Beste Grüße,", "Liebe Grüße", "LG", "Danke und viele Grüße"),
        "fr": ("Bien à vous,", "Cordialement,", "Bonne journée,", "Belle journée,", "Merci,"),
    }[lang]
    return rng.choice(choices)


def thanks_opener(person: Person, rng: random.Random) -> str:
    return {
        "en": rng.choice((f"Thanks, {person.first} – that helps.", f"Thanks, {person.first}!", "Thanks, all clear.")),
        "de": rng.choice((f"Danke, {person.first}!", "Danke, das hilft mir sehr.", f"Danke dir, {person.first}.")),
        "fr": rng.choice((f"Merci, {person.first} !", "Merci, c'est très clair.", f"Merci {person.first}.")),
    }[person.lang]


def _date_line(lang: str, when: dt.datetime, style: str) -> str:
    wd, month = when.weekday(), when.month - 1
    if lang == "en":
        if style == "gmail":
            return f"{WEEKDAYS['en'][wd]}, {MONTHS['en'][month][:3]} {when.day}, {when.year} at {when:%-I:%M %p}"
        if style == "apple":
            return f"{when.day} {MONTHS['en'][month][:3]} {when.year}, at {when:%H:%M}"
        return f"{LONG_WEEKDAYS['en'][wd]}, {MONTHS['en'][month]} {when.day}, {when.year} {when:%-I:%M %p}"
    if lang == "de":
        if style == "gmail":
            return f"{WEEKDAYS['de'][wd]}, {when.day}. {MONTHS['de'][month]} {when.year} um {when:%H:%M} Uhr"
        if style == "apple":
            return f"{when:%d.%m.%Y} um {when:%H:%M}"
        return f"{LONG_WEEKDAYS['de'][wd]}, {when.day}. {MONTHS['de'][month]} {when.year} {when:%H:%M}"
    if style == "gmail":
        return f"{WEEKDAYS['fr'][wd]} {when.day} {MONTHS['fr'][month]} {when.year} à {when:%H:%M}"
    if style == "apple":
        return f"{when.day} {MONTHS['fr'][month]} {when.year} à {when:%H:%M}"
    return f"{LONG_WEEKDAYS['fr'][wd]} {when.day} {MONTHS['fr'][month]} {when.year} {when:%H:%M}"


def quoted_history(
    lang: str, style: str, sender: str, address: str, when: dt.datetime, subject: str, body: str
) -> tuple[str, str]:
    """(the header line(s), the quoted text) of an earlier message, as a mail client writes them."""
    date = _date_line(lang, when, style)
    who = f"{sender} <{address}>"
    quoted = "\n".join(("> " + line) if line else ">" for line in body.strip().split("\n"))
    if style == "gmail":
        header = {
            "en": f"On {date} {who} wrote:",
            "de": f"Am {date} schrieb {who}:",
            "fr": f"Le {date}, {who} a écrit :",
        }[lang]
        return header, quoted
    if style == "apple":
        header = {
            "en": f"On {date}, {who} wrote:",
            "de": f"Am {date} schrieb {who}:",
            "fr": f"Le {date}, {who} a écrit :",
        }[lang]
        return header, quoted
    names = {
        "en": ("From", "Sent", "To", "Subject"),
        "de": ("Von", "Gesendet", "An", "Betreff"),
        "fr": ("De", "Envoyé", "À", "Objet"),
    }[lang]
    colon = " :" if lang == "fr" else ":"
    rule = "-----Ursprüngliche Nachricht-----" if lang == "de" and when.day % 2 else "_" * 32
    header = "\n".join(
        (
            rule,
            f"{names[0]}{colon} {who}",
            f"{names[1]}{colon} {date}",
            f"{names[2]}{colon} {OWNER_NAME} <{OWNER}>",
            f"{names[3]}{colon} {subject}",
        )
    )
    return header, body.strip()  # Outlook does not prefix the original with ">"


def owner_words(person: Person, rng: random.Random, *, answer: bool, asks: bool) -> list[str]:
    """The paragraphs of the owner's own text (greeting and sign-off aside): lists, answers, an ask."""
    lang = person.lang
    paragraphs: list[str] = []
    if answer:
        paragraphs.append(" ".join(rng.sample(texts.ANSWERS[lang], rng.randint(1, 2))))
    else:
        paragraphs.append(rng.choice(texts.OWNER_NEWS[lang]))
    shape = rng.random()
    if shape < 0.45:
        items = rng.sample(texts.LIST_ITEMS[lang], rng.randint(2, 4))
        if rng.random() < 0.5:
            marker = rng.choice(("- ", "* ", "• ", "– "))
            block = "\n".join(marker + item for item in items)
        else:
            style = rng.choice(("{}. ", "{}) "))
            block = "\n".join(style.format(i + 1) + item for i, item in enumerate(items))
        paragraphs.append(rng.choice(texts.LIST_LEADS[lang]) + "\n" + block)
        if rng.random() < 0.7:
            paragraphs.append(rng.choice(texts.AFTER_LIST[lang]))
    if asks:
        paragraphs.append(rng.choice(texts.OWNER_ASKS[lang]))
    return paragraphs


def owner_reply(
    person: Person,
    rng: random.Random,
    *,
    paragraphs: list[str],
    original: tuple[str, dt.datetime, str, str] | None,
) -> tuple[str, str, dict[str, str]]:
    """(the body sent, the reply exactly as written, the shape chosen). `original`: (sender name, date,
    subject, body) of the message answered, quoted below (or above, bottom-posted) the reply."""
    lang = person.lang
    shape: dict[str, str] = {}
    lines: list[str] = []
    opener = rng.random()
    if opener < 0.3:
        lines.append(thanks_opener(person, rng))
        shape["opener"] = "thanks"
    elif opener < 0.85:
        lines.append(greeting(person, rng))
        shape["opener"] = "greeting"
    else:
        shape["opener"] = "none"
    text = "\n\n".join([*lines, *paragraphs]) if lines else "\n\n".join(paragraphs)
    if shape["opener"] == "greeting" and rng.random() < 0.3:
        text = text.replace("\n\n", "\n", 1)  # "Hallo Sabine,\nja, passt." — no blank line after the greeting
    ending = rng.random()
    if ending < 0.75:
        closing = sign_off(lang, rng)
        text += (
            f"\n\n{closing}\nLena"
            if rng.random() < 0.8
            else f"\n\n{closing} Lena"
            if closing in ("LG",)
            else (f"\n\n{closing}\nLena Hartmann")
        )
        shape["sign_off"] = closing
    elif ending < 0.85:
        text += "\n\nLena"
        shape["sign_off"] = "name"
    else:
        shape["sign_off"] = "none"
    reply = text
    tail = rng.random()
    body = reply
    if tail < 0.25:
        body += "\n\n-- \n" + SIGNATURE
        shape["signature"] = "block"
    elif tail < 0.38:
        body += "\n\n" + MOBILE[lang]
        shape["signature"] = "mobile"
    else:
        shape["signature"] = "none"
    if original is not None:
        style = rng.choice(("gmail", "outlook", "apple"))
        quote_lang = lang if rng.random() < 0.85 else rng.choice(("en", "de", "fr"))  # a client in another language
        sender, when, subject, earlier = original
        header, quoted = quoted_history(quote_lang, style, sender, person.address, when, subject, earlier)
        shape["quote"] = f"{style}-{quote_lang}"
        if style != "outlook" and rng.random() < 0.15:
            body = f"{header}\n{quoted}\n\n{body}"  # bottom-posted: the history first, the answer below
            shape["posting"] = "bottom"
        else:
            body = f"{body}\n\n{header}\n{quoted}" if style != "apple" else f"{body}\n\n{header}\n\n{quoted}"
            shape["posting"] = "top"
    return body, reply, shape
