"""Suspected phishing: triage never serves an attacker a reply draft, and the owner is told why.

Two signs, either enough:
- **a look-alike sender**: the sender's domain looks like (h0.mail.deception.lookalike's skeleton) the
  owner's own domain or a domain the vault has corresponded with (the send ledger, the notes of
  Needs_Action/ and Done/: past correspondents), and is a different domain (`bаnk.com`, Cyrillic а,
  for `bank.com`; `paypa1.com`);
- **a credential request with a foreign link**: the subject or the first paragraphs ask to
  verify an account, confirm an identity, log in or give a password, and the email links to a
  host that is not the sender's domain (or one of its sub-domains).

The triage handler asks `suspected_phishing` for every email after the decider (rules or model):
a suspect is flagged on the note (`suspected_phishing: true`, `phishing_reason:`), left for the
owner (`needs_info`, shown with its reason in `h0 status` and on the dashboard) and never gets a
reply draft to the sender. A false alarm costs one glance; a drafted reply to a phisher costs more.

`judged_hostile` reads a model's reasoning: the prompt asks it to say so when an email tries to
instruct it; the safety net (h0.triage.safety) uses it so that words an attacker chose cannot
turn the model's `archive` into an `urgent` with a reply draft.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from email.utils import parseaddr

from h0.mail.deception.linktext import linked_hosts
from h0.mail.deception.lookalike import ascii_domain, shown, skeleton
from h0.triage.models import EmailInput

__all__ = ["SCAN_CHARS", "judged_hostile", "suspected_phishing"]

SCAN_CHARS = 8_000  # a credential request says so up front, like financial mail (h0.triage.safety)
_CREDENTIALS = re.compile(
    r"\b(?:verify (?:your|the) (?:account|identity|e-?mail|details|information)|confirm (?:your|the) "
    r"(?:account|identity|password|details|login|information)|password|passcode|one-time code|log ?in|"
    r"sign ?in|credentials|account (?:is |has been |will be )?(?:suspended|locked|disabled|closed|limited)|"
    r"unusual (?:sign-in |login )?activity|reset your|update your (?:payment|billing|account))\b",
    re.IGNORECASE,
)
# Words every match of _CREDENTIALS contains (lowered): an ASCII text with none of them is not searched
# (the search tries every alternative at every character). Not for other text: under IGNORECASE "ſ"
# matches "s" and "ı" matches "i", which no lowering shows.
_CREDENTIAL_WORDS = (
    *("verify", "confirm", "password", "passcode", "one-time code", "login", "log in", "signin", "sign in"),
    *("credentials", "account", "unusual", "reset your", "update your"),
)
_HOSTILE_JUDGEMENT = re.compile(
    r"\b(?:prompt[- ]injection|injection|spam|scam|phishing|phish|fraud|malicious|manipulat\w*|"
    r"tries to instruct|trying to instruct|attempts? to instruct|instructs? me|ignore previous)\b",
    re.IGNORECASE,
)


def suspected_phishing(
    email: EmailInput, known: Mapping[str, set[str]], owner_domains: Iterable[str] = ()
) -> str | None:
    """Why `email` looks like phishing (a sentence for the note and the status), or None.

    `known` is {skeleton: {ascii domain, …}} of the domains corresponded with (h0.mail.deception.lookalike.Correspondents).
    """
    domain = _sender_domain(email.sender)
    if domain:
        own = {ascii_domain(d) for d in owner_domains if d}
        shape = skeleton(domain)
        like = sorted((known.get(shape, set()) | {d for d in own if skeleton(d) == shape}) - {domain})
        if like:
            whose = "your own domain" if like[0] in own else "a domain you have corresponded with"
            return f"the sender's domain {shown(domain)} looks like {shown(like[0])}, {whose}, but is a different one"
    asks = _credential_request(f"{email.subject}\n{email.body[:SCAN_CHARS]}")
    if asks is None:
        return None
    foreign = [host for host in linked_hosts(email.body) if not _same_site(host, domain)]
    if not foreign:
        return None
    sender = shown(domain) if domain else "no sender domain"
    return (
        f"it asks for credentials ('{asks.group(0).lower()}') and links to {shown(foreign[0])}, "
        f"not the sender's domain ({sender})"
    )


def _credential_request(text: str) -> re.Match[str] | None:
    if text.isascii():  # O(1) in CPython
        lowered = text.lower()
        for word in _CREDENTIAL_WORDS:
            if word in lowered:
                break
        else:
            return None
    return _CREDENTIALS.search(text)


def judged_hostile(reasoning: str) -> bool:
    """Whether a model's reasoning says the email is spam, phishing or an attempt to instruct it."""
    return _HOSTILE_JUDGEMENT.search(reasoning or "") is not None


def _sender_domain(sender: str) -> str:
    # A batch's mail comes from a few senders, each parsed once (a From line of a sane length remembered).
    return _remembered_domain(sender) if len(sender) <= 1_000 else _domain_of(sender)


@functools.lru_cache(maxsize=1024)
def _remembered_domain(sender: str) -> str:
    return _domain_of(sender)


def _domain_of(sender: str) -> str:
    address = parseaddr(sender or "")[1]
    return ascii_domain(address.rpartition("@")[2]) if "@" in address else ""


def _same_site(host: str, domain: str) -> bool:
    """`host` is the sender's domain, one of its sub-domains, or a parent of it (mail.bank.com → bank.com)."""
    if not domain:
        return False
    return host == domain or host.endswith("." + domain) or domain.endswith("." + host)
