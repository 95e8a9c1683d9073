"""The world's owner, the people she writes with, and her vault (People, Projects, Meetings, a Journal).

Lena Hartmann runs Hartmann Studio, a product-design practice in Berlin. Her clients write in English,
German and French; each person's People note says their language, company, role and what she knows
about them (a day rate, a deadline), so a good reply needs that note. Some notes are private (a
journal, a personal People note): no prompt may see them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

OWNER_NAME = "Lena Hartmann"
OWNER = "lena@hartmann-studio.de"
OWNER_DOMAIN = "hartmann-studio.de"
SIGNATURE = "Lena Hartmann\nHartmann Studio · Produktdesign\nTorstraße 112, 10119 Berlin\n+49 30 5550 1234"


@dataclass(frozen=True)
class Person:
    key: str
    name: str
    address: str
    lang: str  # en | de | fr
    company: str
    role: str
    formal: bool  # Sie / vous (else du / tu, or English)
    project: str | None = None
    facts: tuple[str, ...] = ()

    @property
    def first(self) -> str:
        return self.name.split()[0]

    @property
    def last(self) -> str:
        return self.name.split()[-1]

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2]

    @property
    def note(self) -> str:
        return f"People/{self.name}.md"


@dataclass(frozen=True)
class Project:
    name: str
    client: str  # a Person key
    lines: tuple[str, ...]
    keywords: tuple[str, ...] = field(default=())

    @property
    def note(self) -> str:
        return f"Projects/{self.name}.md"


PEOPLE: tuple[Person, ...] = (
    Person(
        "sabine",
        "Sabine Kranich",
        "sabine.kranich@kranich-logistik.de",
        "de",
        "Kranich Logistik GmbH",
        "Geschäftsführerin",
        False,
        "Kranich Portal",
        ("Tagessatz für Kranich: 950 € netto", "Rechnungen gehen an Jonas Berg (Buchhaltung)"),
    ),
    Person(
        "jonas",
        "Jonas Berg",
        "jonas.berg@kranich-logistik.de",
        "de",
        "Kranich Logistik GmbH",
        "Buchhaltung",
        True,
        "Kranich Portal",
        ("Zahlungsziel 30 Tage", "IBAN von Hartmann Studio: DE44 1001 0010 0123 4567 89"),
    ),
    Person(
        "claire",
        "Claire Moreau",
        "claire@atelier-moreau.fr",
        "fr",
        "Atelier Moreau",
        "fondatrice",
        True,
        "Boutique Moreau",
        ("Tarif journalier convenu : 900 €", "Lancement de la boutique prévu le 18 mars"),
    ),
    Person(
        "julien",
        "Julien Petit",
        "julien.petit@atelier-moreau.fr",
        "fr",
        "Atelier Moreau",
        "développeur",
        False,
        "Boutique Moreau",
        ("Travaille sur Shopify", "Préfère les appels courts"),
    ),
    Person(
        "dana",
        "Dana Rivera",
        "dana@brightline.io",
        "en",
        "Brightline Labs",
        "product lead",
        False,
        "Brightline Beta",
        ("Beta launch: 18.12.", "Day rate agreed: 1,100 EUR", "Prefers short emails"),
    ),
    Person(
        "marcus",
        "Marcus Webb",
        "marcus.webb@brightline.io",
        "en",
        "Brightline Labs",
        "CFO",
        False,
        "Brightline Beta",
        ("Approves invoices over 5,000 EUR", "Pays on the 9th of each month"),
    ),
    Person(
        "priya",
        "Priya Nair",
        "priya@fernwood.co.uk",
        "en",
        "Fernwood Studio",
        "partner",
        False,
        None,
        ("Agency partner in London", "Shares overflow work"),
    ),
    Person(
        "tobias",
        "Tobias Keller",
        "tobias.keller@keller-druck.de",
        "de",
        "Keller Druck",
        "Inhaber",
        True,
        "Kranich Portal",
        ("Druckerei für Broschüren", "Lieferzeit 5 Werktage"),
    ),
    Person(
        "elise",
        "Élise Fontaine",
        "elise@fontaine-conseil.fr",
        "fr",
        "Fontaine Conseil",
        "comptable",
        True,
        None,
        ("Comptable pour la TVA intracommunautaire", "Déclaration trimestrielle"),
    ),
    Person(
        "sophie",
        "Sophie Laurent",
        "sophie.laurent@lumen-studio.fr",
        "fr",
        "Lumen Studio",
        "directrice",
        False,
        None,
        ("Studio partenaire à Lyon",),
    ),
    Person(
        "oliver",
        "Oliver Grant",
        "oliver@grant-partners.com",
        "en",
        "Grant & Partners",
        "managing partner",
        False,
        None,
        ("Potential client, met at Config 2025",),
    ),
    Person("max", "Max Hartmann", "max.hartmann@posteo.de", "de", "", "Bruder", False, None, ("Lenas Bruder",)),
)
BY_KEY = {person.key: person for person in PEOPLE}

PROJECTS: tuple[Project, ...] = (
    Project(
        "Kranich Portal",
        "sabine",
        (
            "Relaunch des Kundenportals von Kranich Logistik.",
            "- Beta-Start: 18.12.",
            "- Budget: 38.000 € für Phase 1",
            "- Ansprechpartnerin: [[Sabine Kranich]], Rechnungen an [[Jonas Berg]]",
        ),
        ("portal", "kranich", "beta", "angebot", "entwürfe"),
    ),
    Project(
        "Boutique Moreau",
        "claire",
        (
            "Boutique en ligne d'Atelier Moreau.",
            "- Lancement : 18 mars",
            "- Budget : 24 000 €",
            "- Contacts : [[Claire Moreau]], [[Julien Petit]]",
        ),
        ("boutique", "maquettes", "lancement", "devis"),
    ),
    Project(
        "Brightline Beta",
        "dana",
        (
            "Design system and onboarding flows for Brightline's beta.",
            "- Beta launch: 18.12.",
            "- Scope: 14 screens for v2",
            "- Contacts: [[Dana Rivera]], invoices approved by [[Marcus Webb]]",
        ),
        ("beta", "onboarding", "screens", "design system", "launch"),
    ),
)

MEETINGS: tuple[tuple[str, str, str], ...] = (
    ("2026-03-02 Kranich Kickoff", "2026-03-02", "Mit [[Sabine Kranich]]. Scope Phase 1, Beta-Start 18.12."),
    ("2026-05-14 Brightline review", "2026-05-14", "With [[Dana Rivera]]: 14 screens for v2 agreed."),
    ("2026-09-03 Moreau atelier", "2026-09-03", "Avec [[Claire Moreau]] : maquettes validées, lancement 18 mars."),
)


def _person_note(person: Person, private: bool = False) -> str:
    language = {"en": "English", "de": "Deutsch", "fr": "français"}[person.lang]
    address = "Sie" if person.formal and person.lang == "de" else "vous" if person.formal else "du/tu/first name"
    lines = [
        "---",
        "type: person",
        f"email: {person.address}",
        f"company: {person.company}" if person.company else "company: ''",
        f"language: {person.lang}",
        "tags: [person" + (", private" if private else "") + "]",
    ]
    if private:
        lines.append("private: true")
    lines += [
        "---",
        f"# {person.name}",
        "",
        f"{person.role} ({person.company or 'privat'}). Writes in {language}; address: {address}.",
        "",
    ]
    lines += [f"- {fact}" for fact in person.facts]
    if person.project:
        lines += ["", f"Working on: [[{person.project}]]"]
    return "\n".join(lines) + "\n"


PROFILE = f"""---
type: h0-profile
name: {OWNER_NAME}
role: Product designer, Hartmann Studio
languages: [de, en, fr]
timezone: Europe/Berlin
tone: warm, direct, short paragraphs
greeting: "Hi {{first_name}},"
sign_off: "Best,"
signature: "Lena"
tags: [h0]
---
# Your profile for H0

