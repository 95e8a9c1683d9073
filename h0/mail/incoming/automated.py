"""Mail no person wrote to you: auto-replies, bounces, lists and notifications, told from their headers.

Follow-ups and triage need to know: an out-of-office answer or a delivery failure is not an answer,
and mail a machine sent is owed no reply and gets no reply draft — even when its text asks one
("Questions? Just reply to this email", a Slack mention quoting a colleague's question: the person
is answered where they asked). The signs are the standard ones, strongest first:

- **bounce**: a delivery report (`Content-Type: multipart/report; report-type=delivery-status`,
  RFC 3464), `X-Failed-Recipients`, or a sender whose mailbox is MAILER-DAEMON / postmaster;
- **auto_reply**: `Auto-Submitted: auto-replied` (RFC 3834), `X-Autoreply`, `X-Autorespond`,
  `Precedence: auto_reply`, or a subject that starts as mail clients start their auto-replies —
  Outlook's and Exchange's prefixes in English, German, French, Spanish, Italian and Dutch
  ("Automatic reply:", "Out of Office:", "Abwesenheitsnotiz:", "Automatische Antwort:",
  "Réponse automatique :", …);
- **list**: `List-Id`, `List-Post` or `List-Unsubscribe` (RFC 2919, 2369, 8058: mail sent to many,
  which a person can leave), or `Precedence: list|bulk|junk` (RFC 2076);
- **notification**: what an automatic process sent to you alone —
  * `Auto-Submitted` with any other value than `no` or `auto-replied` (RFC 3834's `auto-generated`,
    `auto-notified`);
  * a sender (`From` or `Sender`) whose mailbox says no person reads it: `noreply`, `no-reply`,
    `donotreply`, `notification(s)`, `alert(s)`, `bounce…` (also inside a longer name:
    `messages-noreply@`, `calendar-notification@`);
  * the headers of the services that send mail in bulk for companies (Amazon SES, Mailgun,
    SendGrid, Postmark, Mandrill, Mailchimp, Brevo; `Feedback-ID`, Gmail's feedback loop for bulk
    senders; `X-Campaign…`; the Certified Senders Alliance's `X-CSA-Complaints`) — a person's mail
    client never adds them;
  * a calendar invitation (`Content-Class: urn:content-classes:calendarmessage`, Exchange's, or a
    `text/calendar` message): it is answered in the calendar, not by a reply;
  * a **receipt**: a subject in the vocabulary of orders, invoices, bookings, shipping and account
    statements (English, German, French; never a reply's "Re:"/"AW:" subject) from a role mailbox, one
    no person is named by (`billing@`, `rechnung@`, `commande@`, `confirmation@`,
    `buchungsbestaetigung@`, `info@`, `service@`, …; RFC 2142's role names and the common ones of
    shops, banks and travel). Either half alone is not enough: a client's accountant writes "Rechnung
    Nr. 2026-114" from her own address, and a small business answers questions from `info@`.

`info@`, `contact@` or `hello@` alone never make mail automated: people answer from them.

`list_address` is the list's posting address (List-Post's mailto:), so that mail the owner sends
to a list is recognised too. Headers are read as the providers give them, already cleaned of
control characters; nothing here raises.
"""

from __future__ import annotations

import re
from email.message import Message
from typing import Literal

from h0.mail.headers import header_addresses

Automated = Literal["auto_reply", "bounce", "list", "notification"]
KINDS: tuple[str, ...] = ("auto_reply", "bounce", "list", "notification")

MAX_HEADER = 2_000  # of a header's value, what is looked at (a hostile header may be megabytes)

