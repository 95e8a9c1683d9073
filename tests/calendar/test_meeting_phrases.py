"""Requests to meet in English, German and French (h0.calendar.phrases, h0.calendar.when): the phrasings real
mail uses are read as requests with their length, days and part of day; mail that names a call, a meeting or
a day without asking for one is not; and the times proposed keep to the length and part of day asked."""

from __future__ import annotations

from datetime import date, time
from zoneinfo import ZoneInfo

import pytest

from h0.calendar.phrases import asks_to_meet, meeting_ask
from h0.calendar.proposal import plan_meeting
from h0.calendar.service import OwnerCalendar
from h0.calendar.sources import Source
from tests.calendar.conftest import at

BERLIN = ZoneInfo("Europe/Berlin")
TUESDAY = date(2026, 11, 17)  # "today" in these tests
NOW = at(BERLIN, 2026, 11, 17, 8)
THIS_THURSDAY, NEXT_MONDAY = date(2026, 11, 19), date(2026, 11, 23)
NEXT_WEEK = tuple(date(2026, 11, 23 + i) for i in range(7))


@pytest.mark.parametrize(
    ("text", "days", "minutes", "part"),
    [
        ("Do you have time for a coffee next week?", NEXT_WEEK, None, None),
        ("Could we do a quick 20 min call tomorrow?", (date(2026, 11, 18),), 20, None),
        ("Can we set up a one-hour call on Thursday to go through the flows?", (THIS_THURSDAY,), 60, None),
        ("Are you free Thursday afternoon for a chat?", (THIS_THURSDAY,), None, "afternoon"),
        ("Would Tuesday or Wednesday morning work for a 45-minute call?", (TUESDAY, date(2026, 11, 18)), 45, "morning"),
        ("Would you have an hour on Monday morning for a workshop?", (NEXT_MONDAY,), 60, "morning"),
        ("Let's catch up over lunch on Friday.", (date(2026, 11, 20),), None, None),
        (
            "I'd love to grab a coffee with you sometime this week.",
            tuple(date(2026, 11, 17 + i) for i in range(6)),
            None,
            None,
        ),
        ("Can we hop on a call today? Half an hour should do.", (TUESDAY,), 30, None),
        (
            "Do you have 15 minutes to jump on Zoom Monday or Tuesday afternoon next week?",
            NEXT_WEEK[:2],
            15,
            "afternoon",
        ),
        ("I'll be in Berlin from Tuesday to Thursday next week – could we grab lunch?", NEXT_WEEK[1:4], None, None),
        (
            "Could you send over your availability for a 90-minute workshop? Any day next week except Friday.",
            NEXT_WEEK[:4],
            90,
            None,
        ),
    ],
)
def test_given_an_english_request_when_read_then_its_days_length_and_part_of_day(text, days, minutes, part):
    ask = meeting_ask(f"Hi Lena,\n\n{text}\n\nBest,\nOliver", TUESDAY)
    assert ask is not None, text
    assert (ask.days, ask.minutes, ask.part, ask.language) == (days, minutes, part, "en")


@pytest.mark.parametrize(
    ("text", "days", "minutes", "part"),
    [
        ("Hast du Donnerstagnachmittag Zeit für ein kurzes Telefonat?", (THIS_THURSDAY,), None, "afternoon"),
        ("Können wir uns nächste Woche auf einen Kaffee treffen?", NEXT_WEEK, None, None),
        ("Hätten Sie am Dienstag eine Stunde Zeit für einen Termin?", (TUESDAY,), 60, None),
        ("Lass uns morgen kurz telefonieren, 15 Minuten reichen.", (date(2026, 11, 18),), 15, None),
        ("Wann passt es dir diese Woche für einen Call?", tuple(date(2026, 11, 17 + i) for i in range(6)), None, None),
        ("Passt dir Freitagvormittag für ein 30-minütiges Gespräch?", (date(2026, 11, 20),), 30, "morning"),
        (
            "Sollen wir uns am Mittwochnachmittag für eine halbe Stunde zusammensetzen?",
            (date(2026, 11, 18),),
            30,
            "afternoon",
        ),
        # "nächsten Montag" is Monday of next week — also when said on a Monday.
        ("Können wir nächsten Montag eine Stunde telefonieren?", (NEXT_MONDAY,), 60, None),
        (
            "Hätten Sie in der kommenden Woche am Mittwoch oder Donnerstag vormittags Zeit für ca. 45 Minuten?",
            NEXT_WEEK[2:4],
            45,
            "morning",
        ),
    ],
)
def test_given_a_german_request_when_read_then_its_days_length_and_part_of_day(text, days, minutes, part):
    ask = meeting_ask(f"Hallo Lena,\n\n{text}\n\nViele Grüße\nSabine", TUESDAY)
    assert ask is not None, text
    assert (ask.days, ask.minutes, ask.part, ask.language) == (days, minutes, part, "de")


