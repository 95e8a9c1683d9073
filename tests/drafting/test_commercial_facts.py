"""Other clients' business stays theirs: a note's commercial facts (rates, budgets, fees, prices,
invoices, amounts with a currency — in its properties and its text, in English, German and French)
reach a drafting prompt, a rules-mode briefing or `draft_context` only when one of the note's parties
is someone the reply goes to.

The rule is `h0.drafting.commercial`; these tests hold it on its own (what is commercial, who a note's
parties are) and end to end through `h0 sweep` on the persona vault with the recording fake OpenAI
server: a stranger's podcast invitation that names two clients carries their projects' dates, never
their day rate, budget or invoice.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from h0.drafting.commercial import commercial_property, for_audience, is_commercial, parties, without_commercial
from h0.drafting.knowledgenotes import KnowledgeNote, link_targets
from h0.vault import Vault, init_vault
from tests.drafting.test_relevant_context import FELIX, PERSONA, answer, email, owners_own, prompt, sweep
from tests.triage.fake_llm import FakeLLM

pytestmark = pytest.mark.usefixtures("loguru_restored")

OWNER = "jonas@bergconsulting.example"
# Every commercial fact of the persona's clients (People and Projects notes, properties and text).
CLIENT_MONEY = ("€1,200", "€1,400", "€24,000", "€45,000", "€9,000", "€800", "€2,500", "INV-2041", "day_rate", "budget:")


@pytest.mark.parametrize(
    "line",
    [
        "Day rate agreed: €1,200 remote, €1,400 on site.",
        "Invoice INV-2041 sent 1 November, due 30 November",
        "We invoiced them 9.000 EUR in October.",
        "Budget for 2026 is 45k",
        "Fee: 2 500 CHF per keynote",
        "They pay $150 an hour.",
        "Retainer of 300 euros a month",
        "Tagessatz 1.200 € netto",
        "Das Projektbudget liegt bei 24.000",
        "Honorar wie besprochen",
        "Rechnung geht an die Buchhaltung",
        "Le taux journalier est de 900 €",
        "Facture envoyée le 3 mars",
        "Tarif : 1 200 € HT",
        "Les honoraires sont payés à 30 jours",
        "| Q4 | 12,000 GBP |",
    ],
)
def test_a_line_naming_money_in_english_german_or_french_is_commercial(line):
    assert is_commercial(line)


@pytest.mark.parametrize(
    "line",
    [
        "Prefers calls on Fridays; fine with remote work.",
        "Prototype due 4 December",
        "Beta on 20 January, 3 charts and a CSV export",
        "We separate research from delivery and generate a report.",
        "Meeting room 1200 on the 3rd floor",
        "Mag Kaffee ohne Zucker",
        "Préfère les appels le vendredi",
    ],
)
def test_a_line_without_money_or_its_words_is_not(line):
    assert not is_commercial(line)


@pytest.mark.parametrize(
    ("key", "value", "commercial"),
    [
        ("day_rate", "€1,200", True),
        ("hourlyRate", 150, True),
        ("budget", "45k", True),
        ("Tagessatz", 1200, True),
        ("honoraires", "sur devis", True),
        ("invoice", "INV-2041", True),
        ("terms", "1.500 EUR per day", True),  # the value holds an amount
        ("deadline", "2026-12-15", False),
        ("company", "Brightline GmbH", False),
        ("language", "de", False),
        ("strategy", "discovery first", False),
    ],
)
def test_a_property_is_commercial_by_its_key_or_its_value(key, value, commercial):
    assert commercial_property(key, value) is commercial


def test_a_heading_that_names_money_takes_its_section_with_it():
    text = "# Acme\n\nLikes agendas.\n\n## Budget\n\n- 24,000\n- Q1: 8,000\n\n## Team\n\nAnna and Ben. Rate: €900.\n"
    shown = without_commercial(text)
    assert "Likes agendas." in shown and "Anna and Ben." in shown
    assert "24,000" not in shown and "8,000" not in shown and "€900" not in shown and "Budget" not in shown


def note(path: str, text: str, **frontmatter: object) -> KnowledgeNote:
    title = path.rsplit("/", 1)[-1].removesuffix(".md")
    return KnowledgeNote(path, title, text, frontmatter, tuple(link_targets(text)))


FELIX_NOTE = note("People/Felix Wagner.md", "Client. Day rate: €1,200.", email="felix@brightline.example")
PEOPLE = {"Felix Wagner": FELIX_NOTE}


def resolve(target: str) -> KnowledgeNote | None:
    return PEOPLE.get(target)


def test_the_parties_of_a_people_note_are_its_own_addresses_and_of_a_project_its_people_and_addresses():
    project = note(
        "Projects/Onboarding.md",
        "With [[Felix Wagner]] and ops@brightline.example. Budget €24,000.",
        client="[[Felix Wagner]]",
        budget="€24,000",
    )
    assert parties(FELIX_NOTE, resolve) == {"felix@brightline.example"}
    assert parties(project, resolve) == {"felix@brightline.example", "ops@brightline.example"}
    stranger = for_audience(project, {"marta@productpod.example"}, resolve)
    assert (
        "budget" not in stranger.frontmatter
        and "€24,000" not in stranger.text
        and "With [[Felix Wagner]]" in stranger.text
    )
    assert for_audience(project, {"ops@brightline.example"}, resolve) is project  # a party: shown whole


def test_a_people_or_project_note_naming_nobody_shows_its_money_to_nobody_and_the_owners_own_notes_to_all():
    orphan = note("Projects/Secret deal.md", "Budget €80,000. Kick-off in May.", type="project")
    shown = for_audience(orphan, {"felix@brightline.example"}, resolve)
    assert "€80,000" not in shown.text and "Kick-off in May." in shown.text
    own = note("Notes/Rates.md", "Standard day rate for new clients: €1,100.")
    assert for_audience(own, {"marta@productpod.example"}, resolve) is own


# ---------------------------------------------------------------- end to end: h0 sweep, the recording model


@pytest.fixture
def persona(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(PERSONA / "vault", root)
    init_vault(root)
    return root


def settings_env(monkeypatch: pytest.MonkeyPatch, persona: Path, **extra: str) -> None:
    for name, value in {
        "VAULT_PATH": str(persona),
        "PRIVATE_FOLDERS": "Journal",
        "OWNER_EMAILS": OWNER,
        "APPROVAL_SETTLE_SECONDS": "0",
        **extra,
    }.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def llm(persona: Path, monkeypatch: pytest.MonkeyPatch):
    with FakeLLM() as fake:
        settings_env(
            monkeypatch,
            persona,
            LLM_PROVIDER="openai",
            LLM_MODEL="fake-model",
            LLM_API_KEY="sk-test",
            LLM_BASE_URL=f"{fake.url}/v1",
        )
        yield fake


def test_a_strangers_podcast_invitation_naming_two_clients_carries_their_dates_never_their_money(persona, llm, capsys):
    """Given a stranger's invitation that names Felix Wagner, Brightline's onboarding revamp and the Quanta
    dashboard, when it is triaged, then their notes come with their dates and plans, and none of their day
    rates, budgets, fees or invoices."""
    email(
        persona,
        "pod2",
        "Marta Kowalski <marta@productpod.example>",
        "Podcast invite",
        "Hi Jonas,\n\nwould you join our podcast? Felix Wagner told us about the Brightline onboarding revamp, "
        "and we loved the Quanta dashboard. We record remote.\n\nMarta",
    )
    llm.queue(answer())
    sweep(capsys)
    text = prompt(llm.requests[0])
    assert "Prototype due 4 December" in text and "Beta on 20 January" in text  # the notes came, minus the money
    for money in CLIENT_MONEY:
        assert money not in text, money
    assert "commercial facts left out" in text  # the model is told, so it does not guess them


def test_a_client_and_a_person_on_the_project_get_its_money(persona, llm, capsys):
    """Given Felix's own question, and Anna's with Felix on Cc, then both prompts carry the project's budget
    (Felix is its client); Felix's prompt carries his own day rate."""
    email(persona, "own1", FELIX, "Budget", "How much of the onboarding budget did we agree on?")
    (persona / "Needs_Action/EMAIL_cc1.md").write_text(
        "---\ntype: email\nstatus: pending\nmessage_id: cc1\nfrom: Anna Sommer <anna@brightline.example>\n"
        f"to: {OWNER}\ncc: felix@brightline.example\nsubject: Onboarding revamp\nreceived: 2026-11-24T10:00:00Z\n"
        "---\n```text\nHi Jonas, how much of the Brightline onboarding revamp budget is left?\n```\n",
        encoding="utf-8",
    )
    llm.queue(answer(), answer())
    sweep(capsys)
    prompts = {("Anna" if "anna@brightline" in prompt(seen) else "Felix"): prompt(seen) for seen in llm.requests}
    assert "€24,000" in prompts["Felix"] and "day_rate: €1,200" in prompts["Felix"]
    assert "€24,000" in prompts["Anna"]