_DAEMONS = frozenset({"mailer-daemon", "postmaster", "mail-daemon", "mailer_daemon"})
# Outlook's and Exchange's auto-reply subject prefixes (en, de, fr, es, it, nl) and the common client ones.
_AUTO_SUBJECT = re.compile(
    r"^\s*(automatic reply|auto[- ]?reply|autoreply|auto[- ]?response|out of (the )?office|auto|"
    r"abwesenheitsnotiz|abwesenheit|automatische antwort|r[ée]ponse automatique|absence|"
    r"respuesta autom[aá]tica|risposta automatica|automatisch antwoord)\s*[:\-]",
    re.IGNORECASE,
)
_OUT_OF_OFFICE = re.compile(r"^\s*out of (the )?office\b", re.IGNORECASE)
_MAILTO = re.compile(r"<mailto:([^>?\s]+)", re.IGNORECASE)
# A mailbox no person reads: the whole local part, or one of its parts split at . _ - +.
_NO_PERSON = re.compile(
    r"(?:^|[._+-])(?:no-?reply|no_reply|do-?not-?reply|donotreply|do_not_reply|notifications?|alerts?|"
    r"bounces?|mailer-daemon)(?:$|[._+-])|^bounces?",
    re.IGNORECASE,
)
# Headers only the bulk and transactional sending services add (by name, case-insensitive).
_ESP_HEADERS = (
    "feedback-id",
    "x-ses-outgoing",
    "x-mailgun-sid",
    "x-mailgun-tag",
    "x-mailgun-variables",
    "x-sg-eid",
    "x-sg-id",
    "x-pm-message-id",
    "x-mandrill-user",
    "x-mc-user",
    "x-mailin-campaign",
    "x-csa-complaints",
    "x-campaign",
    "x-campaignid",
    "x-campaign-id",
)
# Role mailboxes (RFC 2142 and the common ones of shops, banks, travel and services, en/de/fr): no
# person is named by them. German compounds end in a role word (`buchungsbestaetigung`).
_ROLES = frozenset(
    """
    info contact kontakt hello hallo bonjour mail email online web service services kundenservice
    customerservice customercare care support help hilfe team office buero sales vertrieb shop store
    boutique order orders bestellung bestellungen commande commandes billing invoice invoices invoicing
    rechnung rechnungen facture factures facturation receipt receipts payment payments zahlung
    zahlungen paiement accounts account booking bookings buchung buchungen reservation reservations
    reservierung confirmation confirmations bestaetigung bestätigung versand shipping shipment delivery
    livraison news newsletter marketing updates statements statement tickets ticket travel reisen
    voyages kundenkonto konto banking noreply donotreply notification notifications alerts admin system
    """.split()
)
_ROLE_SUFFIXES = ("bestaetigung", "bestätigung", "rechnung", "rechnungen", "versand")
# The role mailboxes of orders, invoices and bookings themselves: their mail is a receipt when its subject says so.
_TRANSACTIONAL = frozenset(
    """
    order orders bestellung bestellungen commande commandes billing invoice invoices invoicing rechnung rechnungen
    facture factures facturation receipt receipts payment payments zahlung paiement booking bookings buchung
    reservation reservations reservierung confirmation confirmations bestaetigung bestätigung versand shipping
    shipment delivery livraison statements
    """.split()
)
# What a receipt's subject names beside its words: a number (an order, an invoice, a booking code), or that it confirms.
_RECEIPT_PROOF = re.compile(r"\d|confirm|bestätig|bestaetig|best[äa]tigung", re.IGNORECASE)
# The words of orders, invoices, bookings, shipping and statements, as receipts name themselves.
_RECEIPT_WORDS = re.compile(
    r"\b(?:receipt|invoice|order|booking|reservation|payment|statement|shipment|shipped|delivery|delivered|"
    r"itinerary|e-?ticket|subscription|renewal|purchase|refund)s?\b|"
    r"(?:rechnung|bestellung|buchung|bestätigung|bestaetigung|auftrag|reservierung|zahlung|kontoauszug|"
    r"quittung|lieferung|versand|versandt|sendung|fahrkarte|abonnement)|"
    r"\b(?:facture|commande|r[ée]servation|paiement|relev[ée]|re[çc]u|livraison|exp[ée]di[ée]e?s?|billet|"
    r"confirmation|abonnement|remboursement)\b",
    re.IGNORECASE,
)
# A reply's or a forward's subject ("Re:", "AW:", "Fwd:", "TR:", "Re[2]:"), in English, German and French
# (h0.followup.asks asks it too: a question in such a subject is not this message's own).
REPLY_SUBJECT = re.compile(r"^\s*(re|aw|antw|réf|ref|fw|fwd|wg|tr|rv)\s*(\[\d+\])?\s*:", re.IGNORECASE)
_SPLIT = re.compile(r"[._+-]+")


