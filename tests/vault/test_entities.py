"""What a text is about, as keys (h0.vault.index.entities): codes and capitalised names are found,
calendar words, greetings and sentence openers never are, and a hostile text costs linear time."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from h0.drafting.briefing import questions
from h0.vault.index.entities import ENTITY, NAME, capitalised, codes, normal, note_keys, phrases, text_entities
from h0.vault.index.extract import ADDRESS, addresses_in_text

# The code pattern tried at every position of a text: what `codes` and `text_entities` must find, faster.
EVERYWHERE = re.compile(
    r"(?<![\w-])(?=[\w/-]*\d)(?=[\w/-]*[^\W\d_])[^\W_]+(?:[-/][^\W_]+)+(?![\w-])"
    r"|(?<![\w-])[A-Z]{2,}\d{2,}(?![\w-])",
)
# Texts made of what codes and addresses are built of, and of what ends them.
CODE_TEXT = st.text(alphabet="aZ09_-/ .\n@é٣x", max_size=80)


def test_codes_and_capitalised_names_are_what_an_email_is_about():
    found = text_entities(
        "Hi Jonas,\nour finance team asks about INV-2041 and PO12345 for the Quanta Dashboard. "
        "We record remote on Fri, as Brightline GmbH does."
    )
    assert {"inv 2041", "po12345", "quanta dashboard", "quanta", "brightline"} <= found
    for never in ("jonas", "fri", "friday", "our", "we", "gmbh", "remote"):
        assert never not in found


def test_a_notes_title_and_aliases_are_names_and_its_capitalised_values_entities():
    keys = dict(note_keys("Podcast appearances", ["podcast"], "Brightline GmbH\nperson", "- Quanta Dashboard beta"))
    assert keys["podcast appearances"] == NAME and keys["podcast"] == NAME
    assert keys["brightline"] == ENTITY  # "GmbH" says what kind of company, not which
    assert keys["quanta dashboard"] == ENTITY and "person" not in keys


def test_a_list_items_first_word_opens_the_item_and_is_no_name_but_a_name_of_several_words_is():
    """German capitalises every noun and a list item its first word: "- Budget: 38.000 €" names no budget
    anyone else's note could share; "- Quanta Dashboard beta" still names the dashboard."""
    found = capitalised(
        "Projekt:\n- Budget: 38.000 € für Phase 1\n* Lieferzeit 5 Tage\n2. Tagessatz 950 €\n- Quanta Dashboard"
    )
    assert not {"budget", "lieferzeit", "tagessatz"} & found
    assert {"quanta dashboard", "phase"} <= found  # mid-line, a capitalised word still counts (the rarity rule decides)


def test_a_hostile_text_costs_linear_time():
    one_line = "word " * 40_000 + "Name " * 20_000  # 300 KB, no punctuation, a 20,000-word capitalised run
    started = time.perf_counter()
    text_entities(one_line)
    phrases(one_line)
    assert questions(one_line + "?") is not None
    assert time.perf_counter() - started < 5.0


def test_a_texts_keys_are_its_word_runs_codes_and_names_whatever_their_order():
    text = "Hi Felix, INV-2041 and PO-88/3 for the Quanta Dashboard?\nBen & Jerry ship A-12 to Brightline GmbH."
    words = ["hi", "felix", "inv", "2041", "and", "po", "88", "3", "for", "the", "quanta", "dashboard"]
    found = phrases(text)
    assert {"hi", "hi felix", "inv 2041 and po", "quanta dashboard"} <= found
    assert not any(len(key.split()) > 4 for key in found)
    assert {" ".join(words[i : i + 3]) for i in range(len(words) - 2)} <= found
    assert phrases(text, 1) == {key for key in found if " " not in key}
    assert phrases("", 4) == set() and phrases("one", 0) == set()
    # Codes once each, and the names found in the text with its codes blanked out ("Ben" opens a line).
    assert text_entities(text) == {"inv 2041", "po 88 3", "a 12", "quanta dashboard", "quanta", "jerry", "brightline"}


@settings(max_examples=400, deadline=None)
@given(CODE_TEXT)
def test_the_codes_of_a_text_are_those_the_pattern_finds_at_every_position(text):
    everywhere = [m.group() for m in EVERYWHERE.finditer(text)]
    assert codes(text) == {normal(code) for code in everywhere} - {""}
    blanked = EVERYWHERE.sub(" ", text)
    assert text_entities(text) == ({normal(code) for code in everywhere} - {""}) | capitalised(blanked)


@settings(max_examples=400, deadline=None)
@given(CODE_TEXT)
def test_the_addresses_of_a_text_are_those_the_pattern_finds_at_every_position(text):
    assert [m.group() for m in addresses_in_text(text)] == [m.group() for m in ADDRESS.finditer(text)]


def test_codes_and_addresses_in_a_longer_text_are_found_as_before():
    text = "Re: INV-2041, PO-88/3 (see x/A-12_b) and PO12345;\tmail dana@example.com or <ops@corp.example.org>, 12/3."
    assert codes(text) == {normal(m.group()) for m in EVERYWHERE.finditer(text)}
    assert [m.group() for m in addresses_in_text(text)] == ["dana@example.com", "ops@corp.example.org"]
