"""Whom the owner knows, and what can pass for them: the "known" every attack check asks.

Known means **the owner wrote to them** (h0.mail.owner.OwnerAuthority.recipients: the sent history an
import or first sync kept, the provider's sent mail since, H0's own sends), **a People note names them**,
or **it is the owner's own address** — never that they wrote in. An attacker's mail sitting in
Needs_Action/ must not make the real client's next email "look like" the attacker's domain: a domain
only strangers write from is no one to be mistaken for.

What passes for a known domain (`Known.resembles`), each a rule a reviewer can check on real mail:
- **the same look**: both domains have one skeleton (h0.mail.deception.lookalike: Unicode's UTS #39
  confusables, `rn` for `m`, `1` for `l`, accents, punycode read as what it shows);
- **one letter off**: the names a person reads — the label before the public suffix (`kranich-logistik`
  of `kranich-logistik.de`, `acme` of `acme.co.uk`) — differ by one letter typed, dropped, added or two
  swapped (`kranich-logistlk.de`, `brightllne.io`), the suffix is the same, and both names have at least
  MIN_EDIT_LABEL characters: shorter names differ by one letter from too many real ones (`gmail`,
  `email`). A sub-domain of a known domain, or another sub-domain of its organisation, is the organisation
  itself, never a look-alike.

Without a public-suffix list (no download at run time, no new dependency) "the suffix" is the last label,
or the last two when the second-last is a common second-level word (`co.uk`, `com.au`): a rare suffix
outside that list is compared as if its second-level label were the name, which only ever adds a case
to look at.

Names (`Known.named`) are compared as a person reads them: confusables mapped, accents and case dropped,
punctuation ignored, word order free (`Kranich, Sabine`), a parenthesis left out (a People note named
`Sabine Kranich (Kranich Logistik)`); only names of two words or more count — "Support" is nobody.
A role address (`role_address`: `notifications@`, `no-reply@`, RFC 2142's mailbox names) that carries a
person's name is a service writing on their behalf — GitHub, Google Docs, Slack, a calendar — not
someone passing for them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from h0.mail.deception.lookalike import ascii_domain, skeleton
from h0.mail.owner import OwnerAuthority
from h0.state import StateDB

__all__ = [
    "MIN_EDIT_LABEL",
    "Known",
    "OwnerKnown",
    "name_key",
    "organisation",
    "role_address",
    "within_one_edit",
]

MIN_EDIT_LABEL = 6
MAX_NAME = 200
# Second-level labels under a country code that are public suffixes themselves (co.uk, com.au, gv.at, …).
_SECOND_LEVEL = frozenset({"ac", "co", "com", "edu", "gob", "gov", "gv", "ltd", "ne", "net", "or", "org", "plc"})
_PARENTHESIS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_WORD = re.compile(r"[^\W_]{2,}")
# The no-reply family and the mailbox names of RFC 2142 (with a suffix: `noreply-calendar`, `bounces+123`).
_ROLE = re.compile(
    r"^(?:no-?reply|do-?not-?reply|donotreply|notifications?|notify|alerts?|updates|mailer(?:-daemon)?|"
    r"postmaster|bounces?|info|support|service|news(?:letter)?|calendar(?:-notification)?|hostmaster|abuse)"
    r"(?:[-+._].*)?$|.*(?:no-?reply|do-?not-?reply).*$",
)


def organisation(domain: str) -> tuple[str, str]:
    """(the name a person reads, its public suffix): `kranich-logistik.de` → ("kranich-logistik", "de"),
    `mail.acme.co.uk` → ("acme", "co.uk")."""
    labels = [label for label in domain.split(".") if label]
    if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2:
        return labels[-3], ".".join(labels[-2:])
    if len(labels) >= 2:
        return labels[-2], labels[-1]
    return domain, ""


def within_one_edit(a: str, b: str) -> bool:
    """`a` and `b` differ by at most one letter typed, dropped, added, or two neighbours swapped."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        if a[start + 1 :] == b[start + 1 :]:
            return True  # one letter replaced
        return a[start : start + 2] == b[start : start + 2][::-1] and a[start + 2 :] == b[start + 2 :]
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1 :] == shorter[start:]


def name_key(name: str) -> str:
    """A display name as a person reads it ("" when it is not a name of two words or more)."""
    text = _PARENTHESIS.sub(" ", name[:MAX_NAME]).replace(".", " ")
    words = sorted(_WORD.findall(skeleton(text)))
    return " ".join(words) if len(words) >= 2 else ""


def role_address(address: str) -> bool:
    """The address is a service's mailbox (`notifications@github.com`, `noreply@…`), not a person's."""
    return _ROLE.match(address.rpartition("@")[0].lower()) is not None


@dataclass(frozen=True)
class Resemblance:
    known: str  # the known domain, as it travels
    how: str  # "looks like" | "is one letter away from"


