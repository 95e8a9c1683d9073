"""What one of the owner's notes says about a person (a People note) and about itself, as drafting asks it.

A People note names its person's addresses under any of the keys people use (`email`, `emails`, `e-mail`,
`mail`, `address`, `addresses`, and `aliases` when one holds an address): `person_addresses` is the one reader of
them, which drafting (`PersonFacts`), the vault index's person rows and so the gate's private people all use. It
names other names (`aliases`), the language to write to them in (`language: de`), their time zone
(`timezone: Europe/Berlin`) and their organisation (`company` and the like); any note may date itself
(`date`, `created`). Read once, never raising, by the note model's readers (h0.vault.values, h0.vault.dates).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from h0.vault.dates import stamp_epoch
from h0.vault.values import ADDRESS, listed, texts

# Where a People note names its person's addresses, in the order they are read; an alias counts when it holds one.
PERSON_ADDRESS_KEYS = ("email", "emails", "e-mail", "mail", "address", "addresses", "aliases")
MAX_PERSON_ADDRESSES = 200  # a note naming more is a list, not a person
ORGANISATION_KEYS = ("company", "organisation", "organization", "firma", "société", "societe", "employer")
DATE_KEYS = ("date", "created")


@dataclass(frozen=True, slots=True)
class PersonFacts:
    addresses: tuple[str, ...]  # the addresses its address properties hold, in order, as written
    aliases: tuple[str, ...]  # the person's (or the note's) other names, at most 20
    language: str | None  # a two-letter code (`de`, `fr`); None when absent or not a code
    timezone: str  # `timezone:` as written, trimmed ("" when none): the calendar reads the zone
    organisations: tuple[str, ...]
    dates: tuple[float, ...]  # the note's own dates (`date`, `created`) as epochs

    @property
    def own_addresses(self) -> frozenset[str]:
        return frozenset(a.lower() for a in self.addresses)


def person_addresses(frontmatter: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(address as written, the key that names it) for each address a People note names under one of
    PERSON_ADDRESS_KEYS in any case (`Email:`, `E-Mail:`, as `private:` is read), in key order then as written;
    one string or a list of them, anything else ignored."""
    values: dict[str, list[Any]] = {}
    for key, value in frontmatter.items():
        name = str(key).strip().casefold()
        if name in PERSON_ADDRESS_KEYS:
            values.setdefault(name, []).extend(listed(value))
    return tuple(
        (found, key)
        for key in PERSON_ADDRESS_KEYS
        for value in values.get(key, ())
        if isinstance(value, str)
        for found in ADDRESS.findall(value)
    )[:MAX_PERSON_ADDRESSES]


def person_facts(frontmatter: Mapping[str, Any]) -> PersonFacts:
    language = frontmatter.get("language")
    code = language.strip() if isinstance(language, str) else ""
    zone = frontmatter.get("timezone")
    return PersonFacts(
        addresses=tuple(found for found, _ in person_addresses(frontmatter)),
        aliases=texts(frontmatter.get("aliases"), 20),
        language=code[:2].lower() if 2 <= len(code) <= 5 and code[:2].isalpha() else None,
        timezone=zone.strip() if isinstance(zone, str) else "",
        organisations=tuple(
            value for key in ORGANISATION_KEYS for value in listed(frontmatter.get(key)) if isinstance(value, str)
        ),
        dates=tuple(when for key in DATE_KEYS if (when := stamp_epoch(frontmatter.get(key))) is not None),
    )
