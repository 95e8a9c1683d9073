"""Suspected attacks: triage never serves an attacker a reply draft, and the owner is told why.

"Known" is whom the owner knows (h0.mail.deception.known.Known): the people the owner wrote to, the
people the owner's People notes name, and the owner's own addresses — never whoever wrote in, so an
attacker's mail in Needs_Action/ cannot make the real correspondent's next email look suspect. The
signs, checked in this order, the first one found being the note's kind (h0.vault.suspicion):

- **a look-alike sender** (`lookalike`): the sender's domain is not known and passes for a known one —
  the same look (Unicode confusables, `rn` for `m`, `1` for `l`, punycode) or one letter off
  (`kranich-logistlk.de` for `kranich-logistik.de`);
- **a borrowed name** (`display_name`): the sender's name is the name of someone known (or shows an
  address the owner knows) while the address is not theirs and not of their organisation — a service's
  role address (`Dana <notifications@github.com>`) writes on someone's behalf and is not one;
- **a forged known sender** (`spoofed`): the sender's domain is known and the receiving provider's
  DMARC (or SPF, without a passing DKIM signature) check failed (h0.mail.incoming.authresults);
- **a credential request** (`credentials`): the email asks to log in, give a password or confirm an
  identity or details (English, German, French), and links to a host that is not the sender's domain,
  or the sender's authentication failed;
- **a payment request** (`payment_change`, h0.triage.payment): new bank details, an urgent transfer,
  gift-card codes — from anyone, a known correspondent's own account included: the owner is asked to
  confirm by phone, and the person is not called an impostor.

The triage handler asks `suspected_phishing` for every email after the decider (rules or model): a
suspect is flagged on the note (`Suspicion.frontmatter`), left for the owner (`needs_info`, listed by
`h0 status` with the domain it resembles) and never gets a reply draft to the sender; the send path holds
an approved reply to it (h0.mail.outgoing). A false alarm costs one glance; a reply to an attacker more.

`judged_hostile` reads a model's reasoning: the prompt asks it to say so when an email tries to
instruct it; the safety net (h0.triage.safety) uses it so that words an attacker chose cannot
turn the model's `archive` into an `urgent` with a reply draft.
"""

from __future__ import annotations

import functools
import re

from h0.mail.deception.known import Known, organisation, role_address
from h0.mail.deception.linktext import linked_hosts
from h0.mail.deception.lookalike import ascii_domain, shown
from h0.mail.headers import addresses_shown
from h0.mail.incoming.authresults import forged_sender
from h0.printable import one_line
from h0.triage.models import EmailInput
from h0.triage.payment import payment_request
from h0.vault.suspicion import AttackKind, Suspicion
from h0.vault.values import named_addresses

__all__ = ["SCAN_CHARS", "judged_hostile", "suspected_phishing"]

SCAN_CHARS = 8_000  # a credential request says so up front, like financial mail (h0.triage.safety)
_CREDENTIAL_PHRASES = (
    (
        r"\b(?:verify (?:your|the) (?:account|identity|e-?mail|details|information)|confirm (?:your|the) "
        r"(?:account|identity|password|details|login|information)|password|passcode|one-time code|log ?in|"
        r"sign ?in|credentials|account (?:is |has been |will be )?(?:suspended|locked|disabled|closed|limited)|"
        r"unusual (?:sign-in |login )?activity|reset your|update your (?:payment|billing|account))\b"
    ),
    # German: bestätigen Sie Ihre Identität, Passwort, Ihr Konto wurde eingeschränkt, …
    (
        r"\b(?:bestätigen|verifizieren|aktualisieren|überprüfen)\s+Sie\s+(?:jetzt\s+|bitte\s+)?Ihre\s+"
        r"(?:Identität|Daten|Angaben|Zugangsdaten|Kontodaten|Zahlungsdaten|Adresse|Konto\w*)\b"
    ),
    (
        r"\b(?:bestätige|verifiziere|aktualisiere)\s+(?:jetzt\s+|bitte\s+)?deine\s+"
        r"(?:Identität|Daten|Angaben|Zugangsdaten|Adresse|Konto\w*)\b"
    ),
    r"\b(?:Passwort|Kennwort|Zugangsdaten|anmelden|einloggen)\b",
    r"\b(?:melden\s+Sie\s+sich|melde\s+dich)\b[^.!?\n]{0,60}?\ban\b",  # a separable verb: "melden Sie sich … an"
    r"\bKonto\s+(?:wurde|ist|wird)\s+(?:vorübergehend\s+)?(?:gesperrt|eingeschränkt|deaktiviert)\b",
    r"\bungewöhnliche\s+(?:Aktivität|Anmeldung)",
    # French: confirmez votre identité, mot de passe, votre compte sera suspendu, …
    (
        r"\b(?:confirmez|vérifiez|validez|mettez\s+à\s+jour)\s+(?:votre|vos)\s+(?:identité|compte|adresse|"
        r"informations|coordonnées|mot\s+de\s+passe|données|identifiants)"
    ),
    r"\b(?:mot\s+de\s+passe|identifiants?\s+de\s+connexion|connectez-vous|reconnectez-vous)\b",
    r"\bcompte\s+(?:sera|a\s+été|est)\s+(?:temporairement\s+)?(?:suspendu|bloqué|limité|désactivé)",
    r"\bactivité\s+inhabituelle",
)
_CREDENTIALS = re.compile("|".join(_CREDENTIAL_PHRASES), re.IGNORECASE)
# Words every match of _CREDENTIALS contains (lowered): an ASCII text with none of them is not searched
# (the search tries every alternative at every character). Not for other text: under IGNORECASE "ſ"
# matches "s" and "ı" matches "i", which no lowering shows.
_CREDENTIAL_WORDS = (
    *("verify", "confirm", "password", "passcode", "one-time code", "login", "log in", "signin", "sign in"),
    *("credentials", "account", "unusual", "reset your", "update your"),
    *("ihre", "deine", "passwort", "kennwort", "zugangsdaten", "anmelden", "einloggen", "konto", "melde"),
    *("votre", "vos", "passe", "identifiant", "connect", "compte"),
)
_HOSTILE_JUDGEMENT = re.compile(
    r"\b(?:prompt[- ]injection|injection|spam|scam|phishing|phish|fraud|malicious|manipulat\w*|"
    r"tries to instruct|trying to instruct|attempts? to instruct|instructs? me|ignore previous)\b",
    re.IGNORECASE,
)
_CONFIRM = "confirm it by phone, on a number you already have, before you pay or change anything"


