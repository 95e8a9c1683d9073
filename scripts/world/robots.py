"""Mail no person wrote to the owner: receipts, notifications (Slack, GitHub, calendar invitations),
shops, banks, travel, newsletters and out-of-office answers — each with the headers its real sender
uses (some with List-Id, List-Unsubscribe or Precedence, many with none of them, as real receipts do).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from scripts.world.persona import OWNER, PEOPLE


@dataclass(frozen=True)
class Robot:
    kind: str  # receipt | notification | newsletter | invitation | auto_reply
    lang: str
    sender: str
    subject: str
    text: str | None
    html: str | None
    headers: tuple[tuple[str, str], ...] = ()
    reply_to: str | None = None


def _unsubscribe(domain: str, n: int) -> tuple[str, str]:
    return ("List-Unsubscribe", f"<https://{domain}/unsubscribe/{n:08x}>, <mailto:unsubscribe@{domain}>")


def _html(title: str, lines: list[str]) -> str:
    rows = "".join(f"<tr><td style='padding:4px'>{line}</td></tr>" for line in lines)
    return f"<html><body><h1>{title}</h1><table>{rows}</table><p style='font-size:10px'>Impressum</p></body></html>"


def receipt(rng: random.Random, n: int, when: dt.datetime) -> Robot:
    amount = f"{rng.randint(5, 400)},{rng.randint(0, 99):02d}"
    order = f"{rng.randint(300, 999)}-{rng.randint(1000000, 9999999)}"
    choice = rng.randrange(9)
    if choice == 0:
        return Robot(
            "receipt",
            "de",
            "Amazon.de <versandbestaetigung@amazon.de>",
            f"Ihre Amazon.de Bestellung #{order} wurde versandt",
            None,
            _html(
                "Ihr Paket ist unterwegs",
                [f"Bestellung {order}", "Zustellung: Donnerstag", "Fragen zu Ihrer Bestellung? Besuchen Sie Hilfe."],
            ),
        )
    if choice == 1:
        return Robot(
            "receipt",
            "de",
            "Deutsche Bahn <buchungsbestaetigung@bahn.de>",
            f"Buchungsbestätigung (Auftrag {order})",
            f"Vielen Dank für Ihre Buchung!\n\nAuftrag: {order}\nBerlin Hbf -> Hamburg Hbf\nPreis: {amount} EUR"
            "\n\nIhre Fahrkarte finden Sie im Anhang. Gute Reise wünscht Ihnen Ihre Deutsche Bahn.",
            None,
        )
    if choice == 2:
        return Robot(
            "receipt",
            "de",
            "Hetzner Online GmbH <billing@hetzner.com>",
            f"Rechnung R00{order[-7:]}",
            f"Sehr geehrte Damen und Herren,\n\nanbei erhalten Sie Ihre Rechnung über {amount} EUR.\n\n"
            "Mit freundlichen Grüßen\nIhr Hetzner Online Team",
            None,
        )
    if choice == 3:
        return Robot(
            "receipt",
            "en",
            "Adobe <mail@mail.adobe.com>",
            "Your Adobe receipt",
            None,
            _html(
                "Thank you for your order",
                [f"Creative Cloud All Apps: {amount} EUR", "Questions? Reply to this email or visit Adobe Help."],
            ),
            (_unsubscribe("mail.adobe.com", n),),
        )
    if choice == 4:
        return Robot(
            "receipt",
            "de",
            "Vodafone <rechnung@vodafone.de>",
            "Ihre Vodafone-Rechnung ist da",
            f"Hallo Lena Hartmann,\n\nIhre Rechnung für diesen Monat beträgt {amount} €.\n"
            "Haben Sie Fragen zur Rechnung? Wir sind für Sie da.",
            None,
        )
    if choice == 5:
        return Robot(
            "receipt",
            "fr",
            "SNCF Connect <confirmation@sncf-connect.com>",
            f"Confirmation de votre voyage Paris - Lyon ({order[-6:]})",
            f"Bonjour Lena,\n\nVotre réservation est confirmée.\nMontant : {amount} €\n\nBon voyage !",
            None,
        )
    if choice == 6:
        return Robot(
            "receipt",
            "en",
            "Figma <billing@figma.com>",
            "Your Figma invoice",
            f"Hi Lena,\n\nThanks for your payment of {amount} EUR.\n\nHave a question about billing? "
            "Just reply to this email.\n\nThe Figma team",
            None,
        )
    if choice == 7:
        return Robot(
            "receipt",
            "fr",
            "Fnac <commande@fnac.com>",
            f"Votre commande n° {order} est expédiée",
            None,
            _html("Votre colis arrive", [f"Commande {order}", f"Total : {amount} €"]),
            (_unsubscribe("fnac.com", n),),
        )
    return Robot(
        "receipt",
        "en",
        "Lufthansa <online@booking-lufthansa.com>",
        f"Your booking confirmation {order[-6:]}",
        f"Dear Ms Hartmann,\n\nthank you for booking with Lufthansa.\nBooking code: {order[-6:]}\n"
        "Berlin - Paris, economy.\n\nDo you need a hotel? Find one with us.",
        None,
    )


def notification(rng: random.Random, n: int, when: dt.datetime) -> Robot:
    choice = rng.randrange(6)
    person = rng.choice([p for p in PEOPLE if p.lang == "en"])
    if choice == 0:
        return Robot(
            "notification",
            "en",
            "Slack <notification@slack.com>",
            f"[Brightline] {person.name} mentioned you in #design",
            f"{person.name}: @Lena can you review the onboarding copy today?\n\n"
            "Reply in Slack: https://brightline.slack.com/archives/C04/p1234\n\nYou are receiving this "
            "because you have notifications turned on.",
            None,
        )
    if choice == 1:
        return Robot(
            "notification",
            "en",
            f"{person.name} <notifications@github.com>",
            f"Re: [brightline/design-system] Token naming (#{100 + n % 300})",
            f"@lena-hartmann could you take a look at the token naming before Friday?\n\n—\nReply to "
            "this email directly, view it on GitHub:\nhttps://github.com/brightline/design-system/issues/"
            f"{100 + n % 300}\nYou are receiving this because you were mentioned.",
            None,
            (
                ("List-ID", "brightline/design-system <design-system.brightline.github.com>"),
                _unsubscribe("github.com", n),
                ("Precedence", "list"),
            ),
            reply_to=f"reply+{n:06x}@reply.github.com",
        )
    if choice == 2:
        day = (when + dt.timedelta(days=3)).strftime("%a %b %-d, %Y")
        return Robot(
            "invitation",
            "en",
            "Google Calendar <calendar-notification@google.com>",
            f"Invitation: Design review @ {day} 3pm - 4pm (CET) ({OWNER})",
            f"{person.name} has invited you to Design review.\n\nWhen: {day} 3pm - 4pm (CET)\n"
            "Going (lena@hartmann-studio.de)? Yes - Maybe - No\n\nInvitation from Google Calendar",
            None,
            reply_to=person.address,
        )
    if choice == 3:
        return Robot(
            "notification",
            "de",
            "LinkedIn <messages-noreply@linkedin.com>",
            "Sie haben 3 neue Benachrichtigungen",
            "Hallo Lena,\n\nSehen Sie, wer Ihr Profil besucht hat. Möchten Sie Ihr Netzwerk erweitern?",
            None,
            (_unsubscribe("linkedin.com", n),),
        )
    if choice == 4:
        return Robot(
            "notification",
            "de",
            "N26 <no-reply@n26.com>",
            "Dein Kontoauszug ist verfügbar",
            "Hallo Lena,\n\ndein Kontoauszug für den letzten Monat ist jetzt in der App verfügbar.\n"
            "Fragen? Schreib uns im Chat.",
            None,
        )
    return Robot(
        "notification",
        "fr",
        "Qonto <noreply@qonto.com>",
        "Votre relevé mensuel est disponible",
        "Bonjour Lena,\n\nVotre relevé est disponible dans votre espace.\nUne question ? "
        "Répondez simplement à cet e-mail.",
        None,
    )


def newsletter(rng: random.Random, n: int, when: dt.datetime) -> Robot:
    choice = rng.randrange(4)
    if choice == 0:
        return Robot(
            "newsletter",
            "en",
            "Design Weekly <hello@designweekly.io>",
            f"Design Weekly #{n % 200}: grids",
            "Hi Design,\n\nAre you ready for 2026? This week: grids, type, and a quick call for speakers.\n\n"
            "Read more: https://designweekly.io/issues\n\nUnsubscribe: https://designweekly.io/u",
            None,
            (_unsubscribe("designweekly.io", n), ("Precedence", "bulk")),
        )
    if choice == 1:
        return Robot(
            "newsletter",
            "de",
            "t3n <newsletter@t3n.de>",
            "t3n Daily: Was KI für Designer bedeutet",
            None,
            _html("t3n Daily", ["Was bedeutet KI für Designer?", "Hast du schon unseren Podcast gehört?"]),
            (("List-Id", "t3n daily <daily.t3n.de>"), _unsubscribe("t3n.de", n)),
        )
    if choice == 2:
        return Robot(
            "newsletter",
            "en",
            "Smashing Magazine <newsletter@smashingmagazine.com>",
            "Smashing Newsletter: Can we meet in Freiburg?",
            "Can we meet at SmashingConf in Freiburg this year? Tickets are on sale now.\n\n"
            "You are receiving this because you subscribed.",
            None,
            (_unsubscribe("smashingmagazine.com", n),),
        )
    return Robot(
        "newsletter",
        "fr",
        "La Lettre du Design <lettre@ledesign.fr>",
        "La Lettre : quoi de neuf ?",
        "Bonjour,\n\nQuoi de neuf dans le design ce mois-ci ? Nos coups de cœur.\n\nSe désinscrire : "
        "https://ledesign.fr/desinscription",
        None,
        (_unsubscribe("ledesign.fr", n), ("Precedence", "bulk")),
    )


def out_of_office(rng: random.Random, person_index: int, subject: str) -> Robot:
    person = PEOPLE[person_index % len(PEOPLE)]
    back = rng.randint(2, 28)
    style = rng.randrange(3)
    headers: tuple[tuple[str, str], ...] = (
        (("Auto-Submitted", "auto-replied"),) if style == 0 else (("X-Autoreply", "yes"),) if style == 1 else ()
    )
    if person.lang == "de":
        return Robot(
            "auto_reply",
            "de",
            f"{person.name} <{person.address}>",
            f"Abwesenheitsnotiz: {subject}",
            f"Vielen Dank für Ihre Nachricht. Ich bin bis zum {back}.3. nicht im Büro und habe nur "
            "eingeschränkt Zugriff auf E-Mails. In dringenden Fällen wenden Sie sich bitte an "
            "info@kranich-logistik.de.",
            None,
            headers,
        )
    if person.lang == "fr":
        return Robot(
            "auto_reply",
            "fr",
            f"{person.name} <{person.address}>",
            f"Réponse automatique : {subject}",
            f"Bonjour,\n\nJe suis absente jusqu'au {back} mars. Je vous répondrai dès mon retour.",
            None,
            headers,
        )
    return Robot(
        "auto_reply",
        "en",
        f"{person.name} <{person.address}>",
        rng.choice((f"Automatic reply: {subject}", f"Out of Office: {subject}")),
        f"Thanks for your email. I'm out of the office until March {back} with limited access to email. "
        "Can it wait until then? If not, please call the office.",
        None,
        headers,
    )
