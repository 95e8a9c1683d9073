"""The questions an email asks (h0.drafting.briefing.questions): each sentence ending with "?", a
sentence ending after ".", "!", "?" or a line break; quoted lines, greetings and repeats left out."""

from __future__ import annotations

import time

import pytest

from h0.drafting.briefing import MAX_QUESTIONS, MAX_SCAN_CHARS, questions


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        (
            "Could we move the review to Friday at 10?\n\nproject review budget",
            ["Could we move the review to Friday at 10?"],
        ),
        ("Hi Dana, can we meet?", ["can we meet?"]),
        ("Thanks. Is the budget final? It is late! And the plan?", ["Is the budget final?", "And the plan?"]),
        ("Wait... really?? Yes?! Sure", ["really?", "Yes?"]),
        ("First line\nSecond\t  line   with space?", ["Second line with space?"]),
        # A line the sender's client wrapped goes on: it opens in lower case, or the line above is long.
        ("Could you send me the\nupdated quote?", ["Could you send me the updated quote?"]),
        ("> Is this quoted?\nIs this not?", ["Is this not?"]),
        ("Same one? Same one? Same one?", ["Same one?"]),
        # Quoted lines go, indented ones and the blank lines above them too (line breaks after them stay).
        ("Is this new?\n\n \n> old?\n   > older?\nAnd this?", ["Is this new?", "And this?"]),
        ("Really\r\n> quoted?\r\nsure?", ["sure?"]),
        ("Tabs\t\n\t>not asked?\nasked now?", ["asked now?"]),
        ("a? ok?", []),  # too short to be a question
        ("No question here.", []),
        ("", []),
    ],
)
def test_the_questions_an_email_asks(text: str, asked: list[str]):
    assert questions(text) == asked


def test_at_most_the_first_questions_within_the_scanned_head():
    many = " ".join(f"Question number {i}?" for i in range(20))
    assert questions(many) == [f"Question number {i}?" for i in range(MAX_QUESTIONS)]
    assert questions("x" * MAX_SCAN_CHARS + " Is this read?") == []


def test_a_hostile_text_of_questions_costs_linear_time():
    started = time.perf_counter()
    questions("why? " * 200_000 + "." * 100_000 + "?")
    questions("\n" * 500_000 + "?")  # blank lines: the quoted-line search once took minutes
    questions(" \n" * 100_000 + "> quoted\n" + "Is it fast?")
    assert time.perf_counter() - started < 2.0


