"""Would the owner send this draft as it is? (h0.drafting.sendready, the judge of `h0 eval`)

Given the reply the owner sent and a draft, the judge names each failure a person checks before sending —
missed ask, wrong fact, wrong commitment, voice, padding, placeholder — and nothing for a draft that only
says the same in other words. The draft is a model's text: hostile input, bounded.
"""

from __future__ import annotations

import time

import pytest

from h0.drafting.mailfacts import facts, number_value
from h0.drafting.sendready import Failure, judge_draft

EMAIL = "Hi Lena,\n\nWhat is your day rate for the workshop, and could you send the updated quote by Friday?\n\nDana"
REPLY = "Hi Dana,\n\nMy day rate for workshops is 1,100 EUR. I'll send the updated quote by Friday.\n\nBest,\nLena"
DE_EMAIL = "Hallo Lena,\n\npasst der Beta-Start am 18.12.? Und kannst du mir das Angebot bis zum 9. schicken?\n\nSabine"
DE_REPLY = (
    "Hallo Sabine,\n\nja, der Beta-Start am 18.12. passt. Das Angebot schicke ich dir bis zum 9.\n\nViele Grüße\nLena"
)


def failures(draft: str, reply: str = REPLY, email: str = EMAIL, known: str = "") -> set[Failure]:
    return set(judge_draft(draft, reply, email=email, known=known).failures)


def test_the_owners_own_reply_and_light_edits_of_it_are_send_ready():
    assert failures(REPLY) == set()
    assert failures(REPLY.replace("Hi Dana,", "Hello Dana,").replace("Best,", "Best regards,")) == set()


def test_the_same_answer_in_other_words_and_another_number_format_is_send_ready():
    draft = "Hi Dana,\n\nFor workshops I charge EUR 1,100 a day, and you'll get the updated quote from me by Friday.\n\nBest,\nLena"
    assert failures(draft) == set()
    assert (
        failures(
            "Hallo Sabine,\n\nder 18.12. als Beta-Start passt mir. Das Angebot hast du bis zum 9.\n\nLG Lena",
            DE_REPLY,
            DE_EMAIL,
        )
        == set()
    )


def test_a_changed_amount_is_a_wrong_fact_and_the_owners_amount_missing_is_a_missed_ask():
    verdict = judge_draft(REPLY.replace("1,100", "1,300"), REPLY, email=EMAIL)
    assert set(verdict.failures) == {Failure.WRONG_FACT, Failure.MISSED_ASK}
    assert any("1,300 EUR" in f.detail for f in verdict.findings if f.failure is Failure.WRONG_FACT)
    assert any("1,100 EUR" in f.detail for f in verdict.findings if f.failure is Failure.MISSED_ASK)


def test_a_fact_the_notes_give_grounds_a_draft_one_nobody_gave_does_not():
    draft = "Hi Dana,\n\nMy day rate for workshops is 1,100 EUR, as for the beta before the launch on 18.12. I'll send the updated quote by Friday.\n\nBest,\nLena"
    assert failures(draft, known="Beta launch: 18.12.\nDay rate agreed: 1,100 EUR") == set()
    assert failures(draft) == {Failure.WRONG_FACT}


def test_a_holding_reply_where_the_owner_said_yes_misses_the_ask():
    reply = "Hi Dana,\n\nThursday at 3 p.m. works for me.\n\nBest,\nLena"
    draft = "Hi Dana,\n\nThanks for the note. Let me check my calendar and get back to you.\n\nBest,\nLena"
    assert failures(draft, reply, "Hi Lena, can we move the review to 3 p.m. on Thursday? Dana") == {Failure.MISSED_ASK}


def test_a_draft_cut_off_mid_sentence_misses_the_ask():
    assert Failure.MISSED_ASK in failures("Hi Dana,\n\nMy day rate for workshops is 1,100 EUR. I'll send the updated")


def test_declining_where_the_owner_agreed_is_a_wrong_commitment_in_each_language():
    hedged = DE_REPLY.replace("der Beta-Start am 18.12. passt", "der Beta-Start am 18.12. klappt leider nicht")
    assert failures(hedged, DE_REPLY, DE_EMAIL) == {Failure.WRONG_COMMITMENT}
    fr_reply = "Bonjour Claire,\n\nOui, le lancement du 18 mars me convient.\n\nBien à vous,\nLena"
    fr_draft = "Bonjour Claire,\n\nMalheureusement, le lancement du 18 mars ne me convient pas.\n\nBien à vous,\nLena"
    assert failures(fr_draft, fr_reply, "Le lancement du 18 mars vous convient-il ?") == {Failure.WRONG_COMMITMENT}


def test_another_language_or_register_is_a_voice_failure():
    english = "Hi Sabine,\n\nyes, the beta start on 18.12. works. I'll send you the quote by the 9th.\n\nBest,\nLena"
    assert failures(english, DE_REPLY, DE_EMAIL) == {Failure.VOICE}
    sie = DE_REPLY.replace("Hallo Sabine", "Hallo Frau Kranich").replace("schicke ich dir", "schicke ich Ihnen")
    verdict = judge_draft(sie, DE_REPLY, email=DE_EMAIL)
    assert verdict.failures == (Failure.VOICE,) and "“Sie” where you wrote “du”" in verdict.findings[0].detail
    tu = "Salut Julien,\n\noui, je regarde le panier d'ici le 9 et je te fais un retour.\n\nLena"
    vous = "Bonjour Julien,\n\nOui, je regarderai le panier d'ici le 9 et je vous ferai un retour.\n\nLena"
    assert failures(vous, tu, "Tu peux regarder le panier d'ici le 9 ?") == {Failure.VOICE}


