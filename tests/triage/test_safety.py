"""The hard rule: given mail that looks financial or legal, when any decider says archive,
then it is held for a human instead — and mail that merely contains look-alike words is not."""

from __future__ import annotations

import pytest

from h0.triage import DRAFT_MARKER, EmailInput, ReplyContext, TriageDecision
from h0.triage.safety import enforce, financial_or_legal

ARCHIVE = TriageDecision(decision="archive", confidence=0.95, reasoning="bulk mail")


def email(subject: str = "", body: str = "", sender: str = "x@example.com", **extra: object) -> EmailInput:
    return EmailInput.model_validate({"from": sender, "subject": subject, "body": body, **extra})


@pytest.mark.parametrize(
    ("mail", "term"),
    [
        (email("Your e-Invoice is ready"), "invoice"),
        (email(body="Please sign the NON-DISCLOSURE agreement."), "non disclosure"),
        (email(body="Confirm the wire\n  transfer details."), "wire transfer"),
        (email(body="Letter from the IRS."), "irs"),
        (email("(GDPR) request"), "gdpr"),
        (email("Scan", attachment_names=["refund_form.pdf"]), "refund"),
        (email("Hi", sender="Payments <payments@shop.example>"), "payments"),
        (email("請求書の送付について"), "請求書"),
        (email("Ihre Rechnung"), "rechnung"),
        (email("Invoice and contract", body="payment"), "invoice"),  # always the same term: list order
    ],
)
def test_given_financial_or_legal_mail_then_the_term_is_found(mail: EmailInput, term: str) -> None:
    assert financial_or_legal(mail) == term


@pytest.mark.parametrize(
    "mail",
    [
        email("First things first", body="Theirs is the syntax of private courtyards."),
        email("Weekly digest", body="Read more about our taxonomy of banksia plants."),
        email("Hello", body="x" * 5000 + " invoice"),  # beyond the scanned head: a footer, not the topic
    ],
)
def test_given_look_alike_words_then_nothing_is_found(mail: EmailInput) -> None:
    assert financial_or_legal(mail) is None


def test_given_an_urgent_legal_mail_said_archive_then_it_becomes_urgent_with_a_marked_draft() -> None:
    mail = email("FINAL NOTICE: lawsuit", body="Respond immediately.", sender="Kay Law <kay@law.example>")
    decision, warning = enforce(ARCHIVE, mail, ReplyContext(greeting="Hi Kay,", sign_off="Best,"))
    assert decision.decision == "urgent" and decision.confidence >= 0.9
    assert decision.reply_body and decision.reply_body.startswith(DRAFT_MARKER) and "Hi Kay," in decision.reply_body
    assert decision.reply_body.endswith("Best,")
    assert warning and "'lawsuit'" in warning


def test_given_other_decisions_then_the_rule_changes_nothing() -> None:
    mail = email("Invoice 12")
    for decision in ("needs_info", "draft_reply", "urgent", "delegate"):
        original = TriageDecision(decision=decision, confidence=0.5, reasoning="r", reply_body="b", delegate_to="d")
        assert enforce(original, mail) == (original, None)
    assert enforce(ARCHIVE, email("Lunch")) == (ARCHIVE, None)


@pytest.mark.parametrize(
    ("subject", "body", "urgent"),
    [
        ("INVOICE overdue", "Pay ASAP please", True),
        ("Invoice", "Due Today.", True),
        ("Invoice", "pay by End Of The Day", True),
        ("Invoice", "Pay it Right Away", True),
        ("Invoice", "Time-Sensitive", True),
        ("Invoice", "nothing pressing; we are not urgently-ish", True),  # "urgently" is a word of its own
        ("Invoice", "see the urgentes list", False),  # no word boundary after "urgent"
        ("Invoice", "Rechnung: DRINGEND", True),
        ("Rechnung – DRINGEND", "", True),  # beyond ASCII: the pattern as written, IGNORECASE
        ("Rechnung – bald", "Grüße", False),
        ("Invoice", "x" * 5_000 + " urgent", False),  # beyond the scanned head
    ],
)
def test_given_an_archived_invoice_then_it_is_urgent_exactly_when_it_says_so_in_any_case(
    subject: str, body: str, urgent: bool
) -> None:
    decision, _ = enforce(ARCHIVE, email(subject, body=body))
    assert decision.decision == ("urgent" if urgent else "needs_info")