def _header(headers: Message, name: str) -> str:
    try:
        value = headers.get(name)
        return " ".join(str(value)[:MAX_HEADER].split()) if value is not None else ""
    except (ValueError, IndexError, TypeError):  # the email package's parser on a broken header: no sign
        return ""


def _mailbox(headers: Message, name: str) -> str:
    """The local part of the header's (first) address, lower-case; "" when there is none."""
    found = header_addresses(_header(headers, name))
    address = found[0][1] if found else ""
    return address.rpartition("@")[0].lower() if "@" in address else ""


def is_role_mailbox(local: str) -> bool:
    """A local part no person is named by (`billing`, `versandbestaetigung`, `no-reply`), see the module."""
    if _no_person(local):
        return True
    parts = [part for part in _SPLIT.split(local.lower()) if part]
    return bool(parts) and all(part in _ROLES or part.endswith(_ROLE_SUFFIXES) or part.isdigit() for part in parts)


def _no_person(local: str) -> bool:
    return bool(local) and _NO_PERSON.search(local) is not None


def _receipt(subject: str, local: str) -> bool:
    """The words of a receipt in a subject that is not a reply's, from a role mailbox. From a mailbox people answer
    questions from (`info@`, `service@`, `hello@`), the subject must also name its number or say it confirms:
    "Quick question about your order" from `info@` is a person's."""
    if not local or REPLY_SUBJECT.match(subject) or _RECEIPT_WORDS.search(subject) is None:
        return False
    parts = [part for part in _SPLIT.split(local.lower()) if part]
    if parts and all(part in _TRANSACTIONAL or part.endswith(_ROLE_SUFFIXES) for part in parts):
        return True
    return is_role_mailbox(local) and _RECEIPT_PROOF.search(subject) is not None


def automated_kind(headers: Message) -> Automated | None:
    """What kind of machine-made mail this is, or None for mail a person wrote (see the module)."""
    content_type = _header(headers, "Content-Type").lower()
    sender = _mailbox(headers, "From")
    if (
        ("multipart/report" in content_type and "delivery-status" in content_type)
        or _header(headers, "X-Failed-Recipients")
        or sender in _DAEMONS
    ):
        return "bounce"
    submitted = _header(headers, "Auto-Submitted").lower()
    precedence = _header(headers, "Precedence").lower()
    subject = _header(headers, "Subject")
    if (
        submitted.startswith("auto-replied")
        or _header(headers, "X-Autoreply")
        or _header(headers, "X-Autorespond")
        or precedence == "auto_reply"
        or _AUTO_SUBJECT.match(subject)
        or _OUT_OF_OFFICE.match(subject)
    ):
        return "auto_reply"
    if (
        _header(headers, "List-Id")
        or _header(headers, "List-Post")
        or _header(headers, "List-Unsubscribe")
        or precedence in ("list", "bulk", "junk")
    ):
        return "list"
    if (
        (submitted and not submitted.startswith("no"))
        or _no_person(sender)
        or _no_person(_mailbox(headers, "Sender"))
        or any(_header(headers, name) for name in _ESP_HEADERS)
        or "calendarmessage" in _header(headers, "Content-Class").lower()
        or content_type.startswith("text/calendar")
        or _receipt(subject, sender)
    ):
        return "notification"
    return None


def list_address(headers: Message) -> str | None:
    """The list's posting address (List-Post: <mailto:…>), lower-case; None when there is none."""
    found = _MAILTO.search(_header(headers, "List-Post"))
    if found is None or "@" not in found.group(1):
        return None
    return found.group(1).strip().lower()[:320]
