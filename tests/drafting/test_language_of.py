"""An email's language by its common words (h0.drafting.voice.language_of): ASCII text is lowered and split
at what is not a letter, other text matched word by word; both must read the same words."""

from __future__ import annotations

import pytest

from h0.drafting.voice import language_of


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Could we move the review to Friday? Thanks for the notes and your help.", "en"),
        ("THE REVIEW AND THE NOTES: THANKS FOR YOUR HELP", "en"),  # capitals are the same words
        ("Können wir uns nächste Woche treffen? Ich habe Zeit und danke dir.", "de"),
        ("Bonjour, pouvez vous venir? Merci pour votre aide et bien à vous.", "fr"),
        ("the_and_you_for", "en"),  # an underscore splits
        ("the1and2you3for4", "en"),  # a digit splits
        ("don't the-and you'll for", "en"),  # apostrophes and hyphens split
        ("ok", None),  # too short to tell
        ("the und the und", None),  # a tie tells nothing
        # "İ" is one letter (a word too short to count) that lowers to two: it must not count as a word.
        ("İ per ich die", None),
        ("İİ per ich die", "de"),
    ],
)
def test_the_language_of_a_text(text, language):
    assert language_of(text) == language


def test_only_the_first_4000_characters_are_read():
    assert language_of("x " * 2_000 + "und der die das ich") is None
    assert language_of("und der die das ich " + "x " * 2_000 + "the " * 100) == "de"
