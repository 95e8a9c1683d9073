"""Each hostile input of issue 41's "attacks" against `suspected_phishing` and whom the owner knows.

Known is whom the owner wrote to, the People notes and the owner's own domain (h0.mail.deception.known):
here Sabine and Jonas at kranich-logistik.de, Claire at atelier-moreau.fr, Dana at acme.example (a People
note), the owner at hartmann-studio.de. Every sign named in the issue flags the email with its kind and the
domain it passes for; the ordinary mail of real correspondents, a role address writing in a person's name,
an invoice stating an IBAN, a shop's gift-card code, and a transfer of files are left alone. Then "known" as
the owner's identity records it (sent history, the provider's sent mail it vouches for, H0's own sends).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import load_settings
from h0.followup.ledger import FollowupLedger
from h0.followup.threads import Message
from h0.mail.deception.known import Known, OwnerKnown, name_key, organisation, within_one_edit
from h0.mail.owner import Evidence, Observed, OwnerAuthority
from h0.state import StateDB
from h0.state.history import HistoryMessage, MailHistory
from h0.triage.models import EmailInput
from h0.triage.phishing import suspected_phishing
from h0.vault.model import note_facts
from h0.vault.suspicion import AttackKind, suspicion_of

KNOWN = Known.of(
    [
        ("Sabine Kranich", "sabine.kranich@kranich-logistik.de"),
        ("Jonas Berg", "jonas.berg@kranich-logistik.de"),
        ("Claire Moreau", "claire@atelier-moreau.fr"),
        ("Dana Rivera", "dana@acme.example"),
        ("Bank of Example", "ceo@bank.example"),
        ("Ops", "ops@paypal.example"),
    ],
    own=["lena@hartmann-studio.de"],
)
PASS = {"spf": "pass", "dkim": "pass", "dmarc": "pass"}
DMARC_FAIL = {"spf": "fail", "dkim": "none", "dmarc": "fail"}
SPF_FAIL = {"spf": "fail", "dkim": "none", "dmarc": "none"}


def email(sender: str, subject: str = "Hello", body: str = "See you soon.", auth: dict | None = None) -> EmailInput:
    return EmailInput.model_validate({"from": sender, "subject": subject, "body": body, "auth": auth or PASS})


SABINE = "Sabine Kranich <sabine.kranich@kranich-logistik.de>"
FLAGGED = {
    # look-alikes of a known domain
    "Cyrillic а": ("Bank <x@b\u0430nk.example>", "", "", PASS, "lookalike", "bank.example"),
    "punycode of it": ("x@xn--bnk-6cd.example", "", "", PASS, "lookalike", "bank.example"),
    "rn for m": ("Dana <dana@acrne.example>", "", "", PASS, "lookalike", "acme.example"),
    "1 for l": ("ops@paypa1.example", "", "", PASS, "lookalike", "paypal.example"),
    "one letter replaced": ("Jonas <jonas.berg@kranich-logistlk.de>", "", "", PASS, "lookalike", "kranich-logistik.de"),
    "two letters swapped": ("jonas.berg@kranich-logisitk.de", "", "", PASS, "lookalike", "kranich-logistik.de"),
    "a letter added": ("jonas@kranich-logisstik.de", "", "", PASS, "lookalike", "kranich-logistik.de"),
    "the owner's own domain": ("IT <it@hartmann-stud1o.de>", "", "", PASS, "lookalike", "hartmann-studio.de"),
    # a known name on a stranger's address
    "a known name on a free-mail address": (
        "Sabine Kranich <sabine.kranich.office@gmail.com>", "", "", PASS, "display_name", "kranich-logistik.de"),
    "the name written last, first": ('"Kranich, Sabine" <sk@outlook.example>', "", "", PASS, "display_name",
                                     "kranich-logistik.de"),
    "the name in Cyrillic letters": ("S\u0430bine Kr\u0430nich <sk@outlook.example>", "", "", PASS, "display_name",
                                     "kranich-logistik.de"),
    "a known address as the name": ('"claire@atelier-moreau.fr" <claire@moreau-paris.example>', "", "", PASS,
                                    "display_name", "atelier-moreau.fr"),
    # a forged known sender
    "DMARC fail from a known domain": (SABINE, "", "", DMARC_FAIL, "spoofed", "kranich-logistik.de"),
    "SPF fail, no DKIM, no DMARC": (SABINE, "", "", SPF_FAIL, "spoofed", "kranich-logistik.de"),
    # payment-detail changes, even from a real correspondent's own address (DMARC passes)
    "new bank details (en)": (SABINE, "Updated bank details", "Please note our bank details have changed.", PASS,
                              "payment_change", "kranich-logistik.de"),
    "new IBAN (de)": (SABINE, "Rechnung", "Bitte beachten Sie, dass sich unsere Bankverbindung geändert hat.", PASS,
                      "payment_change", "kranich-logistik.de"),
    "nouveau RIB (fr)": ("Claire Moreau <claire@atelier-moreau.fr>", "Facture", ("Merci de régler sur notre nouveau "
                         "RIB ci-joint."), PASS, "payment_change", "atelier-moreau.fr"),
    "urgent transfer (en)": (SABINE, "Quick one", "I need you to wire 12,400 EUR to a new supplier today.", PASS,
                             "payment_change", "kranich-logistik.de"),
    "urgent transfer (de)": (SABINE, "Bitte", "Ich brauche heute noch eine dringende Überweisung über 9.400 €.", PASS,
                             "payment_change", "kranich-logistik.de"),
    "urgent transfer (fr)": ("claire@atelier-moreau.fr", "Urgent : virement", "Peux-tu t'en occuper ?", PASS,
                             "payment_change", "atelier-moreau.fr"),
    "gift cards (en)": ("boss@new-client.example", "Favour", "Buy 5 Apple gift cards and send me the codes.", PASS,
                        "payment_change", None),
    "gift cards (de)": (SABINE, "Bitte", "Ich brauche 5 Amazon-Gutscheine. Schick mir bitte die Codes.", PASS,
                        "payment_change", "kranich-logistik.de"),
    "gift cards (fr)": (SABINE, "Service", "Achète des cartes cadeaux et envoie-moi les codes.", PASS,
                        "payment_change", "kranich-logistik.de"),
    # credential requests: a foreign link, or a failed check
    "credentials, foreign link (en)": ("security@mail.example", "Verify your account", "Log in: https://evil.example/x",
                                       PASS, "credentials", None),
    "credentials, DMARC fail (de)": ("service@konto-sicherung.example", "Konto", ("Ihr Konto wurde eingeschränkt. "
                                     "Bitte bestätigen Sie Ihre Identität: https://konto-sicherung.example/login"),
                                     DMARC_FAIL, "credentials", None),
    "credentials, separable verb (de)": ("it@mailbox.example", "Postfach voll", ("Bitte melden Sie sich hier an: "
                                         "https://upgrade.example/x"), PASS, "credentials", None),
    "credentials, DMARC fail (fr)": ("securite@banque-verif.example", "Action requise", ("Votre compte sera suspendu. "
                                     "Confirmez votre identité ici."), DMARC_FAIL, "credentials", None),
}  # fmt: skip


@pytest.mark.parametrize(
    ("sender", "subject", "body", "auth", "kind", "resembles"), FLAGGED.values(), ids=FLAGGED.keys()
)
def test_given_an_attack_then_it_is_flagged_with_its_kind_and_whom_it_passes_for(
    sender, subject, body, auth, kind, resembles
):
    found = suspected_phishing(email(sender, subject, body, auth), KNOWN)
    assert found is not None and found.kind == AttackKind(kind) and found.resembles == resembles, found


LEFT_ALONE = {
    "a real correspondent": (SABINE, "Entwürfe", "Schaffst du die Entwürfe bis Freitag?", PASS),
    "her colleague, same organisation, a new address": ("Sabine <sabine@kranich-logistik.de>", "Hi", "Hallo", PASS),
    "a sub-domain of a known organisation": ("Priya <sabine@mail.kranich-logistik.de>", "Notes", "Notes.", PASS),
    "a service writing in a known name": ("Dana Rivera <notifications@github.example>", "Re: [x] PR", "LGTM", PASS),
    "an invoice stating an IBAN": (SABINE, "Rechnung 2026-118", ("Bitte überweisen Sie den Betrag wie immer auf "
                                   "unser Konto, IBAN DE12 4306 0967 1234 5678 00."), PASS),
    "a transfer of files, urgent": (SABINE, "Urgent", "Can you transfer the files to staging today? It's urgent.", PASS),
    "a shop's gift-card code": ("Shop <gutschein@shop.example>", "Ihr Geschenkgutschein", ("Ihr Gutscheincode: 7K3P. "
                                "Lösen Sie den Code in Ihrem Konto ein."), PASS),
    "a short name one letter off": ("x@acne.example", "", "", PASS),
    "another suffix of a known name": ("x@kranich-logistik.com", "", "", PASS),
    "SPF softfail from a known domain": (SABINE, "", "", {"spf": "softfail", "dkim": "none", "dmarc": "none"}),
    "a stranger whose DMARC failed, asking nothing": ("news@shop.example", "Sale", "50 % off", DMARC_FAIL),
    "a stranger's ordinary name": ("Anna Schmidt <anna@new-client.example>", "Anfrage", "Haben Sie Zeit?", PASS),
}  # fmt: skip


@pytest.mark.parametrize(("sender", "subject", "body", "auth"), LEFT_ALONE.values(), ids=LEFT_ALONE.keys())
def test_given_ordinary_mail_then_nothing_is_flagged(sender, subject, body, auth):
    assert suspected_phishing(email(sender, subject, body, auth), KNOWN) is None


def test_a_payment_request_is_a_call_to_confirm_never_an_accusation():
    found = suspected_phishing(email(SABINE, "Neue Bankverbindung", "Unsere neue IBAN lautet DE89 …"), KNOWN)
    assert found is not None and found.headline == "payment-detail change: confirm by phone"
    assert "phishing" not in found.problem and "by phone" in found.reason


def test_a_look_alike_asking_for_money_says_both():
    found = suspected_phishing(
        email("jonas.berg@kranich-logistlk.de", "Rechnung", "Bitte zahlen Sie ab sofort auf unser neues Konto."), KNOWN
    )
    assert found is not None and found.kind is AttackKind.LOOKALIKE and "neues Konto" in found.reason


@pytest.mark.parametrize(
    ("a", "b", "near"),
    [
        ("logistik", "logistlk", True),
        ("logistik", "logisitk", True),
        ("logistik", "logisstik", True),
        ("logistik", "logstik", True),
        ("logistik", "lgositik", False),
        ("logistik", "logistikxx", False),
    ],
)
def test_one_edit(a, b, near):
    assert within_one_edit(a, b) is near and within_one_edit(b, a) is near


def test_the_organisation_and_the_name_a_person_reads():
    assert organisation("mail.kranich-logistik.de") == ("kranich-logistik", "de")
    assert organisation("mail.fernwood.co.uk") == ("fernwood", "co.uk")
    assert name_key("Kranich, Sabine") == name_key("sabine  KRANICH") == name_key("Sabine Kranich (Kranich Logistik)")
    assert name_key("Support") == "" and name_key("") == ""
    assert name_key("Élise Fontaine") == name_key("Elise Fontaine")


@pytest.mark.parametrize(
    "frontmatter",
    [
        {"suspected_phishing": "yes", "phishing_kind": ["lookalike"], "phishing_reason": {"x": 1}},
        {"suspected_phishing": True, "phishing_kind": "from-the-future", "resembles": 12},
        {"suspected_phishing": "TRUE", "phishing_reason": "x" * 100_000, "resembles": None},
    ],
)
def test_given_hand_edited_flags_then_the_note_model_reads_them_typed_and_never_raises(frontmatter):
    suspicion = note_facts("Needs_Action/x.md", {"type": "email", **frontmatter}).suspicion
    assert suspicion is not None and suspicion.kind in set(AttackKind) and len(suspicion.reason) <= 1_000
    assert suspicion_of({"suspected_phishing": "no"}) is None and suspicion_of({}) is None


def test_known_is_whom_the_owner_wrote_to_as_the_owners_identity_records_it(vault_dir: Path):
    """Given the owner's imported sent history, a sent message the provider reported and the authority vouches
    for, one the follow-up ledger was told is outbound but nobody vouches for, an inbound message, and H0's
    own send, When whom the owner knows is read, Then it is the vouched recipients and the ledger's only."""
    state = StateDB.for_vault(vault_dir, load_settings(vault_path=vault_dir).h0_state_dir)
    history = [
        HistoryMessage("<h1>", "t1", True, "lena@own.example", (("Sabine Kranich", "sabine@kranich.example"),), "s", 1.0, "x"),
        HistoryMessage("<h2>", "t2", False, "eve@evil.example", (("Lena", "lena@own.example"),), "s", 2.0, "x"),
    ]  # fmt: skip
    MailHistory(state).commit(history)
    FollowupLedger(state).record(
        [
            Message("<f1>", "t3", True, "lena@own.example", (("Claire", "claire@moreau.example"),), "s", 3.0),
            Message("<f2>", "t4", True, "lena@own.example", (("Mallory", "m@forged.example"),), "s", 4.0),
        ]
    )
    OwnerAuthority(state).record([Observed("<f1>", Evidence.SENT_LABEL, "gmail:lena", "lena@own.example")])
    state.claim_send(
        key="k", rfc822_message_id="<k@h0>", content_hash="c", caps=[], in_flight_s=60, recipients="o@ops.example"
    )
    state.mark_sent(
        "<k@h0>", provider_message_id=None, thread_id=None, sent_at="2026-01-01T00:00:00Z", backend="outbox"
    )
    known = OwnerKnown(state, ["lena@own.example"]).current()
    assert known.addresses == {"sabine@kranich.example", "claire@moreau.example", "o@ops.example", "lena@own.example"}
    assert known.named("Kranich, Sabine") == {"sabine@kranich.example"} and "own.example" in known.own
    assert not known.knows_domain("evil.example") and not known.knows_domain("forged.example")
