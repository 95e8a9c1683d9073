"""Mail no person wrote, told from its headers (h0.mail.incoming.automated): each sign of the standards and of the
services that send for companies, the receipts that carry none of them, and the person's mail that must stay a
person's — a client's accountant writing "Rechnung Nr. 2026-114", a reply from `billing@`, a question from `info@`."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import HeaderParser

import pytest

from h0.mail.incoming.automated import automated_kind, is_role_mailbox


def headers(**values: str) -> EmailMessage:
    """The headers as a provider gives them: parsed from the message's text (h0.mail.providers.gmail_wire)."""
    text = "".join(f"{name.replace('_', '-')}: {value}\n" for name, value in values.items())
    return HeaderParser(policy=policy.default).parsestr(text + "\n")  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        # RFC 2369 / 8058: mail sent to many, which a person can leave
        ({"From": "Design Weekly <hello@designweekly.io>", "List_Unsubscribe": "<https://d.io/u/1>"}, "list"),
        ({"From": "Fnac <commande@fnac.com>", "List_Unsubscribe": "<mailto:u@fnac.com>", "Subject": "Hi"}, "list"),
        # RFC 3834: auto-replied is an auto-reply; auto-generated is a notification
        ({"From": "dana@example.com", "Auto_Submitted": "auto-replied"}, "auto_reply"),
        ({"From": "ci@example.com", "Auto_Submitted": "auto-generated"}, "notification"),
        ({"From": "Dana <dana@example.com>", "Subject": "Abwesenheitsnotiz: Screens"}, "auto_reply"),
        ({"From": "Dana <dana@example.com>", "Subject": "Automatische Antwort: Screens"}, "auto_reply"),
        ({"From": "Claire <claire@example.fr>", "Subject": "Réponse automatique : Maquettes"}, "auto_reply"),
        # mailboxes no person reads
        ({"From": "N26 <no-reply@n26.com>", "Subject": "Dein Kontoauszug"}, "notification"),
        ({"From": "Qonto <noreply@qonto.com>"}, "notification"),
        ({"From": "LinkedIn <messages-noreply@linkedin.com>"}, "notification"),
        (
            {"From": "Google Calendar <calendar-notification@google.com>", "Subject": "Invitation: Review"},
            "notification",
        ),
        ({"From": "Slack <notification@slack.com>", "Subject": "Dana mentioned you"}, "notification"),
        ({"From": "Shop <DoNotReply@shop.example>"}, "notification"),
        ({"From": "Dana via Tool <dana@example.com>", "Sender": "no-reply@tool.example"}, "notification"),
        # the services companies send through
        ({"From": "Acme <hello@acme.example>", "Feedback_ID": "123:campaign:acme"}, "notification"),
        ({"From": "Acme <team@acme.example>", "X_SES_Outgoing": "2026.11.19-54.240.0.1"}, "notification"),
        ({"From": "Acme <team@acme.example>", "X_Mailgun_Sid": "WyJ"}, "notification"),
        ({"From": "Acme <team@acme.example>", "X_SG_EID": "abc"}, "notification"),
        # a calendar invitation (Exchange's), answered in the calendar
        ({"From": "Dana <dana@example.com>", "Content_Class": "urn:content-classes:calendarmessage"}, "notification"),
        # receipts: the words of orders and invoices from a role mailbox
        ({"From": "Hetzner <billing@hetzner.com>", "Subject": "Rechnung R0012345"}, "notification"),
        ({"From": "Vodafone <rechnung@vodafone.de>", "Subject": "Ihre Vodafone-Rechnung ist da"}, "notification"),
        (
            {"From": "Amazon.de <versandbestaetigung@amazon.de>", "Subject": "Bestellung #1 wurde versandt"},
            "notification",
        ),
        ({"From": "DB <buchungsbestaetigung@bahn.de>", "Subject": "Buchungsbestätigung (Auftrag 1)"}, "notification"),
        ({"From": "SNCF <confirmation@sncf-connect.com>", "Subject": "Confirmation de votre voyage"}, "notification"),
        ({"From": "Fnac <commande@fnac.com>", "Subject": "Votre commande n° 123 est expédiée"}, "notification"),
        ({"From": "Lufthansa <online@booking-lufthansa.com>", "Subject": "Your booking confirmation"}, "notification"),
        ({"From": "Figma <billing@figma.com>", "Subject": "Your Figma invoice"}, "notification"),
    ],
)
def test_machine_made_mail_is_told_from_its_headers(values, kind):
    assert automated_kind(headers(**values)) == kind


@pytest.mark.parametrize(
    "values",
    [
        {"From": "Jonas Berg <jonas.berg@kranich-logistik.de>", "Subject": "Rechnung Nr. 2026-114"},  # a person's
        {"From": "Billing <billing@vendor.example>", "Subject": "Re: Your invoice 77"},  # a person answering
        {"From": "Kontakt <info@small-shop.example>", "Subject": "Quick question about your order"},
        {"From": "Dana <dana@example.com>", "Subject": "Abwesenheit im Mai: wer vertritt mich?"},  # not a client's
        {"From": "Dana <dana@example.com>", "Subject": "Auto insurance quote"},
        {"From": "Dana <dana@example.com>", "Auto_Submitted": "no", "Subject": "Order of the slides?"},
        {"From": "Priya <priya.nair@fernwood.co.uk>", "Subject": "Invoice"},
        {"From": "notifications-team-lead <ann.notificationsson@example.com>"},  # a name, not a role mailbox
    ],
)
def test_a_persons_mail_stays_a_persons(values):
    assert automated_kind(headers(**values)) is None


def test_hostile_headers_cost_nothing_and_raise_nothing():
    huge = "x" * 1_000_000
    assert automated_kind(headers(From=f"{huge}@example.com", Subject=huge, List_Unsubscribe="")) is None
    assert automated_kind(headers(From="no-reply@", Subject="Rechnung")) is None  # no domain: no address, no sign
    assert automated_kind(headers(From="not an address at all", Subject="Your order")) is None
    assert automated_kind(EmailMessage()) is None


@pytest.mark.parametrize(
    ("local", "role"),
    [
        ("billing", True),
        ("versandbestaetigung", True),
        ("no-reply", True),
        ("kundenservice", True),
        ("info", True),
        ("jonas.berg", False),
        ("dana", False),
        ("", False),
    ],
)
def test_a_role_mailbox_names_no_person(local, role):
    assert is_role_mailbox(local) is role
