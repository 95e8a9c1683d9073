"""The owner's own words, whole: `split_reply(body).text` is her reply exactly — no quoted history, no
signature block, no device footer, and nothing of hers cut — whatever shape the reply has.

Hostile and odd shapes each have a test: a reply that is only a quote, a signature-only reply, HTML-only
mail, mixed-language mail, quoted history in Gmail's, Outlook's and Apple Mail's formats in English,
German and French, top- and bottom-posted, a reply that opens "Thanks, …", bullet and numbered lists, a
200-message thread, and a stranger's line too long to be tried as a reply header.
"""

from __future__ import annotations

import datetime as dt
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from h0.drafting.replytext import latest_reply, split_reply, strip_quoted
from scripts.world import shapes
from scripts.world.judge import Read, same_lines
from scripts.world.persona import PEOPLE

HARD = [
    "hc-reply-only-quote",
    "hc-reply-signature-only",
    "hc-reply-html-only",
    "hc-reply-thanks-bullets",
    "hc-reply-mixed-language",
    "hc-reply-bottom-posted-apple-fr",
    "hc-reply-outlook-de-von",
    "hc-reply-asks-nothing",
]
WHEN = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)
EARLIER = "Hi Lena,\n\ncan you send the deck before Friday?\nAnd the figures?\n\nBest,\nDana"


@pytest.mark.parametrize("name", HARD)
def test_given_a_hard_case_of_the_owner_when_her_reply_is_read_then_it_is_her_words_exactly(hard_cases, name):
    read: Read = hard_cases[name]
    assert same_lines(split_reply(read.body).text, read.truth.reply_text or ""), split_reply(read.body).text


def test_given_every_reply_of_the_world_when_read_then_each_is_the_owners_words_exactly(all_reads):
    wrong = [
        r.truth.name
        for r in all_reads
        if r.truth.sent and not same_lines(split_reply(r.body).text, r.truth.reply_text or "")
    ]
    assert wrong == []


def test_a_reply_that_is_only_a_quote_has_no_words_of_the_owner():
    for quoted in (
        "On Mon, 2 Mar 2026 at 10:00, Dana <dana@brightline.io> wrote:\n> Can we meet?\n> Dana",
        "> Can we meet?\n> Dana\n",
        "Am 02.03.2026 um 10:00 schrieb Sabine <s@k.de>:\n\n> Passt der 18.12.?",
    ):
        assert split_reply(quoted).text == ""
        assert strip_quoted(quoted) == ""


def test_a_signature_only_reply_has_no_words_of_the_owner():
    assert split_reply("-- \nLena Hartmann\nHartmann Studio\n+49 30 5550 1234").text == ""
    assert split_reply("Sent from my iPhone").text == ""


@pytest.mark.parametrize("opener", ["Thanks, Dana – that works.", "Thanks,", "Danke, Sabine!", "Merci, Claire."])
def test_a_reply_opening_with_thanks_keeps_its_whole_body(opener):
    body = f"Hi Dana,\n{opener}\n\nWhat I need:\n- the copy\n- the logos\n\n1. first\n2. second\n\nAfter that we ship.\n\nBest,\nLena"
    quoted = body + "\n\nOn Mon, 2 Mar 2026 at 10:00, Dana <dana@brightline.io> wrote:\n> What do you need?"
    assert same_lines(split_reply(quoted).text, body)
    assert same_lines(strip_quoted(quoted), body)


# Outlook quotes the history unmarked ("From: …" over the plain text): nobody writes under it.
CLIENTS = [(s, p) for s in ("gmail", "outlook", "apple") for p in ("top", "bottom") if (s, p) != ("outlook", "bottom")]


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
@pytest.mark.parametrize(("style", "posting"), CLIENTS)
def test_quoted_history_of_each_client_in_each_language_is_cut_above_or_below(lang, style, posting):
    reply = {
        "en": "Thanks, Dana!\n\nHere is the plan:\n- the deck on Friday\n- the figures on Monday\n\nBest,\nLena",
        "de": "Hallo Dana,\n\ndas passt:\n1. Deck am Freitag\n2. Zahlen am Montag\n\nViele Grüße\nLena",
        "fr": "Merci, Dana.\n\nVoici le plan :\n• le deck vendredi\n• les chiffres lundi\n\nBien à vous,\nLena",
    }[lang]
    header, quoted = shapes.quoted_history(lang, style, "Dana Rivera", "dana@brightline.io", WHEN, "Deck", EARLIER)
    body = f"{reply}\n\n{header}\n{quoted}" if posting == "top" else f"{header}\n{quoted}\n\n{reply}"
    assert same_lines(split_reply(body).text, reply)


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.sampled_from(PEOPLE), st.booleans(), st.booleans())
def test_given_any_reply_shape_of_the_world_when_read_then_it_is_the_owners_words_exactly(seed, person, answer, asks):
    """Openers, lists, sign-offs, signatures, device footers, every client's quoting in every language."""
    rng = random.Random(seed)
    paragraphs = shapes.owner_words(person, rng, answer=answer, asks=asks)
    original = ("Dana Rivera", WHEN, "Deck", EARLIER) if rng.random() < 0.8 else None
    body, reply, shape = shapes.owner_reply(person, rng, paragraphs=paragraphs, original=original)
    assert same_lines(split_reply(body).text, reply), shape


def test_a_reply_on_top_of_a_200_message_thread_is_the_reply_alone():
    thread = ""
    for depth in range(200):
        thread += f"\n\nOn Mon, 2 Mar 2026 at 10:{depth % 60:02d}, Person {depth} <p{depth}@example.com> wrote:\n"
        thread += "\n".join("> " * (depth + 1) + line for line in ("Earlier message.", "Kind regards"))
    reply = "Hi Dana,\n\nfine by me:\n- one\n- two\n\nCheers,\nLena"
    assert same_lines(split_reply(reply + thread).text, reply)


def test_mixed_language_mail_keeps_both_languages():
    body = "Hallo Sabine,\n\ndas passt. The English copy comes from Dana.\n\nViele Grüße\nLena\n\n-- \nLena Hartmann"
    assert same_lines(split_reply(body).text, body.split("\n\n-- ")[0])


@pytest.mark.timeout(30)
def test_a_strangers_line_too_long_to_be_a_header_is_never_tried_as_one_at_the_top_either():
    """The bottom-posting check tries a reply header only on a first line of sane length (MAX_HEADER_LINE)."""
    hostile = "On " + "x" * 48_000 + " wrote:\n> quoted\n\nanswer\n"
    text, _ = latest_reply(hostile)
    assert text.startswith("On xxx") and text.endswith("answer")
    wrapped = "On Mon, Dana wrote\n" + "y" * 48_000 + ":\n> quoted\n\nanswer\n"
    assert latest_reply(wrapped)[0].endswith("answer")


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "text",
    [
        "\n" * 100_000 + "Thanks!",  # the parser tried its signature pattern from every blank line: minutes
        " \n" * 60_000 + "x",
        "Thanks!" + "\n\n\n" * 20_000 + "-- \nLena",
        "line\n" * 100_000,
        "".join("> " * depth + "quoted\n" for depth in range(2_000)),
    ],
    ids=["100k-blank-lines", "blank-lines-of-spaces", "blank-runs-then-signature", "100k-lines", "nested-quotes"],
)
def test_given_a_hostile_body_when_the_owners_words_are_read_then_it_is_quick_and_bounded(text):
    reply, signature = latest_reply(text)
    assert len(reply) <= len(text) and reply.endswith(signature)
    assert split_reply(text).text.count("\n") <= text.count("\n")
