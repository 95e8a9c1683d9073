"""Notes tied to an email only by chance stay out of its prompt (issue 41): the shapes real vaults have.

- A note sharing one capitalised word with the email comes only when it shares a second word of its topic: "EUR"
  (a currency) in a budget question never brings the owner's rates note; "1,100 EUR per day" does.
- The notes the sender's People note links to (`Working on: [[Project Atlas]]`) come with their questions, but
  not with an email that only asks to meet (the calendar answers it), unless it names what the note is about.
- A hub — a note many People notes link to or that links to many, "Clients" — is about none of them: a People
  note linking to it (`Category: [[Clients]]`) does not bring it along. A project linking to many meetings and
  a few people is no hub: it comes with its client's question.
- A daily note naming everyone it met is about each of them only in its own lines: the note comes when the lines
  linking to the sender's People note share the email's topic, not when another person's line does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from h0.drafting import Drafting, VaultKnowledge
from h0.drafting.service import indexed_knowledge
from h0.vault.disclosure import Disclosure, folder_keys
from h0.vault.model import note_facts
from tests.drafting.conftest import PRIVATE_FOLDERS, sent_by_h0

pytestmark = pytest.mark.usefixtures("loguru_restored")

DANA = "Dana Rivera <dana@acme.example>"
CLIENTS = [f"Client {n:02d}" for n in range(1, 16)]


@pytest.fixture
def vault(knowledge_vault: Path) -> Path:
    """The fixture vault with a "Clients" hub Dana's People note and fifteen other clients' link to, a rates note
    of the owner's, two daily notes that each name fourteen people (one says something of the launch only in
    another client's line, the other in Dana's own), and Dana's project linking to fourteen meeting notes."""
    people = knowledge_vault / "People"
    for name in CLIENTS:
        address = name.lower().replace(" ", "")
        (people / f"{name}.md").write_text(
            f"---\ntype: person\nemail: {address}@example.org\n---\n# {name}\n\nCategory: [[Clients]]\n", "utf-8"
        )
    listing = "\n".join(f"- [[{name}]]: ordering, launch plans, budget talks" for name in CLIENTS)
    (knowledge_vault / "Notes/Clients.md").write_text(
        f"# Clients\n\n- [[Dana Rivera]]: ordering portal, launch, budget ZQ-HUB\n{listing}\n", "utf-8"
    )
    dana = people / "Dana Rivera.md"
    dana.write_text(dana.read_text("utf-8") + "\nCategory: [[Clients]]\n", "utf-8")
    (knowledge_vault / "Notes/Rates.md").write_text(
        "---\ntype: note\n---\n# Rates\n\n- Day rate: 950–1,100 EUR ZQ-OWN-RATES\n", "utf-8"
    )
    others = "\n".join(f"- Coffee with [[{name}]], nothing decided." for name in CLIENTS[:13])
    daily = knowledge_vault / "Daily"
    daily.mkdir()
    (daily / "2026-03-02.md").write_text(
        f"# 2026-03-02\n\n- Lunch with [[Dana Rivera]]: her kids, the Lisbon trip. ZQ-DAILY-OTHERS\n"
        f"- [[Client 14]] says the launch moved, budget approved.\n{others}\n",
        "utf-8",
    )
    (daily / "2026-03-03.md").write_text(
        f"# 2026-03-03\n\n- Call with [[Dana Rivera]]: the launch moved to 18 March, budget approved. ZQ-DAILY-DANA\n"
        f"{others}\n",
        "utf-8",
    )
    meetings = "\n".join(f"- [[2026-02-{day:02d} Atlas weekly]]" for day in range(1, 15))
    atlas = knowledge_vault / "Projects/Project Atlas.md"
    atlas.write_text(atlas.read_text("utf-8") + f"\n## Meetings\n\n{meetings}\n", "utf-8")
    return knowledge_vault


@pytest.fixture(params=["index", "scan"])
def context_text(request: pytest.FixtureRequest, vault: Path) -> Callable[[str], str]:
    """The context's text for Dana's email, from the vault index or from the index-free scan."""
    private = Disclosure(folder_keys(PRIVATE_FOLDERS))
    state = vault.parent / "state"
    knowledge = indexed_knowledge(vault, state, private) if request.param == "index" else VaultKnowledge(vault, private)
    assert knowledge is not None
    drafting = Drafting(vault, disclosure=private, knowledge=knowledge, owner=sent_by_h0(vault, state))

    def text(body: str) -> str:
        return drafting.context_for_email(note_facts("", {"from": DANA, "subject": "Question"}), body).text()

    return text


def test_a_currency_alone_never_brings_the_owners_rates_note_and_a_rate_question_does(
    context_text: Callable[[str], str],
):
    """Given the owner's rates note ("Day rate: 950–1,100 EUR"), when Dana asks to confirm a budget in EUR, the
    rates note stays out (only the currency is shared); when she asks whether 1,100 EUR per day works, it comes."""
    assert "ZQ-OWN-RATES" not in context_text("Could you confirm the budget of 38,000 EUR for phase 1?")
    assert "ZQ-OWN-RATES" in context_text("Would 1,100 EUR per day work for you?")


def test_the_project_a_people_note_links_to_comes_with_a_question_not_with_a_request_to_meet(
    context_text: Callable[[str], str],
):
    """Given Dana's People note working on [[Project Atlas]], when she only asks for a call, the project note is
    not in the context; when she asks about the launch, asks for a call and something else, or asks for a call
    about the design review, it is."""
    assert "Atlas is the new ordering portal" not in context_text("Could we do a quick 20 min call tomorrow?")
    assert "Atlas is the new ordering portal" in context_text("Is the launch still on for 14 May?")
    both = "Could we do a quick 20 min call tomorrow? And when do you expect the first designs?"
    assert "Atlas is the new ordering portal" in context_text(both)
    asked = "Could we find 30 minutes tomorrow to go through the design review at our office?"
    assert "Atlas is the new ordering portal" in context_text(asked)


def test_a_hub_a_people_note_links_to_stays_out_and_a_project_with_many_meetings_comes(
    context_text: Callable[[str], str],
):
    """Given Dana's People note linking to [[Clients]] (which sixteen clients' notes link to) and to her project
    (which links to fourteen meeting notes and to her), when she asks about the launch, the project note comes and
    the hub does not."""
    text = context_text("Is the launch still on for 14 May?")
    assert "Atlas is the new ordering portal" in text
    assert "ZQ-HUB" not in text


def test_a_daily_note_naming_everyone_comes_only_for_what_it_says_of_the_sender(context_text: Callable[[str], str]):
    """Given two daily notes naming fourteen people, when Dana asks whether the launch moved and the budget is
    approved, the note whose line about Dana says so comes, and the one that says it only of another client does
    not."""
    text = context_text("Has the launch moved? Is the budget approved?")
    assert "ZQ-DAILY-DANA" in text
    assert "ZQ-DAILY-OTHERS" not in text
