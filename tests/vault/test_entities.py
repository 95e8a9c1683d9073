"""What a text is about, as keys (h0.vault.index.entities): codes and capitalised names are found,
calendar words, greetings and sentence openers never are, and a hostile text costs linear time."""

from __future__ import annotations

import time

from h0.drafting.briefing import questions
from h0.vault.index.entities import ENTITY, NAME, note_keys, phrases, text_entities


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
