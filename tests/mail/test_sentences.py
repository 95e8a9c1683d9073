"""The sentences of a message's text (h0.mail.incoming.sentences): a stop ends a sentence only where a
sentence can end, a wrapped line goes on, and any text costs linear time."""

from __future__ import annotations

import time

import pytest

from h0.mail.incoming.sentences import sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thanks. Is it final? Yes!", ["Thanks.", "Is it final?", "Yes!"]),
        ("Wir starten am 18.12. Kannst du?", ["Wir starten am 18.12.", "Kannst du?"]),
        ("Wir starten am 18.12. mit dem Team.", ["Wir starten am 18.12. mit dem Team."]),
        ("J. Smith and M. Dupont came. It went well.", ["J. Smith and M. Dupont came.", "It went well."]),
        ("Hi Lena,\nCan we talk?", ["Hi Lena,", "Can we talk?"]),
        ("Could you send me the\nupdated quote?", ["Could you send me the\nupdated quote?"]),
        (
            "A line the client wrapped because it ran past sixty characters\nSo it goes on.",
            ["A line the client wrapped because it ran past sixty characters\nSo it goes on."],
        ),
        ("One\n\ntwo", ["One", "two"]),
        ("", []),
    ],
)
def test_where_sentences_end(text, expected):
    assert sentences(text) == expected


@pytest.mark.timeout(30)
def test_a_hostile_text_costs_linear_time():
    started = time.perf_counter()
    for text in ("a. " * 70_000, "." * 200_000, "\n" * 200_000, "x\n" * 100_000, "18.12. Kannst " * 15_000):
        sentences(text)
    assert time.perf_counter() - started < 3.0
