"""A reply's own words are cut exactly where `mail-parser-reply` cuts them: H0 tries the parser's header
patterns only where a header can begin (a line's start, a newline, a dash), and must find the very
headers the parser's own scan of every character finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from mailparser_reply import EmailReplyParser

from h0.drafting.replytext import LANGUAGES, latest_reply, strip_quoted

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
    assert latest_reply(text) == parsed_by_the_library(text)


def test_given_an_answer_above_a_quoted_email_when_stripped_then_only_the_answer_is_left():
    assert strip_quoted(SAMPLES[1]) == "Sounds good."
    assert strip_quoted(SAMPLES[11]) == "Thanks!"
