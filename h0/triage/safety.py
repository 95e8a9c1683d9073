"""The hard safety rule: financial or legal-looking mail is never auto-archived.

It applies after every decider (rules file or LLM) and nothing configurable can switch it
off. An `archive` for such mail becomes `urgent` when the mail also looks urgent, else
`needs_info`, and the reasoning says why. Detection is deliberately broad: a false alarm
costs the human one glance, a missed invoice or subpoena costs far more.

The words it looks for are the sender's. When the decider judged the email spam, phishing or an
attempt to instruct it (h0.triage.phishing.judged_hostile), an attacker's "urgent invoice" must
not buy a reply draft to the attacker: such mail is still never archived, but it becomes
`needs_info`, never `urgent`, and no reply is drafted.
"""

from __future__ import annotations

import re
import string

from h0.triage.models import Decision, EmailInput, ReplyContext, TriageDecision
from h0.triage.phishing import judged_hostile
from h0.triage.template import render

# Financial or legal mail says so up front (subject, first paragraphs, attachment names).
# Scanning whole bodies would catch the addresses and legal boilerplate in every bulk-mail
# footer ("1 Bank Street", "tax-deductible") and keep every newsletter out of the archive.
BODY_SCAN_CHARS = 4_000

# fmt: off
_WORD_TERMS = (
    # money
    "invoice", "invoices", "invoiced", "invoicing", "payment", "payments", "wire transfer",
    "bank transfer", "bank", "banking", "iban", "swift code", "routing number", "direct debit",
    "remittance", "overdue", "past due", "amount due", "balance due", "outstanding balance",
    "billing statement", "tax", "taxes", "vat", "irs", "hmrc", "refund", "refunds", "chargeback",
    "payroll", "purchase order", "debt collection", "credit card",
    # law and privacy
    "contract", "contracts", "lawsuit", "litigation", "subpoena", "summons", "court", "attorney",
    "lawyer", "solicitor", "legal notice", "legal action", "cease and desist", "nda",
    "non-disclosure", "gdpr", "dsar", "data subject", "subject access request", "right to erasure",
    "right to be forgotten", "ccpa", "dmca", "copyright infringement",
    # a few common non-English words for the same things
    "rechnung", "mahnung", "zahlung", "überweisung", "factura", "facture", "fattura",
    "paiement", "pago", "abogado", "avocat", "anwalt",
)
# fmt: on
# CJK has no spaces, so a word boundary would never match inside a sentence.
_CJK_TERMS = ("請求書", "請求", "発票", "发票", "付款", "振込", "支払", "契約", "合同", "訴訟", "弁護士", "律师")


# Word lookup, not one big regex: the terms start with most letters of the alphabet, so a
# regex would try a match at nearly every position (~0.5 ms per 4 KB); splitting the lowered
# text into a set of words and intersecting is ~4x cheaper. Hyphens split too, so
# "e-invoice" still shows "invoice" and "non-disclosure" is the phrase "non disclosure".
_SEPARATORS = str.maketrans({c: " " for c in string.punctuation + "“”‘’«»„‚–—…·•、。，：；！？（）【】「」"})
_ORDERED = tuple(" ".join(t.replace("-", " ").split()) for t in _WORD_TERMS)
_SINGLE_WORDS = frozenset(t for t in _ORDERED if " " not in t)
_PHRASE_STARTS = frozenset(t.split()[0] for t in _ORDERED if " " in t)

_URGENT = re.compile(
    r"\b(?:urgent|urgently|asap|a\.s\.a\.p\.|immediately|right away|time[- ]sensitive|"
    r"deadline today|due today|by end of (?:the )?day|by eod|final notice|dringend|urgente)\b",
    re.IGNORECASE,
)

_URGENT_LOWERED = re.compile(_URGENT.pattern)  # for lowered ASCII text (the pattern is lower case)

DRAFT_MARKER = "[H0 draft — edit before approving]"
# The reply used when a drafting decision has no template of its own (a rule without
# `reply`, or the override below): marked so the human cannot mistake it for a finished one.
DEFAULT_REPLY = (
    DRAFT_MARKER + "\n"
    "{greeting}\n\n"
    "Thanks for your message. I have seen it and will get back to you shortly.\n\n"
    "{sign_off}"
)


def financial_or_legal(email: EmailInput) -> str | None:
    """The first financial/legal term (in _WORD_TERMS order, so always the same one), or None."""
    text = "\n".join(
        (email.subject, email.sender, " ".join(email.attachment_names), email.body[:BODY_SCAN_CHARS])
    ).lower()
    words = text.translate(_SEPARATORS).split()
    present = _SINGLE_WORDS.intersection(words)
    phrases = None
    if not _PHRASE_STARTS.isdisjoint(words):
        phrases = f" {' '.join(words)} "
    if present or phrases:
        for term in _ORDERED:
            if term in present or (phrases and " " in term and f" {term} " in phrases):
                return term
    if not text.isascii():  # O(1) in CPython: skip the CJK search for ASCII mail
        return next((term for term in _CJK_TERMS if term in text), None)
    return None


def looks_urgent(email: EmailInput) -> bool:
    return _urgent(email.subject) or _urgent(email.body[:BODY_SCAN_CHARS])


def _urgent(text: str) -> bool:
    if text.isascii():  # lowered ASCII matches the lowercase pattern as IGNORECASE would, ~3x faster
        return _URGENT_LOWERED.search(text.lower()) is not None
    return _URGENT.search(text) is not None


def enforce(
    decision: TriageDecision, email: EmailInput, context: ReplyContext | None = None
) -> tuple[TriageDecision, str | None]:
    """Apply the no-archive rule; return the (possibly changed) decision and a warning if changed."""
    if decision.decision != "archive":
        return decision, None
    term = financial_or_legal(email)
    if term is None:
        return decision, None
    hostile = judged_hostile(decision.reasoning)
    urgent = looks_urgent(email) and not hostile
    new: Decision = "urgent" if urgent else "needs_info"
    warning = (
        f"'archive' overridden to '{new}': the mail looks financial or legal ('{term}') and is never auto-archived"
        + (" (judged spam or an injection attempt: no reply drafted)" if hostile else "")
    )
    why = "judged spam or an injection attempt, so no reply is drafted; " if hostile else ""
    changed = TriageDecision(
        decision=new,
        confidence=max(decision.confidence, 0.9),
        reasoning=f"Held for a human: looks financial/legal ('{term}'); {why}was: {decision.reasoning}",
        reply_body=_default_reply(email, context) if urgent else None,
    )
    return changed, warning


def _default_reply(email: EmailInput, context: ReplyContext | None) -> str:
    return render(DEFAULT_REPLY, email, "safety", "", context)