def test_nachsten_montag_said_on_a_monday_is_a_week_later():
    ask = meeting_ask("Können wir nächsten Montag telefonieren?", date(2026, 11, 16))
    assert ask is not None and ask.days == (NEXT_MONDAY,)


@pytest.mark.parametrize(
    ("text", "days", "minutes", "part"),
    [
        ("Auriez-vous un créneau jeudi après-midi pour un appel d'une heure ?", (THIS_THURSDAY,), 60, "afternoon"),
        ("On se prend un café la semaine prochaine ?", NEXT_WEEK, None, None),
        ("Est-ce qu'on peut s'appeler demain ? 20 minutes suffisent.", (date(2026, 11, 18),), 20, None),
        ("Seriez-vous disponible mardi matin pour une réunion ?", (TUESDAY,), None, "morning"),
        ("Pourrions-nous caler un rendez-vous de 30 minutes vendredi ?", (date(2026, 11, 20),), 30, None),
        (
            "Tu as une demi-heure cette semaine pour en parler ?",
            tuple(date(2026, 11, 17 + i) for i in range(6)),
            30,
            None,
        ),
        ("Serait-il possible de caler une visio de 30 min mardi ou mercredi prochain ?", NEXT_WEEK[1:3], 30, None),
    ],
)
def test_given_a_french_request_when_read_then_its_days_length_and_part_of_day(text, days, minutes, part):
    ask = meeting_ask(f"Bonjour Lena,\n\n{text}\n\nBien à vous,\nClaire", TUESDAY)
    assert ask is not None, text
    assert (ask.days, ask.minutes, ask.part, ask.language) == (days, minutes, part, "fr")


@pytest.mark.parametrize(
    "text",
    [
        # An attacker's opener: "are you free?" with nothing to meet for is a gift-card fraud, not a meeting.
        (
            "Hi Lena,\n\nare you free? I need 5 Apple gift cards (100 EUR each) for a client gift today. "
            "Can you buy them and send me the codes? I'll pay you back tomorrow.\n\nThanks\nMarcus"
        ),
        "Are you available? I need you to handle a confidential wire transfer today.",
        # Work asked for by a day, not a meeting.
        "Great speaking with you on the call this morning! Are you free to review the notes by Friday?",
        # A meeting moved is the sender's time to name.
        "Can we move the review to 3 p.m. on Thursday?",
        "Können wir den Call am Donnerstag auf 15 Uhr verschieben?",
        "Peut-on décaler la réunion à 15 h ?",
        # Meetings mentioned, none asked for.
        "Thanks for the call yesterday, it helped a lot. The meeting notes from Tuesday are in the folder.",
        "Danke für das Gespräch gestern. Das Protokoll vom Dienstag liegt im Ordner.",
        "Merci pour la réunion de mardi. Pouvez-vous m'envoyer le compte rendu avant vendredi ?",
        # Bulk mail.
        "Join our webinar on Thursday — are you free for a call with our sales team? Unsubscribe here.",
    ],
)
def test_given_mail_that_asks_for_no_meeting_when_read_then_it_is_none(text):
    assert meeting_ask(text, TUESDAY) is None
    assert not asks_to_meet(text)


def test_the_days_are_read_from_the_request_not_from_the_rest_of_the_email():
    """ "The notes from Tuesday …" sets the scene; the request asks for Thursday afternoon."""
    text = (
        "Invoice\nGuten Tag Frau Hartmann,\n\nDas Protokoll vom Dienstag liegt im geteilten Ordner.\n\n"
        "Hast du Donnerstagnachmittag Zeit für ein kurzes Telefonat?\n\nKannst du mir das Angebot bis Freitag schicken?"
    )
    ask = meeting_ask(text, TUESDAY)
    assert ask is not None and ask.days == (THIS_THURSDAY,) and ask.part == "afternoon"


def test_a_greeting_names_no_part_of_day():
    ask = meeting_ask("Good morning Lena, are you free Thursday for a call?", TUESDAY)
    assert ask is not None and ask.part is None
    ask = meeting_ask("Guten Morgen Lena, hast du am Donnerstag Zeit?", TUESDAY)
    assert ask is not None and ask.part is None and ask.days == (THIS_THURSDAY,)


