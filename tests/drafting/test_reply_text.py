"""A reply's quoted history is cut exactly where `mail-parser-reply` cuts it (`parsed_reply`): H0 tries the
parser's header patterns only where a header can begin (a line's start, a newline, a dash), and must find
the very headers the parser's own scan of every character finds. What H0 then keeps of the reply (its own
signature rule, bottom-posting) is tested in tests/judgments/test_reply_text_world.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from mailparser_reply import EmailReplyParser

from h0.drafting.replytext import LANGUAGES, MAX_HEADER_LINE, MAX_PARSE_CHARS, latest_reply, parsed_reply, strip_quoted

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FILLER = " ".join(["project review budget plan draft design team schedule"] * 40)
SAMPLES = [
    "Could we move the review to Friday at 10?\n\n" + FILLER,
    "Sounds good.\n\nOn Mon, 3 Mar 2026 at 10:00, Dana Rivera <dana@example.com> wrote:\n> Can we meet?\n> Dana",
    "Passt.\n\nAm 03.03.2026 um 10:00 schrieb Dana Rivera <dana@example.com>:\n> Treffen?",
    "D'accord.\n\nLe lun. 3 mars 2026 à 10:00, Dana <dana@example.com> a écrit :\n> On se voit ?",
    "Vale.\n\nEl lun, 3 mar 2026 a las 10:00, Dana (<dana@example.com>) escribió:\n> ¿Nos vemos?",
    "Ok.\n\nIl giorno lun 3 mar 2026, Dana ha scritto:\n> Ci vediamo?",
    "Prima.\n\nOp ma 3 mrt 2026 om 10:00 schreef Dana <dana@example.com>:\n> Zien we elkaar?",
    "Fint.\n\nDen mån 3 mars 2026 skrev Dana <dana@example.com>:\n> Ses vi?",
    "Ok.\n\nDnia 3 marca 2026 Dana napisał(a):\n> Spotkamy się?",
    "Ok.\n\nDne 3. 3. 2026 Dana napsal(a):\n> Uvidíme se?",
    "はい。\n\n2026年3月3日(月) 10:00 Dana <dana@example.com>:\n> 会えますか?",
    "Thanks!\n\n-----Original Message-----\nFrom: Dana\nSent: Monday\nTo: Me\nSubject: Plans\n\nCan we meet?",
    "Tak.\n\nmid-line text-----Oprindelig meddelelse-----\nFra: Dana\nSendt: mandag\nTil: mig\nEmne: Planer\n",
    "Ja.\n-----Oprindelig meddelelse-----\nFra: Dana\nTil: mig\n",
    "Yes.\n\nFrom: Dana <dana@example.com>\nSent: Monday, March 3, 2026 10:00 AM\nTo: Me\nSubject: Re: plans\n> old",
    "Von: Dana\nGesendet: Montag\nAn: mich\nBetreff: Pläne\n\nHallo",
    "Do: someone\nstill a line\n> From: a\n> To: b\n",
    "-- \nJonas Berg\nSent from my iPhone",
    "Hi Dana,\n\nsee below - the plan -- as agreed ---- done.\n\nBest regards,\nJonas\n\n> On Tue, Dana wrote:\n> x",
    "\n\n\n",
    "",
    "no newline at all, a single long line with a dash - and a colon: here " * 30,
    # Signatures: where the parser's search may begin (blank space before a line, a newline before another).
    "Fine by me.   \n \t\n-- \nJonas\n+49 170 000",
    "Fine by me.\n\n\n\n________________________________\nFrom: Dana\nSent: Monday",
    "Fine.\n\n ---------------------------------------------\nquoted",
    "Sure.\n\xa0\n\u2028\nBest regards,\nJonas",
    "Sure.\r\n\r\nKind regards\r\nJonas\r\n",
    "- a list item\n- another\n\nCheers,\nJ",
    "Sent from my iPhone",
    "> -- \n> quoted signature\n\nMy answer\n\nMit freundlichen Grüßen\nJonas",
    "Ok.\n\nOn Mon, Dana wrote:\n> Hi\n> --\n> Dana\n\nOn Sun, Jonas wrote:\n> Best,\n> Jonas",
    "Answer.\n__\nsig",
    # The Japanese header is looked for only where "年" is: with it, without it, and "年" elsewhere.
    "了解です。\n\n2026年3月3日(月) 10:00 Dana <dana@example.com>:\n> 会えますか?\n\nよろしく",
    "2025年の計画について。\n\nOn Mon, 3 Mar 2026, Dana <dana@example.com> wrote:\n> plans",
    "Answer " + "word " * 600 + "\n\nOn Tue, Dana wrote:\n> x",
]


def corpus() -> list[str]:
    texts = list(SAMPLES)
    for path in sorted(FIXTURES.rglob("*.md")):
        texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return texts


def parsed_by_the_library(text: str) -> tuple[str, str]:
    message = EmailReplyParser(languages=list(LANGUAGES)).read(text)
    if not message.replies:
        return "", ""
    reply = message.replies[0]
    return reply.full_body.strip(), reply.signatures.strip()


@pytest.mark.parametrize("text", corpus())
def test_given_any_email_text_when_its_reply_is_cut_then_it_is_where_the_parser_cuts_it(text):
    assert parsed_reply(text) == parsed_by_the_library(text)


def test_given_an_answer_above_a_quoted_email_when_stripped_then_only_the_answer_is_left():
    assert strip_quoted(SAMPLES[1]) == "Sounds good."
    assert strip_quoted(SAMPLES[11]) == "Thanks!"


# What starts or ends a reply, a signature or a header, in any order: the parser and H0 must agree on all of it.
PIECES = [
    *("\n", "\n\n", " ", "\t", "\xa0", "\u2028", "\r\n", "-- ", "--", "__", "- x", "-x", "> ", "_" * 35, "-" * 40),
    *("Best regards,", "Cheers", "Mit freundlichen Grüßen", "Sent from my iPhone", "Get Outlook for iOS"),
    *("On Mon, Dana wrote:", "Am 3.3. schrieb Dana:", "From: a", "To: b", "Subject: c", "-----Original Message-----"),
    *("2026年3月3日(月) 10:00 Dana <d@e.com>:", "年", "Disclaimer: this mail", "hello world", "x"),
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=25))
def test_given_pieces_of_replies_in_any_order_when_cut_then_it_is_where_the_parser_cuts_it(pieces):
    text = "".join(pieces)
    assume(all(len(line) <= MAX_HEADER_LINE for line in text.split("\n")))  # longer: never a header (below)
    assert parsed_reply(text) == parsed_by_the_library(text)


@pytest.mark.parametrize(
    "text",
    [
        "line\n" * 100_000,
        "word " * 200_000,  # 1 MB on one line
        "".join("> " * depth + "quoted\n" for depth in range(2_000)),
        "-- \nsig\n" * 20_000,
    ],
    ids=["100k-lines", "1MB-one-line", "nested-quotes", "many-signatures"],
)
def test_given_a_hostile_body_when_its_reply_is_cut_then_it_is_the_parsers_cut_of_the_bounded_prefix(text):
    assert parsed_reply(text) == parsed_by_the_library(text[:MAX_PARSE_CHARS])


@pytest.mark.timeout(30)  # the parser's own header patterns took ~70 s on this body, holding the GIL
def test_a_stranger_s_line_too_long_to_be_a_reply_header_is_never_tried_as_one():
    """A reply header ("On … wrote:") is one line of a few hundred characters at most; the parser's patterns
    take time in the square of a line's length, so a longer line is never tried: a 48 KB line starting
    "On " is the reply's own text, and even a long line ending in "wrote:" is not taken for a header."""
    hostile = "On " + "x" * 48_000 + "\n\nmore text\n"
    assert latest_reply(hostile) == (hostile.strip(), "")
    long_header = "Thanks!\n\nOn " + "Dana " * (MAX_HEADER_LINE // 5) + "wrote:\n> Could we move it?\n"
    assert latest_reply(long_header)[0].endswith("> Could we move it?")
    short_header = (
        "Thanks!\n\nOn Mon, 3 Nov 2026 at 10:00, Dana Rivera <dana@example.com> wrote:\n> Could we move it?\n"
    )
    assert latest_reply(short_header) == ("Thanks!", "")