## Standing facts

- Working hours: Monday to Friday, 9:00–17:00 Europe/Berlin
- Studio: Torstraße 112, 10119 Berlin

## Learned from your sent mail

Nothing yet: H0 fills this in from the replies you send.
"""


def write_vault(dest: Path) -> list[str]:
    """Write the persona vault into `dest`; the notes written (vault paths), private ones included."""
    written: dict[str, str] = {"H0_Profile.md": PROFILE}
    for person in PEOPLE:
        written[person.note] = _person_note(person, private=person.key == "max")
    for project in PROJECTS:
        client = BY_KEY[project.client]
        written[project.note] = (
            f"---\ntype: project\nclient: {client.company}\ntags: [project]\n---\n# {project.name}\n\n"
            + "\n".join(project.lines)
            + "\n"
        )
    for title, day, text in MEETINGS:
        written[f"Meetings/{title}.md"] = f"---\ntype: meeting\ndate: {day}\n---\n# {title[11:]}\n\n{text}\n"
    written["Journal/2026-06-01.md"] = (
        "---\ntype: journal\nprivate: true\n---\n# Journal\n\nThinking about raising the day rate to 1,200 EUR "
        "next year; not told anyone yet. WORLD-SECRET-4417\n"
    )
    written["Journal/2026-10-12.md"] = (
        "---\ntype: journal\ntags: [private]\n---\n# Journal\n\nMax owes me 300 € for the flat. WORLD-SECRET-9023\n"
    )
    written["Notes/Studio rates.md"] = (
        "---\ntype: note\n---\n# Studio rates\n\n- Day rate 2026: 950–1,100 EUR depending on the client\n"
        "- Workshops: half day 600 EUR\n"
    )
    for path, text in written.items():
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return sorted(written)