@dataclass
class Known:
    """A snapshot of whom the owner knows (see the module): addresses, their domains, their names."""

    addresses: set[str] = field(default_factory=set)
    domains: set[str] = field(default_factory=set)
    own: set[str] = field(default_factory=set)  # the owner's own domains
    _orgs: set[tuple[str, str]] = field(default_factory=set)
    _by_skeleton: dict[str, set[str]] = field(default_factory=dict)
    _labels: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (label skeleton, suffix) → domains
    _names: dict[str, set[str]] = field(default_factory=dict)  # name key → addresses

    @classmethod
    def of(cls, people: Iterable[tuple[str, str]], own: Iterable[str] = ()) -> Known:
        """From (display name, address) pairs and the owner's own addresses (or bare domains)."""
        known = cls()
        for name, address in people:
            known.add(address, name)
        for item in own:
            domain = known.add(item if "@" in item else f"@{item}")
            if domain:
                known.own.add(domain)
        return known

    def add(self, address: str, name: str = "") -> str:
        """Know `address` (and `name` as one of its names); returns its domain ("" when it has none)."""
        local, at, host = address.strip().lower().rpartition("@")
        domain = ascii_domain(host) if at else ""
        if "." not in domain:
            return ""
        if local:
            self.addresses.add(f"{local}@{domain}")
            key = name_key(name)
            if key:
                self._names.setdefault(key, set()).add(f"{local}@{domain}")
        if domain not in self.domains:
            self.domains.add(domain)
            label, suffix = organisation(domain)
            self._orgs.add((label, suffix))
            self._by_skeleton.setdefault(skeleton(domain), set()).add(domain)
            self._labels.setdefault((skeleton(label), suffix), set()).add(domain)
        return domain

    def knows_address(self, address: str) -> bool:
        return address.strip().lower() in self.addresses

    def knows_domain(self, domain: str) -> bool:
        """The domain, or another domain of its organisation (`mail.acme.example` for `acme.example`), is known."""
        ascii_form = ascii_domain(domain)
        return ascii_form in self.domains or organisation(ascii_form) in self._orgs

    def resembles(self, domain: str) -> Resemblance | None:
        """The known domain that `domain` passes for, when it is not known itself (see the module)."""
        ascii_form = ascii_domain(domain)
        if not ascii_form or self.knows_domain(ascii_form):
            return None
        same = sorted(self._by_skeleton.get(skeleton(ascii_form), set()) - {ascii_form})
        if same:
            return Resemblance(self._prefer_own(same), "looks like")
        label, suffix = organisation(ascii_form)
        shape = skeleton(label)
        if len(shape) < MIN_EDIT_LABEL:
            return None
        near = sorted(
            domain
            for (known_shape, known_suffix), domains in self._labels.items()
            if known_suffix == suffix and len(known_shape) >= MIN_EDIT_LABEL and within_one_edit(shape, known_shape)
            for domain in domains
        )
        return Resemblance(self._prefer_own(near), "is one letter away from") if near else None

    def named(self, display_name: str) -> set[str]:
        """The known addresses that go by this display name (empty when nobody known does)."""
        key = name_key(display_name)
        return set(self._names.get(key, ())) if key else set()

    def _prefer_own(self, domains: list[str]) -> str:
        return next((d for d in domains if d in self.own), domains[0])


class OwnerKnown:
    """Whom the owner knows as the state database records it (the owner's sent mail and H0's sends, the
    owner's own addresses), re-read only when that record changed: the send path asks it at every send,
    triage once a batch (`with_people` adds the People notes)."""

    def __init__(self, state: StateDB, own: Iterable[str] = ()) -> None:
        self.state = state
        self.own = tuple(own)
        self._lock = threading.Lock()
        self._signature: tuple[Any, ...] | None = None
        self._people: list[tuple[str, str]] = []
        self._owner: list[str] = []
        self._known = Known()

    def current(self) -> Known:
        with self._lock:
            rows = self.state.query(_SIGNATURE)
            signature = tuple(rows[0].values()) if rows else None
            if signature != self._signature or signature is None:
                authority = OwnerAuthority(self.state)
                self._people = sorted(set(authority.recipients()))
                self._owner = [*self.own, *sorted(authority.senders())]
                self._known = Known.of(self._people, own=self._owner)
                self._signature = signature
            return self._known

    def with_people(self, people: Iterable[tuple[str, str]]) -> Known:
        """The owner's record and these (name, address) pairs — the People notes — together."""
        self.current()
        with self._lock:
            return Known.of([*self._people, *people], own=self._owner)


# What changes when the owner's record does (each O(1) or an index range): new history, provider sent mail
# recorded or vouched for, a send completed.
_SIGNATURE = (
    "SELECT (SELECT max(rowid) FROM history) AS history, (SELECT max(rowid) FROM followup_messages) AS followup, "
    "(SELECT max(rowid) FROM owner_messages) AS owned, (SELECT count(*) FROM sends WHERE state = 'sent') AS sent"
)