def test_a_client_asking_about_another_never_gets_the_others_terms(persona, llm, capsys):
    """Given Priya asking whether Felix could join, when triaged, then Felix's note may come, without the rate
    in its properties or in its text."""
    email(
        persona,
        "pr1",
        "Priya Nair <priya@quanta.example>",
        "Workshop",
        "Hi Jonas, could Felix Wagner from Brightline join our Quanta dashboard workshop?",
    )
    llm.queue(answer())
    sweep(capsys)
    text = prompt(llm.requests[0])
    assert "budget: €45,000" in text  # her own terms are hers
    for money in ("€1,200", "€1,400", "€24,000", "day_rate"):
        assert money not in text, money


def test_a_reply_the_owner_sent_another_client_lends_its_words_but_never_its_money(persona, llm, capsys):
    """Given the owner's sent reply to Felix quoting his rate, when a stranger asks something similar, then
    that reply may be an example of the owner's words, without the amounts."""
    done = persona / "Done/SENT_felix-rate.md"
    done.write_text(
        "---\ntype: sent_email\nstatus: sent\nfrom: jonas@bergconsulting.example\nto: felix@brightline.example\n"
        "subject: Workshop pricing\nsent_at: 2026-11-02T10:00:00Z\nrfc822_message_id: <s1@bergconsulting.example>\n"
        "message_id: s1\n---\nHi Felix,\n\nfor the discovery workshop my day rate is €1,350 on site.\n"
        "The workshop takes two days and needs a room for twelve.\n\n— J.\n",
        encoding="utf-8",
    )
    owners_own(persona, "Done/SENT_felix-rate.md")
    email(
        persona,
        "ws1",
        "Lea Brandt <lea@otherco.example>",
        "Discovery workshop",
        "Hi Jonas, how many days does the discovery workshop take, and does it need a room on site?",
    )
    llm.queue(answer())
    sweep(capsys)
    text = prompt(llm.requests[0])
    assert "two days and needs a room for twelve" in text  # the similar reply came
    assert "€1,350" not in text


