"""Attacks on the owner, each with the domain it imitates: look-alike domains of her correspondents,
known display names on strangers' addresses, DMARC/SPF failures from a known domain, business-email
compromise (new bank details, urgent transfers, gift cards) from look-alikes and from real
correspondents' compromised accounts, and credential phishing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from scripts.world.persona import BY_KEY

PASS = "mx.google.com; dkim=pass header.i=@{d}; spf=pass smtp.mailfrom={d}; dmarc=pass (p=NONE) header.from={d}"
FAIL = "mx.google.com; dkim=none; spf=fail smtp.mailfrom={d}; dmarc=fail (p=QUARANTINE) header.from={d}"
SOFT = "mx.google.com; dkim=pass header.i=@{d}; spf=pass smtp.mailfrom={d}; dmarc=fail (p=NONE) header.from={d}"


@dataclass(frozen=True)
class Attack:
    kind: str  # lookalike | display_name | spoofed | compromised | credentials
    imitates: str | None  # the domain it passes for
    lang: str
    sender: str
    subject: str
    text: str
    auth: str
    html: str | None = None


IBAN = ("DE89 3704 0044 0532 0130 00", "LT12 1000 0111 0100 1000", "GB33 BUKB 2020 1555 5555 55")

LOOKALIKES = (  # (person key, look-alike domain)
    ("sabine", "kranich-logistlk.de"),
    ("jonas", "kranich-1ogistik.de"),
    ("jonas", "kranlch-logistik.de"),
    ("dana", "brightllne.io"),
    ("marcus", "brlghtline.io"),
    ("claire", "atelier-rnoreau.fr"),
    ("elise", "fontaine-consei1.fr"),
    ("sabine", "xn--kranich-logstik-i3m.de"),  # kranich-logіstik.de with a Cyrillic і
)


def _payment(lang: str, rng: random.Random, formal: bool = True) -> tuple[str, str]:
    iban = rng.choice(IBAN)
    amount = f"{rng.randint(4, 48)}.{rng.randint(100, 999)}"
    if lang == "de":
        return (
            "Neue Bankverbindung",
            (
                f"Guten Tag,\n\nbitte beachten Sie, dass sich unsere Bankverbindung geändert "
                f"hat. Bitte überweisen Sie die offene Rechnung über {amount} € ab sofort auf unser neues Konto:\n\n"
                f"IBAN: {iban}\n\nDie alte Verbindung ist nicht mehr gültig. Bitte bestätigen Sie kurz den Eingang."
                "\n\nMit freundlichen Grüßen"
            ),
        )
    if lang == "fr":
        return (
            "Changement de coordonnées bancaires",
            (
                f"Bonjour,\n\nnous avons changé de banque. Merci d'effectuer "
                f"le règlement de la facture de {amount} € sur notre nouveau RIB :\n\nIBAN : {iban}\n\n"
                "Merci de nous confirmer le virement.\n\nCordialement"
            ),
        )
    return (
        "Updated bank details",
        (
            f"Hi,\n\nplease note our bank details have changed. Could you pay the open "
            f"invoice of {amount} EUR to our new account today?\n\nIBAN: {iban}\n\nThe old account is closed.\n\n"
            "Thanks"
        ),
    )


def _urgent(lang: str, rng: random.Random) -> tuple[str, str]:
    if lang == "de":
        return (
            "Dringend: Überweisung heute",
            (
                "Hallo,\n\nich brauche heute noch eine dringende Überweisung über "
                f"{rng.randint(8, 30)}.400 € an einen neuen Lieferanten. Bitte diskret behandeln, ich bin im Meeting."
                "\n\nDanke"
            ),
        )
    if lang == "fr":
        return (
            "Urgent : virement",
            (
                "Bonjour,\n\nj'ai besoin d'un virement urgent aujourd'hui. Pouvez-vous "
                "vous en occuper discrètement ? Je suis en réunion.\n\nMerci"
            ),
        )
    return (
        "Urgent wire transfer",
        (
            f"Hi Lena,\n\nI need you to wire {rng.randint(8, 30)},400 EUR to a new supplier "
            "today. Keep it quiet for now, I'm in meetings all day. Can you handle it?\n\nThanks"
        ),
    )


def _gift_cards(lang: str) -> tuple[str, str]:
    if lang == "de":
        return (
            "Kurze Bitte",
            (
                "Hallo Lena,\n\nkannst du mir einen Gefallen tun? Ich brauche 5 Amazon-Gutscheine à "
                "100 € für Kunden. Schick mir bitte die Codes, ich erstatte es dir morgen.\n\nDanke"
            ),
        )
    return (
        "Quick favour",
        (
            "Hi Lena,\n\nare you free? I need 5 Apple gift cards (100 EUR each) for a client "
            "gift today. Can you buy them and send me the codes? I'll pay you back tomorrow.\n\nThanks"
        ),
    )


def attacks(rng: random.Random) -> list[Attack]:
    found: list[Attack] = []
    for index, (key, domain) in enumerate(LOOKALIKES):
        person = BY_KEY[key]
        local = person.address.split("@")[0]
        subject, text = _payment(person.lang, rng) if index % 3 else _urgent(person.lang, rng)
        auth = (FAIL if index % 2 else PASS).format(d=domain)
        found.append(
            Attack(
                "lookalike",
                person.domain,
                person.lang,
                f"{person.name} <{local}@{domain}>",
                subject,
                text + f"\n{person.first}",
                auth,
            )
        )
    strangers = ("gmail.com", "outlook.com", "gmx.de", "yahoo.fr")
    for index, key in enumerate(("dana", "marcus", "sabine", "claire", "marcus", "jonas")):
        person = BY_KEY[key]
        address = f"{person.first.lower()}.{person.last.lower()}.office@{strangers[index % len(strangers)]}"
        subject, text = _gift_cards(person.lang) if index % 2 == 0 else _urgent(person.lang, rng)
        found.append(
            Attack(
                "display_name",
                person.domain,
                person.lang,
                f"{person.name} <{address}>",
                subject,
                text + f"\n{person.first}",
                PASS.format(d=address.split("@")[1]),
            )
        )
    for key in ("marcus", "sabine", "claire", "dana"):
        person = BY_KEY[key]
        subject, text = _urgent(person.lang, rng) if key in ("marcus", "dana") else _payment(person.lang, rng)
        found.append(
            Attack(
                "spoofed",
                person.domain,
                person.lang,
                f"{person.name} <{person.address}>",
                subject,
                text + f"\n{person.first}",
                FAIL.format(d=person.domain),
            )
        )
    for key in ("jonas", "claire", "marcus", "tobias", "jonas"):
        person = BY_KEY[key]
        subject, text = _payment(person.lang, rng)
        found.append(
            Attack(
                "compromised",
                person.domain,
                person.lang,
                f"{person.name} <{person.address}>",
                "Re: " + subject,
                text + f"\n{person.name}",
                PASS.format(d=person.domain),
            )
        )
    phish = (
        (
            "microsoft.com",
            "en",
            "Microsoft 365 <no-reply@micros0ft-365-security.com>",
            "Your password expires today",
            (
                "Your Microsoft 365 password expires today. Verify your account to keep access:\n"
                "https://login.micros0ft-365-security.com/verify\n\nMicrosoft Security"
            ),
        ),
        (
            "n26.com",
            "de",
            "N26 Sicherheit <service@n26-konto-sicherung.com>",
            "Ihr Konto wurde eingeschränkt",
            (
                "Hallo,\n\nungewöhnliche Aktivität festgestellt: Ihr Konto wurde eingeschränkt. Bitte bestätigen Sie Ihre "
                "Identität unter https://n26-konto-sicherung.com/login innerhalb von 24 Stunden."
            ),
        ),
        (
            "dhl.de",
            "de",
            "DHL Paket <zustellung@dhl-paket-info.net>",
            "Ihre Sendung konnte nicht zugestellt werden",
            (
                "Ihre Sendung wartet. Bitte bestätigen Sie Ihre Adresse und zahlen Sie 1,99 € Zollgebühr: "
                "https://dhl-paket-info.net/track"
            ),
        ),
        (
            "qonto.com",
            "fr",
            "Qonto <securite@qonto-verification.fr>",
            "Action requise sur votre compte",
            (
                "Bonjour,\n\nVotre compte sera suspendu. Confirm your identity / Confirmez votre identité ici : "
                "https://qonto-verification.fr/login"
            ),
        ),
        (
            "adobe.com",
            "en",
            "Adobe Billing <billing@adobe-invoices.net>",
            "Payment failed: update your payment",
            (
                "We could not charge your card. Update your payment details within 48 hours: "
                "https://adobe-invoices.net/billing/update"
            ),
        ),
    )
    for imitates, lang, sender, subject, text in phish:
        found.append(
            Attack(
                "credentials",
                imitates,
                lang,
                sender,
                subject,
                text,
                SOFT.format(d=sender.rpartition("@")[2].rstrip(">")),
            )
        )
    return found