def test_a_short_english_reply_is_english_and_a_placeholder_is_no_word_of_the_draft():
    """language_of reads "My day rate is 1,100 EUR." as Dutch ("is") and H0's English placeholder text in a German
    draft as English: the judge tells a language by its function words and leaves placeholders out."""
    short = "Hi Dana,\n\nMy day rate for workshops is 1,100 EUR. Thursday at 3 p.m. is fine.\n\nBest,\nLena"
    draft = "Hi Dana,\n\nFor workshops it is 1,100 EUR a day, and Thursday at 3 p.m. is fine.\n\nBest,\nLena"
    assert failures(draft, short, "Hi Lena, your day rate? And Thursday at 3 p.m.?") == set()
    german = "Guten Tag Herr Berg,\n\n[FILL: 14 Uhr — H0 has no calendar to check it] geht bei mir.\n\nLena"
    assert failures(german, "Guten Tag Herr Berg,\n\n14 Uhr geht bei mir.\n\nLena", "Geht 14 Uhr?") == {
        Failure.PLACEHOLDER
    }


def test_two_stock_phrases_are_padding_one_is_courtesy():
    polite = REPLY.replace("by Friday.", "by Friday. Let me know if you have any questions.")
    assert failures(polite) == set()
    padded = REPLY.replace("Hi Dana,\n\n", "Hi Dana,\n\nI hope this email finds you well! ").replace(
        "by Friday.", "by Friday. Please don't hesitate to reach out if anything is unclear."
    )
    assert failures(padded) == {Failure.PADDING}


def test_placeholders_of_h0_and_of_templates_are_never_send_ready():
    assert failures(REPLY.replace("1,100 EUR", "[FILL: day rate]")) == {Failure.PLACEHOLDER, Failure.MISSED_ASK}
    for hole in ("[Your name]", "[Votre nom]", "{{first_name}}", "XX:XX"):
        assert Failure.PLACEHOLDER in failures(REPLY.replace("Lena", hole)), hole
    assert Failure.PLACEHOLDER in failures("[H0 draft — edit before approving]\n" + REPLY)


def test_a_signature_block_under_the_sign_off_is_the_owners_not_facts_of_the_reply():
    signed = REPLY + "\n\nLena Hartmann\nHartmann Studio\n+49 30 5550 1234"
    assert failures(signed) == set()


def test_no_draft_misses_the_ask():
    assert failures("") == {Failure.MISSED_ASK}
    assert failures(" \n\t") == {Failure.MISSED_ASK}


@pytest.mark.parametrize(
    "hostile",
    [
        "Hi Dana,\n\n" + "My day rate is 1,100 EUR. " * 40_000,  # a model that would not stop
        "1" * 300_000,
        "." * 300_000 + "?",
        "[" * 200_000 + "FILL:",
        "Hi\u202e Dana\u200b,\n\n\x00\x1b[31m" + "ne " * 100_000 + "pas",
        "18." * 100_000,
    ],
)
def test_a_hostile_draft_is_judged_within_bounds_and_never_send_ready(hostile):
    started = time.perf_counter()
    verdict = judge_draft(hostile, REPLY, email=hostile[:50_000], known=hostile[:50_000])
    assert not verdict.send_ready
    assert time.perf_counter() - started < 10  # bounded: 20,000 characters of each text are read (~0.1 s)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,100 EUR", [("amount", "1100")]),
        ("EUR 1.100", [("amount", "1100")]),
        ("1.250 €", [("amount", "1250")]),
        ("24 000 €", [("amount", "24000")]),
        ("38k€", [("amount", "38000")]),
        ("Der Beta-Start am 18.12.", [("date", "12-18")]),
        ("on 18 December", [("date", "12-18")]),
        ("December 18th", [("date", "12-18")]),
        ("le 18 décembre", [("date", "12-18")]),
        ("2026-12-18", [("date", "12-18")]),
        ("bis zum 9.", [("day", "9")]),
        ("by the 9th", [("day", "9")]),
        ("d'ici le 9 ?", [("day", "9")]),
        ("3 p.m.", [("time", "15:00")]),
        ("um 15 Uhr", [("time", "15:00")]),
        ("à 15 h", [("time", "15:00")]),
        ("15:30", [("time", "15:30")]),
        ("Donnerstagnachmittag", [("weekday", "3")]),
        ("jeudi", [("weekday", "3")]),
        ("Rechnung Nr. 2026-114", [("code", "2026-114")]),
        ("INV-2231", [("code", "INV-2231")]),
        ("14 screens", [("number", "14")]),
    ],
)
def test_facts_are_read_in_one_form_whatever_the_language_writes(text, expected):
    assert [(f.kind, f.value) for f in facts(text)] == expected


def test_number_values_read_grouping_by_the_three_digits_after_the_mark():
    assert [number_value(t) for t in ("1,100", "1.100", "1,10", "2,5", "1.250,50", "1 000")] == [
        "1100",
        "1100",
        "1.1",
        "2.5",
        "1250.5",
        "1000",
    ]