def suspected_phishing(email: EmailInput, known: Known) -> Suspicion | None:
    """Why `email` looks like an attack (see the module), or None."""
    name, address = _sender(email.sender) if len(email.sender) <= 1_000 else _parsed(email.sender)
    domain = ascii_domain(address.rpartition("@")[2]) if "@" in address else ""
    found = _impostor(name, address, domain, email, known)
    asks = payment_request(email.subject, email.body)
    if found is not None:
        if asks is not None and found.kind is not AttackKind.PAYMENT_CHANGE:
            return found.model_copy(update={"reason": f"{found.reason}; and it asks: '{asks}'"})
        return found
    if asks is None:
        return None
    whose = f"from {address}, " if address else ""
    return Suspicion(
        kind=AttackKind.PAYMENT_CHANGE,
        reason=f"it asks: '{asks}' ({whose}perhaps a hijacked account) — {_CONFIRM}",
        resembles=domain if domain and known.knows_domain(domain) else None,
    )


def _impostor(name: str, address: str, domain: str, email: EmailInput, known: Known) -> Suspicion | None:
    """The first sign that the sender passes for someone else, or asks for credentials (see the module)."""
    if domain:
        like = known.resembles(domain)
        if like is not None:
            whose = "your own domain" if like.known in known.own else "a domain you know"
            return Suspicion(
                kind=AttackKind.LOOKALIKE,
                reason=f"the sender's domain {shown(domain)} {like.how} {shown(like.known)}, {whose}, but is a different one",
                resembles=like.known,
            )
    if name and address and not known.knows_address(address):
        borrowed = _borrowed(name, address, domain, known)
        if borrowed is not None:
            return borrowed
    forged = forged_sender(email.auth)
    if forged and domain and known.knows_domain(domain):
        return Suspicion(
            kind=AttackKind.SPOOFED,
            reason=f"{forged} for {shown(domain)}, a domain you know: the sender's address may be forged",
            resembles=domain,
        )
    foreign = [host for host in linked_hosts(email.body) if not _same_site(host, domain)]
    if not foreign and not forged:
        return None
    asks = _credential_request(f"{email.subject}\n{email.body[:SCAN_CHARS]}")
    if asks is None:
        return None
    said = f"it asks for credentials ('{' '.join(asks.group(0).lower().split())}')"
    if foreign:
        sender = shown(domain) if domain else "no sender domain"
        return Suspicion(
            kind=AttackKind.CREDENTIALS,
            reason=f"{said} and links to {shown(foreign[0])}, not the sender's domain ({sender})",
        )
    return Suspicion(kind=AttackKind.CREDENTIALS, reason=f"{said} and the sender's check failed ({forged})")


def _borrowed(name: str, address: str, domain: str, known: Known) -> Suspicion | None:
    """A known person's name — or an address the owner knows, written as the name — on a stranger's address."""
    for written in addresses_shown(name):
        other = ascii_domain(written.rpartition("@")[2])
        if written != address and (known.knows_address(written) or known.knows_domain(other)):
            return Suspicion(
                kind=AttackKind.DISPLAY_NAME,
                reason=f"the sender's name shows {written}, but the mail comes from {address}",
                resembles=other,
            )
    named = sorted(known.named(name)) if not role_address(address) else []
    if not named:
        return None
    theirs = {organisation(ascii_domain(a.rpartition("@")[2])) for a in named}
    if organisation(domain) in theirs:
        return None
    return Suspicion(
        kind=AttackKind.DISPLAY_NAME,
        reason=f"the name '{one_line(name, 80)}' is someone you know ({named[0]}), but {address} is not their address",
        resembles=named[0].rpartition("@")[2],
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


@functools.lru_cache(maxsize=1024)
def _sender(sender: str) -> tuple[str, str]:
    # A batch's mail comes from a few senders, each parsed once (a From line of a sane length remembered).
    return _parsed(sender)


def _parsed(sender: str) -> tuple[str, str]:
    found = named_addresses(sender)
    name, address = found[0] if found else ("", "")
    if "@" not in address:
        return " ".join(name.split()), ""
    local, _, host = address.rpartition("@")
    return " ".join(name.split()), f"{local.lower()}@{ascii_domain(host)}"


def _same_site(host: str, domain: str) -> bool:
    """`host` is the sender's domain, one of its sub-domains, or a parent of it (mail.bank.com → bank.com)."""
    if not domain:
        return False
    return host == domain or host.endswith("." + domain) or domain.endswith("." + host)
