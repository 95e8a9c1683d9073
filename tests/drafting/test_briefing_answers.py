"""Rules briefings (h0.drafting.briefing.answers): for each question the lines that answer it — dates for
"when", amounts for "how much", never a meeting note's `date:` as the answer to a "when" about something
else; past replies in the owner's own words; the sender's People note facts when the commercial rule lets
them through; and, when the People note says the sender's language, business terms across languages.

The context is assembled as H0 drafts it (`Drafting.context_for_email` over a vault on disk)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from h0.drafting import Drafting
from h0.drafting.briefing import CALENDAR_LINE, answers, briefing
from h0.drafting.context import ContextItem, DraftContext
from h0.drafting.voice import Voice
from h0.vault import init_vault
from h0.vault.model import note_facts

SABINE = "Sabine Kranich <sabine.kranich@kranich-logistik.de>"
TOBIAS = "Tobias Keller <tobias.keller@keller-druck.de>"
NOTES = {
    "People/Sabine Kranich.md": (
        "---\ntype: person\nemail: sabine.kranich@kranich-logistik.de\nlanguage: {language}\n---\n"
        "# Sabine Kranich\n\nGeschäftsführerin.\n\n- Tagessatz für Kranich: 950 € netto\n\n"
        "Working on: [[Kranich Portal]]. Rates: [[Studio rates]]\n"
    ),
    "People/Tobias Keller.md": (
        "---\ntype: person\nemail: tobias.keller@keller-druck.de\nlanguage: de\n---\n# Tobias Keller\n\n"
        "Druckerei. Lieferzeit 5 Werktage. Mit [[Sabine Kranich]] im [[Kranich Portal]].\n"
    ),
    "Projects/Kranich Portal.md": (
        "---\ntype: project\n---\n# Kranich Portal\n\n- Beta-Start: 18.12.\n- Budget: 38.000 € für Phase 1\n"
        "- Ansprechpartnerin: [[Sabine Kranich]]\n"
    ),
    "Meetings/2026-03-02 Kranich Kickoff.md": (
        "---\ntype: meeting\ndate: 2026-03-02\n---\n# Kranich Kickoff\n\nMit [[Sabine Kranich]]: Scope Phase 1.\n"
    ),
    "Notes/Studio rates.md": "---\ntype: note\n---\n# Studio rates\n\n- Day rate 2026: 950–1,100 EUR\n- Rates reviewed yearly\n",
}


def vault(tmp_path: Path, language: str = "de") -> Drafting:
    root = tmp_path / "vault"
    for name, text in NOTES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text.replace("{language}", language), encoding="utf-8")
    init_vault(root)
    return Drafting(root)


def asked(drafting: Drafting, sender: str, body: str, language: str | None = "de") -> dict[str, list[str]]:
    context = drafting.context_for_email(note_facts("", {"from": sender, "subject": "Portal"}), body)
    return {
        a.question: [f"{line.line} — {line.link}" for line in a.lines] for a in answers(context, body, "", language)
    }


def test_given_a_when_question_then_the_line_with_its_date_answers_and_no_meeting_notes_date(tmp_path):
    found = asked(vault(tmp_path), SABINE, "Hallo Lena,\n\nWann ist der Beta-Start? Passt der 18.12.?\n\nLG Sabine")
    assert found["Wann ist der Beta-Start?"] == ["Beta-Start: 18.12. — [[Kranich Portal]]"]
    assert all("date: 2026-03-02" not in line for lines in found.values() for line in lines)


def test_given_a_question_naming_the_meeting_then_its_date_property_answers(tmp_path):
    found = asked(vault(tmp_path), SABINE, "Wann war noch mal der Kranich Kickoff?")
    assert "date: 2026-03-02 — [[2026-03-02 Kranich Kickoff]]" in found["Wann war noch mal der Kranich Kickoff?"]


def test_given_a_how_much_question_then_only_lines_with_an_amount_answer(tmp_path):
    found = asked(vault(tmp_path), SABINE, "Wie hoch ist das Budget für Phase 1?")
    assert found["Wie hoch ist das Budget für Phase 1?"] == ["Budget: 38.000 € für Phase 1 — [[Kranich Portal]]"]


def test_given_the_senders_day_rate_then_it_answers_her_and_never_someone_else(tmp_path):
    """The commercial rule (h0.drafting.commercial): Sabine's rate is hers to see, not Tobias's."""
    drafting = vault(tmp_path)
    question = "Wie hoch ist dein Tagessatz für den Workshop?"
    assert "Tagessatz für Kranich: 950 € netto — [[Sabine Kranich]]" in asked(drafting, SABINE, question)[question]
    assert all("950 € netto" not in line for line in asked(drafting, TOBIAS, question)[question])


def test_given_the_senders_language_then_a_german_question_finds_the_english_note(tmp_path):
    question = "Wie hoch ist dein Tagessatz für den Workshop?"
    found = asked(vault(tmp_path), SABINE, question, "de")[question]
    assert "Day rate 2026: 950–1,100 EUR — [[Studio rates]]" in found


def test_without_the_senders_language_no_word_is_translated(tmp_path):
    question = "Wie hoch ist dein Tagessatz für den Workshop?"
    found = asked(vault(tmp_path, language=""), SABINE, question, None)[question]
    assert all("Studio rates" not in line for line in found)


def test_a_false_friend_is_read_in_the_senders_language(tmp_path):
    """German "Rate" is an instalment: it finds no day rate."""
    question = "Ist die erste Rate schon bezahlt?"
    assert asked(vault(tmp_path), SABINE, question, "de")[question] == []


def context_of(*items: ContextItem, scheduling=None) -> DraftContext:
    return DraftContext("dana@brightline.io", Voice("Hi Dana,", "Best,", "profile"), items, scheduling=scheduling)


def test_a_past_reply_answers_in_the_owners_own_words_never_with_its_date_alone():
    reply = ContextItem(
        "past_reply",
        "your sent mail of 2026-11-15, “Rates”",
        "your reply to dana@brightline.io",
        "Sent 2026-11-15 to dana@brightline.io, subject “Rates”:\nHi Dana,\n\nThanks for asking. My day rate for "
        "workshops is 1,100 EUR. The rest follows.\n\nBest,\nLena",
    )
    text = briefing(context_of(reply), "Hi Lena,\n\nWhat is your day rate for workshops?\n\nDana", "Rates")
    assert "> - My day rate for workshops is 1,100 EUR. — “your sent mail of 2026-11-15, “Rates””" in text
    assert "Sent 2026-11-15" not in text and "Hi Dana" not in text


def test_a_request_to_meet_is_answered_by_the_calendar_not_by_a_note():
    hours = ContextItem("profile", "[[H0_Profile]]", "your profile", "Working hours: Monday to Friday, 9:00–17:00")
    found = answers(context_of(hours), "Can we meet on Thursday for a call?")
    assert [(a.kind, [line.line for line in a.lines]) for a in found] == [("meeting", [CALENDAR_LINE])]


@pytest.mark.parametrize(
    "hostile",
    ["Day rate: 950 EUR ![[secret.png]] %% h0: not sent below %%", "Day rate: 950 EUR <img src=x onerror=alert(1)>"],
)
def test_a_notes_line_is_shown_inert_in_the_briefing(hostile):
    note = ContextItem("person", "[[Dana Rivera]]", "the sender's note", hostile)
    text = briefing(context_of(note), "What is your day rate?")
    line = next(line for line in text.splitlines() if "Day rate: 950 EUR" in line)
    assert re.search(r"(?<!\\)(?:!\[\[|<img|%%)", line) is None, line  # each one escaped: shown, never rendered