# ----------------------------------------------------------------- whole questions in en/de/fr (issue 41)


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        # A German ordinal date ends no sentence: "18.12." and "am 9." are inside the question.
        (
            "kurze Frage zum Portal. Passt der Beta-Start am 18.12.? Und kannst du mir das Angebot bis zum 9. schicken?",
            ["Passt der Beta-Start am 18.12.?", "Und kannst du mir das Angebot bis zum 9. schicken?"],
        ),
        # ... but a date before a sentence's first word ends the sentence it closes.
        ("Der Workshop ist am 3.12. Kannst du kommen?", ["Kannst du kommen?"]),
        (
            "Ist der 2. Entwurf fertig? Kommt er am 9. Dezember?",
            ["Ist der 2. Entwurf fertig?", "Kommt er am 9. Dezember?"],
        ),
        # Amounts: a stop inside a number is no end.
        (
            "Gilt der Preis von 1.250 € noch? Bleibt es bei 38.000 €?",
            ["Gilt der Preis von 1.250 € noch?", "Bleibt es bei 38.000 €?"],
        ),
        # Abbreviations in each language.
        ("Hast du z. B. die Logos schon bekommen?", ["Hast du z. B. die Logos schon bekommen?"]),
        (
            "Hast du z. B. Logos bzw. Icons? Ist die Rechnung Nr. 12 raus?",
            ["Hast du z. B. Logos bzw. Icons?", "Ist die Rechnung Nr. 12 raus?"],
        ),
        ("Wie viele kommen ca. zum Termin?", ["Wie viele kommen ca. zum Termin?"]),
        (
            "Who should we invite, e.g. from finance? Did you get invoice no. 2026-114?",
            ["Who should we invite, e.g. from finance?", "Did you get invoice no. 2026-114?"],
        ),
        (
            "Can we move it to 3 p.m. on Thursday? Did Dr. Berg sign?",
            ["Can we move it to 3 p.m. on Thursday?", "Did Dr. Berg sign?"],
        ),
        (
            "Avez-vous reçu les maquettes, p. ex. la page d'accueil ? M. Dupont et Mme Petit viennent-ils ?",
            ["Avez-vous reçu les maquettes, p. ex. la page d'accueil ?", "M. Dupont et Mme Petit viennent-ils ?"],
        ),
        ("C'est bon pour toi, le 18.12. ?", ["C'est bon pour toi, le 18.12. ?"]),
        # A list of questions, and a question introduced by a colon.
        ("Two things:\n- Can you confirm the scope?\n1. Who signs?", ["Can you confirm the scope?", "Who signs?"]),
        (
            "unser Controlling fragt nach: Could you split the invoice by phase?",
            ["Could you split the invoice by phase?"],
        ),
        # A sign or a quote after a stop goes on; a greeting with a dash and a lower-case lead-in are left out.
        ("Is the budget approx. $40k or more?", ["Is the budget approx. \\$40k or more?"]),
        ("Hey Lena — quick q: would next Wed or Thu work?", ["would next Wed or Thu work?"]),
        ("Reichen Links, Screenshots usw.? Gut.", ["Reichen Links, Screenshots usw.?"]),
        (
            "Faut-il le n° de TVA, l'adresse, etc. ? Et le bon (cf. PJ) ?",
            ["Faut-il le n° de TVA, l'adresse, etc. ?", "Et le bon (cf. PJ) ?"],
        ),
        # A "?" inside a link asks nothing.
        ("See https://example.com/view?id=42 for the file.", []),
    ],
)
def test_given_dates_amounts_and_abbreviations_when_questions_are_read_then_each_is_whole(text, asked):
    assert questions(text) == asked


OUTLOOK_HISTORY = {
    "de": (
        "Von: Lena Hartmann <lena@hartmann-studio.de>\nGesendet: Montag, 16. November 2026 10:12\n"
        "An: Jonas Berg <jonas.berg@kranich-logistik.de>\nBetreff: Rechnung\n\nHallo Herr Berg,\n\n"
        "ist die Rechnung bei Ihnen angekommen? Und wer gibt sie frei?\n\nViele Grüße\nLena"
    ),
    "en": (
        "From: Lena Hartmann <lena@hartmann-studio.de>\nSent: Monday, November 16, 2026 10:12 AM\n"
        "To: Jonas Berg <jonas.berg@kranich-logistik.de>\nSubject: Invoice\n\nHi Jonas,\n\n"
        "did the invoice arrive? Who approves it?\n\nBest,\nLena"
    ),
    "fr": (
        "De : Lena Hartmann <lena@hartmann-studio.de>\nEnvoyé : lundi 16 novembre 2026 10:12\n"
        "À : Jonas Berg <jonas.berg@kranich-logistik.de>\nObjet : Facture\n\nBonjour,\n\n"
        "avez-vous reçu la facture ? Qui la valide ?\n\nBien à vous,\nLena"
    ),
}


@pytest.mark.parametrize("lang", sorted(OUTLOOK_HISTORY))
def test_given_outlooks_unquoted_history_when_questions_are_read_then_only_the_senders_own_count(lang):
    """Outlook quotes the earlier mail unmarked under a From:/Von:/De : block: never the sender's questions."""
    own = "Hallo Frau Hartmann,\n\ndie Rechnung ist freigegeben. Können Sie uns noch ein Angebot schicken?\n\nGrüße\nJonas"
    assert questions(f"{own}\n\n{OUTLOOK_HISTORY[lang]}") == ["Können Sie uns noch ein Angebot schicken?"]