def free_week() -> OwnerCalendar:
    empty = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//h0//test//EN\r\nEND:VCALENDAR\r\n"
    return OwnerCalendar([Source("empty.ics", "empty.ics", lambda: empty)], None)


@pytest.mark.parametrize(
    ("text", "part", "minutes"),
    [
        ("Are you free Thursday afternoon for a one-hour call?", "afternoon", 60),
        ("Hast du Donnerstagnachmittag eine Stunde Zeit für ein Telefonat?", "afternoon", 60),
        ("Auriez-vous un créneau jeudi après-midi pour un appel d'une heure ?", "afternoon", 60),
        ("Would Thursday morning work for a 45-minute call?", "morning", 45),
    ],
)
def test_given_a_part_of_day_and_a_length_when_times_are_proposed_then_every_one_keeps_to_both(
    berlin, text, part, minutes
):
    scheduling = plan_meeting(free_week(), berlin, text, now=NOW)
    assert scheduling is not None and scheduling.proposed
    for slot in (*scheduling.proposed, *scheduling.free):
        start, end = slot.start.astimezone(BERLIN), slot.end.astimezone(BERLIN)
        assert start.date() == THIS_THURSDAY
        assert (end - start).total_seconds() == minutes * 60
        assert start.time() >= time(12) if part == "afternoon" else end.time() <= time(12)


def test_a_french_request_gets_its_proposal_in_french(berlin):
    scheduling = plan_meeting(
        free_week(), berlin, "Bonjour, seriez-vous disponible jeudi matin pour un appel ?", now=NOW
    )
    assert scheduling is not None
    reply = scheduling.reply_text()
    assert reply.startswith("Voici quelques créneaux qui me conviennent :")
    assert "- jeudi 19 novembre, 09:00–09:30 (Europe/Berlin)" in reply


def test_when_no_time_of_the_part_asked_is_free_the_owner_is_asked_and_nothing_is_proposed(berlin):
    scheduling = plan_meeting(free_week(), berlin, "Are you free Thursday evening for a call?", now=NOW)
    assert scheduling is not None and not scheduling.proposed
    assert scheduling.questions() == [
        "Which times suit you? (your calendar has no free time of that length in the evening on the days asked)"
    ]


def test_a_model_s_french_times_are_read_to_be_checked():
    """A French reply names "15h30", "9 h", "demain à 14 h": each is checked against the free times like any
    other; a length ("un atelier de 2 h") is not a time."""
    from h0.calendar.checks import named_times

    found = [(n.text, n.hour, n.minute, n.day) for n in named_times("Jeudi à 15h30 ou vendredi 9 h ?", TUESDAY)]
    assert found == [("15h30", 15, 30, THIS_THURSDAY), ("9 h", 9, 0, date(2026, 11, 20))]
    assert [(n.hour, n.day) for n in named_times("demain à 14 h", TUESDAY)] == [(14, date(2026, 11, 18))]
    assert named_times("un atelier de 2 h", TUESDAY) == []


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("Hey Lena — quick q: would next Wed or Thu work for a 1-hour kickoff?", NEXT_WEEK[2:4]),
        ("Hallo Lena, könnten wir am Di., 24.11., gegen 10 Uhr kurz telefonieren?", (date(2026, 11, 24),)),
        ("Un déjeuner mercredi 9, ça vous dirait ?", (date(2026, 12, 9),)),  # the next 9th that is a Wednesday
        ("Could we meet on December 9th?", (date(2026, 12, 9),)),
        ("Free for a quick sync at 4pm today?", (TUESDAY,)),
        ("How about a call on Thursday?", (THIS_THURSDAY,)),
        ("Wie wäre es mit einem Call am Freitag?", (date(2026, 11, 20),)),
    ],
)
def test_given_short_weekdays_written_dates_and_proposals_when_read_then_the_days_asked(text, days):
    ask = meeting_ask(text, TUESDAY)
    assert ask is not None and ask.days == days, text


@pytest.mark.parametrize(
    "text",
    [
        "Also, is the kick-off still set for Dec. 4 at 10 a.m.?",  # a meeting arranged: confirmed, not asked for
        "Wie viele Leute sollen ca. zum Termin am 9. Dezember kommen?",  # about a meeting, not for one
        "Who is coming to the call on Thursday?",
    ],
)
def test_a_question_about_a_meeting_already_arranged_is_no_request(text):
    assert meeting_ask(text, TUESDAY) is None