def test_a_rules_mode_briefing_for_a_stranger_quotes_the_owners_rates_never_a_clients(persona, monkeypatch, capsys):
    """Given no model and a stranger asking for the day rate the owner gives Brightline, then the briefing
    an agent can read in Drafts/ quotes the owner's standard rates and none of Felix's or Brightline's."""
    settings_env(monkeypatch, persona, LLM_PROVIDER="rules")
    email(
        persona,
        "rb1",
        "Sam Ortiz <sam@newclient.example>",
        "Day rate",
        "Hi Jonas, what day rate would you charge us? Is it the one you give Felix Wagner at Brightline?",
    )
    sweep(capsys)
    draft = Vault(persona).read_note("Drafts/REPLY_EMAIL_rb1.md")
    text = (persona / "Drafts/REPLY_EMAIL_rb1.md").read_text(encoding="utf-8")
    assert "For you — H0's briefing" in draft.body and "€1,100" in text  # the owner's own Rates note
    for money in CLIENT_MONEY:
        assert money not in text, money


@pytest.mark.parametrize(
    "hostile",
    # 20,000 characters: more than any text the rule is given (notes are cut at 8,000, past replies at 6,000).
    ["x" * 20_000, "a " * 10_000, "1 " * 10_000, "1" * 20_000 + " EUR", ("Projekt" * 3_000) + "b", "€" * 20_000],
    ids=["one-long-word", "many-words", "spaced-digits", "long-number", "long-compound", "symbols"],
)
def test_a_hostile_note_costs_milliseconds(hostile):
    """Notes are written by agents: the rule's patterns are bounded, so no text makes them backtrack for long."""
    started = time.perf_counter()
    without_commercial(hostile)
    is_commercial(hostile)
    assert time.perf_counter() - started < 1.0


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_agent_asking_draft_context_for_a_strangers_email_gets_no_clients_money(persona, anyio_backend):
    """Given the stranger's invitation naming two clients, when an MCP client asks for its draft context,
    then the clients' notes come without their money, as in the prompt."""
    from mcp import Client

    from h0.mcp.vault_server import build_vault_server

    email(
        persona,
        "pod3",
        "Marta Kowalski <marta@productpod.example>",
        "Podcast invite",
        "Felix Wagner told us about the Brightline onboarding revamp and the Quanta dashboard. Join our podcast?",
    )
    async with Client(build_vault_server(persona)) as client:
        result = await client.call_tool("draft_context", {"path": "Needs_Action/EMAIL_pod3.md"})
    assert not result.is_error, result
    answer = json.dumps(result.structured_content, ensure_ascii=False)
    assert "Prototype due 4 December" in answer
    for money in CLIENT_MONEY:
        assert money not in answer, money
