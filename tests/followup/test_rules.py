"""The follow-up rules on their own: working days, snooze values, "does it ask something?", machine-made
mail, and what a thread owes and awaits — including the hostile inputs of issue 25."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from email.message import EmailMessage

import pytest

from h0.config import load_settings
from h0.errors import InvalidRequest
from h0.followup.asks import own_words, rules_verdict, sentences
from h0.followup.nudge import NudgeRequest, default_greeting, follow_up_text
from h0.followup.snooze import is_hidden
from h0.followup.threads import Message, assess, reply_needed
from h0.followup.workdays import add_working_days, working_days_between
from h0.mail.incoming.automated import automated_kind, list_address
from h0.mail.owner import owner_addresses
from h0.vault.dates import note_epoch
from h0.vault.marks import SNOOZE_HOW
from h0.vault.model import note_facts
from h0.vault.sendable import CUTOFF

UTC = dt.UTC
OWNER = frozenset({"me@example.com"})


def at(text: str) -> float:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def day(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, UTC).strftime("%a %Y-%m-%d %H:%M")


# -- working days -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "days", "due"),
    [
        ("2026-05-04 10:00", 2, "Wed 2026-05-06 10:00"),  # Monday + 2
        ("2026-05-08 17:00", 2, "Tue 2026-05-12 17:00"),  # Friday: the weekend does not count
        ("2026-05-09 10:00", 2, "Wed 2026-05-13 00:00"),  # Saturday: counts from Monday 00:00
        ("2026-05-10 23:00", 1, "Tue 2026-05-12 00:00"),  # Sunday night
        ("2026-05-08 17:00", 0.5, "Mon 2026-05-11 05:00"),  # half a day, carried over the weekend
        ("2026-05-06 09:00", 0, "Wed 2026-05-06 09:00"),
        ("2026-05-04 10:00", 10, "Mon 2026-05-18 10:00"),
    ],
)
def test_a_deadline_counts_working_days_and_skips_weekends(start, days, due):
    assert day(add_working_days(at(start), days, tz=UTC)) == due


def test_an_age_is_whole_working_days():
    friday = at("2026-05-08 17:00")
    assert working_days_between(friday, at("2026-05-11 16:00"), tz=UTC) == 0  # the weekend is not waiting time
    assert working_days_between(friday, at("2026-05-12 17:00"), tz=UTC) == 2
    assert working_days_between(friday, at("2026-05-01 00:00"), tz=UTC) == 0  # a date in the future: no age


# -- snooze values ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-05-12", "2026-05-12 00:00"),
        ("2026-05-12 09:30", "2026-05-12 09:30"),
        ("2026-05-12T9:30", "2026-05-12 09:30"),
        ("2026-05-12T09:30:15Z", "2026-05-12 09:30"),
        ("2026-05-12 11:30+02:00", "2026-05-12 09:30"),
        (dt.date(2026, 5, 12), "2026-05-12 00:00"),
    ],
)
def test_snooze_until_takes_a_date_or_a_date_and_time(value, expected):
    when = note_epoch(value, "snooze_until", how=SNOOZE_HOW, tz=UTC)
    assert when is not None and dt.datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M") == expected


@pytest.mark.parametrize(
    "value",
    [
        "next tuesday",
        "tomorrow",
        "12/05/2026",
        "2026-13-45",
        "2026-02-30",
        "09:00",
        "2026-05-12 25:00",
        1715500000,
        3.5,
        True,
        ["2026-05-12"],
        {"d": 1},
        "2026-05-12\nstatus: sent",
        "9999-99-99",
    ],
)
def test_a_broken_snooze_until_is_a_typed_error_saying_how_to_write_it(value):
    snooze = note_facts("Needs_Action/a.md", {"snooze_until": value}).snooze
    assert snooze.until is None and isinstance(snooze.problem, InvalidRequest)
    assert "2026-05-12" in snooze.problem.message and snooze.problem.code == "invalid_request"


def test_only_a_valid_snooze_in_the_future_hides_a_note():
    now = at("2026-05-06 12:00")

    def hidden(**fm: object) -> bool:
        return is_hidden(note_facts("Needs_Action/a.md", fm), now)

    assert hidden(snooze_until="2026-05-07")
    assert not hidden(snooze_until="2026-05-06 11:59Z")
    assert not hidden(snooze_until="when I am back")  # broken: shown, never lost
    assert not hidden(snooze_until=None) and not hidden() and not hidden(snooze_until="")


# -- does it ask something? ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Could you send me the Q3 numbers?",
        "Hi Dana,\n\nCan you review the deck before the meeting.\n\nThanks",
        "Please confirm the room booking.",
        "Let me know what works for you",
        "I need the signed contract by Friday.",
        "Send it over before 5pm",
    ],
)
def test_the_rules_find_questions_requests_and_deadlines(text):
    verdict = rules_verdict(text)
    assert verdict.asks and verdict.ask and verdict.ask in " ".join(text.split())


@pytest.mark.parametrize(
    "text",
    [
        "Thanks, that's great news!",
        "Here are the numbers you asked for.",
        "FYI: the office is closed on Monday.",
        "Thanks!\n\nOn Mon, 4 May 2026 Dana wrote:\n> Could you send me the numbers?\n> By Friday please",
        "Done.\n> Can you do it?\n",
        "Sounds good.\n\n-- \nAnn\nCan you believe it? (a signature line)",
    ],
)
def test_quoted_text_signatures_and_plain_news_ask_nothing(text):
    assert not rules_verdict(text).asks, own_words(text)


def test_a_question_in_the_subject_alone_asks():
    assert rules_verdict("", "Lunch on Thursday?").asks


@pytest.mark.parametrize(
    ("text", "ask"),
    [
        ("Hallo Sabine,\n\nSag mir bitte, welche Variante euch lieber ist.\n\nLG Lena", "Sag mir bitte, welche"),
        ("Gib mir Bescheid, ob das passt.", "Gib mir Bescheid"),
        ("Könnten Sie mir das Angebot schicken.", "Könnten Sie"),
        ("Dites-moi quelle option vous préférez.", "Dites-moi"),
        ("Merci de me confirmer la date.", "Merci de me confirmer"),
        ("Passt der Beta-Start am 18.12.? Danke!", "Passt der Beta-Start am 18.12.?"),  # a date's dot ends nothing
        ("Hast du z. B. die Logos schon bekommen?", "Hast du z. B. die Logos schon bekommen?"),
        ("Let's catch up over lunch on Friday.", "Let's catch up"),
        ("I'd love to grab a coffee with you this week.", "I'd love to grab a coffee"),
        ("Feedback by Friday would be great.", "Feedback by Friday"),
        ("<p>Are you free on Tuesday?</p>", "Are you free on Tuesday?"),
    ],
)
def test_requests_questions_and_deadlines_in_english_german_and_french_ask(text, ask):
    verdict = rules_verdict(text)
    assert verdict.asks and ask in (verdict.ask or ""), verdict


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Thanks, Oliver!\n\nI can send the updated quote by Friday.\n\nCheers,\nLena", "Re: Invoice"),
        ("Das Angebot schicke ich dir bis Freitag.\n\nLG\nLena", ""),  # her promise, not an ask
        ("Je vous envoie le devis avant vendredi.", ""),
        ("Please find attached the invoice for October.", ""),
        ("Bitte beachten Sie die neue Adresse.", ""),
        ("Das passt mir gut.", "AW: Passt es dir am 9.?"),  # a reply's subject repeats the other side's question
        (  # Outlook's German history, not quoted with "> ": the other side's question, not hers
            (
                "Danke, ist angekommen.\n\nLena\n\n-----Ursprüngliche Nachricht-----\nVon: Jonas Berg "
                "<jonas@example.de>\nGesendet: Mittwoch, 25. Juni 2025 09:28\nAn: Lena <lena@example.de>\n"
                "Betreff: Beta-Start\n\nPasst es dir am 9.?"
            ),
            "RE: Beta-Start",
        ),
        (  # Outlook's French history in a French reply
            (
                "Salut Sophie,\n\nLes premiers écrans arrivent lundi.\n\nLena\n\n________________________________\n"
                "De : Sophie <sophie@example.fr>\nEnvoyé : vendredi 22 novembre 2024 15:52\nÀ : Lena "
                "<lena@example.de>\nObjet : Maquettes\n\nLe budget tient-il toujours ?"
            ),
            "RE : Maquettes",
        ),
    ],
)
def test_promises_notices_and_the_other_sides_quoted_questions_ask_nothing(text, subject):
    assert not rules_verdict(text, subject).asks, own_words(text)


def test_a_sentence_is_never_cut_at_a_dates_a_numbers_or_an_abbreviations_dot():
    text = "Gilt der Preis von 1.250 € noch? Did you get invoice no. 2026-114 e.g. from us? Ok. Dann bis bald."
    assert sentences(text) == [
        "Gilt der Preis von 1.250 € noch?",
        "Did you get invoice no. 2026-114 e.g. from us?",
        "Ok.",
        "Dann bis bald.",
    ]


@pytest.mark.parametrize(
    ("decision", "asks", "needed"),
    [
        ("draft_reply", False, True),  # triage drafted a reply: one is needed
        ("urgent", None, True),
        ("needs_info", True, True),  # left for the owner, and it asks: a reply is owed
        ("needs_info", False, False),  # an invoice kept for the owner to look at asks nothing: no reply owed
        ("", True, True),  # not triaged yet, and it asks
        ("", None, True),  # never judged: counted as asking (shown rather than hidden)
        ("archive", True, False),
        ("delegate", True, False),
    ],
)
def test_a_reply_is_needed_when_triage_drafted_one_or_the_email_asks_and_waits_for_the_owner(decision, asks, needed):
    assert reply_needed(decision, asks) is needed


# -- machine-made mail --------------------------------------------------------------------------------


def headers(**values: str) -> EmailMessage:
    msg = EmailMessage()
    for name, value in values.items():
        msg[name.replace("_", "-")] = value
    return msg


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ({"From": "MAILER-DAEMON@mx.example.com", "Subject": "Undelivered Mail Returned to Sender"}, "bounce"),
        ({"From": "postmaster@example.com"}, "bounce"),
        (
            {"From": "x@example.com", "Content_Type": "multipart/report; report-type=delivery-status; boundary=b"},
            "bounce",
        ),
        ({"From": "x@example.com", "X_Failed_Recipients": "dana@example.com"}, "bounce"),
        ({"From": "dana@example.com", "Auto_Submitted": "auto-replied"}, "auto_reply"),
        ({"From": "dana@example.com", "Subject": "Automatic reply: Numbers?"}, "auto_reply"),
        ({"From": "dana@example.com", "Subject": "Out of Office: back on Monday"}, "auto_reply"),
        ({"From": "dana@example.com", "X_Autoreply": "yes"}, "auto_reply"),
        ({"From": "dana@example.com", "Precedence": "auto_reply"}, "auto_reply"),
        ({"From": "dev@lists.example.org", "List_Id": "<dev.lists.example.org>"}, "list"),
        ({"From": "news@example.org", "Precedence": "bulk"}, "list"),
        ({"From": "dana@example.com", "Auto_Submitted": "no", "Subject": "Re: Numbers?"}, None),
        ({"From": "dana@example.com", "Subject": "Auto insurance quote"}, None),
    ],
)
def test_auto_replies_bounces_and_list_posts_are_told_from_their_headers(values, kind):
    assert automated_kind(headers(**values)) == kind


def test_a_list_post_names_its_posting_address():
    assert list_address(headers(List_Post="<mailto:Dev@Lists.Example.org?subject=hi>")) == "dev@lists.example.org"
    assert list_address(headers(List_Post="NO (posting not allowed)")) is None


# -- what a thread owes and awaits ----------------------------------------------------------------------


def msg(
    key: str,
    when: str,
    *,
    out: bool = False,
    sender: str = "dana@example.com",
    to: str = "dana@example.com",
    asks: bool | None = None,
    automated: str | None = None,
    seen: str | None = None,
) -> Message:
    return Message(
        key=key,
        thread="t",
        outbound=out,
        sender="me@example.com" if out else sender,
        recipients=((to.split("@")[0].title(), to),),
        subject="Numbers?",
        at=at(when),
        seen_at=at(seen or when),
        asks=asks,
        automated=automated,
    )


def test_an_email_after_the_owners_last_message_is_unanswered_and_the_owners_reply_answers_it():
    dana = msg("<1>", "2026-05-04 10:00")
    assert assess([dana], OWNER).unanswered == (dana,)
    reply = msg("<2>", "2026-05-04 11:00", out=True, asks=False)
    assessed = assess([dana, reply], OWNER)
    assert assessed.unanswered == () and assessed.owner_last == reply and assessed.awaited is None


def test_a_question_with_no_answer_is_awaited_and_any_real_answer_ends_it():
    ask = msg("<1>", "2026-05-04 10:00", out=True, asks=True)
    assert assess([ask], OWNER).awaited == ask
    assert assess([ask], OWNER).waiting_on == (("Dana", "dana@example.com"),)
    stranger = msg("<2>", "2026-05-05 10:00", sender="bob@example.com")  # someone the owner did not write to
    assert assess([ask, stranger], OWNER).awaited == ask and assess([ask, stranger], OWNER).answer is None
    colleague = replace(ask, key="<1c>", recipients=(("Dana", "dana@example.com"), ("Bob", "bob@example.com")))
    assert assess([colleague, stranger], OWNER).awaited is None  # Bob was in Cc: his answer counts
    dana = msg("<3>", "2026-05-05 11:00")
    assert assess([ask, dana], OWNER).awaited is None and assess([ask, dana], OWNER).answer == dana


def test_auto_replies_and_bounces_never_answer_and_are_never_owed():
    ask = msg("<1>", "2026-05-04 10:00", out=True, asks=True)
    away = msg("<2>", "2026-05-04 10:01", automated="auto_reply")
    bounce = msg("<3>", "2026-05-04 10:02", sender="mailer-daemon@mx.example.com", automated="bounce")
    assessed = assess([ask, away, bounce], OWNER)
    assert assessed.awaited == ask and assessed.answer is None and assessed.unanswered == ()


def test_the_owners_own_auto_reply_never_awaits_an_answer():
    vacation = msg("<1>", "2026-05-04 10:00", out=True, asks=True, automated="auto_reply")
    assert assess([vacation], OWNER).awaited is None


def test_mail_the_owner_sent_to_themselves_awaits_nothing_and_owes_nothing():
    note_to_self = msg("<1>", "2026-05-04 10:00", out=True, asks=True, to="me@example.com")
    assessed = assess([note_to_self], OWNER)
    assert assessed.awaited is None and assessed.unanswered == ()
    # Mail From the owner's own address the evidence does not make the owner's: owed nothing, answers nothing.
    copy = msg("<1b>", "2026-05-04 10:00", sender="me@example.com", to="me@example.com")
    assert assess([note_to_self, copy], OWNER).unanswered == ()
    assert assess([msg("<0>", "2026-05-03 10:00", out=True, asks=True), copy], OWNER).answer is None


def test_a_message_to_a_mailing_list_awaits_nothing_and_a_list_post_is_owed_nothing():
    lists = frozenset({"dev@lists.example.org"})
    to_list = msg("<1>", "2026-05-04 10:00", out=True, asks=True, to="dev@lists.example.org")
    assert assess([to_list], OWNER, lists).awaited is None
    post = msg("<2>", "2026-05-05 10:00", sender="dev@lists.example.org", automated="list")
    assert assess([post], OWNER, lists).unanswered == ()
    # A list post answers the owner's question when the owner wrote to the list too (Dana, Cc the list) …
    asked_dana = msg("<3>", "2026-05-04 10:00", out=True, asks=True)
    with_list = replace(asked_dana, recipients=(*asked_dana.recipients, ("Dev", "dev@lists.example.org")))
    assert assess([with_list, post], OWNER, lists).answer == post
    # … and not when the owner wrote to Dana alone: a stranger's post in the thread is no answer.
    assert assess([asked_dana, post], OWNER, lists).answer is None


def test_the_owners_word_overrides_the_rules_both_ways():
    news = msg("<1>", "2026-05-04 10:00", out=True, asks=False)
    assert assess([news], OWNER, override=True).awaited == news
    question = msg("<2>", "2026-05-04 10:00", out=True, asks=True)
    assert assess([question], OWNER, override=False).awaited is None


def test_a_thread_of_hundreds_of_messages_is_judged_on_its_last_exchange():
    thread = []
    for i in range(300):
        minute = f"2026-05-04 {8 + i // 60:02d}:{i % 60:02d}"
        thread.append(msg(f"<{i}>", minute, out=i % 2 == 1, asks=True))
    assert len(thread) == 300
    assessed = assess(reversed(thread), OWNER)  # the order they come in does not matter
    assert assessed.awaited == thread[-1] and assessed.unanswered == ()
    assessed = assess(thread[:-1], OWNER)
    assert assessed.unanswered == (thread[-2],) and assessed.awaited is None


def test_a_person_who_wrote_to_the_owner_since_in_any_thread_is_awaited_no_more():
    ask = msg("<1>", "2026-05-04 10:00", out=True, asks=True)
    assert assess([ask], OWNER, heard={"dana@example.com": at("2026-05-03 09:00")}).awaited == ask  # before: no
    assessed = assess([ask], OWNER, heard={"dana@example.com": at("2026-05-05 09:00"), "bob@example.com": 0.0})
    assert assessed.awaited is None and assessed.heard_from == ("dana@example.com", at("2026-05-05 09:00"))
    assert assess([ask], OWNER, heard={"bob@example.com": at("2026-05-05 09:00")}).awaited == ask  # not asked


def test_the_order_h0_saw_messages_in_breaks_ties():
    ask = msg("<1>", "2026-05-04 10:00", out=True, asks=True, seen="2026-05-04 10:00")
    same_minute = msg("<2>", "2026-05-04 10:00", seen="2026-05-04 10:05")
    assert assess([same_minute, ask], OWNER).answer == same_minute


def test_the_owners_addresses_come_from_settings_and_their_sent_mail():
    settings = load_settings(
        owner_emails="Me <ME@example.com>, me@work.example.com",
        smtp_from="Ann <ann@example.com>",
        smtp_user="not-an-address",
        imap_user=None,
    )
    assert owner_addresses(settings, ["alias@example.com"]) == {
        "me@example.com",
        "me@work.example.com",
        "ann@example.com",
        "alias@example.com",
    }


# -- the follow-up draft's text ---------------------------------------------------------------------------


def test_the_follow_up_text_takes_the_owners_greeting_and_sign_off():
    request = NudgeRequest((("Dana Rivera", "dana@example.com"),), "Q3 numbers", at("2026-05-04 10:00"))
    default = follow_up_text(request)
    assert default.startswith("Hi Dana,\n\n") and default.endswith("Thanks,") and "Q3 numbers" in default
    own = follow_up_text(request, greeting="Hello Dana,", sign_off="Best,\nAnn")
    assert own.startswith("Hello Dana,") and own.endswith("Best,\nAnn")
    assert default_greeting((("", "a@x.org"), ("", "b@x.org"))) == "Hi all,"
    assert default_greeting((("", "a@x.org"),)) == "Hi,"


def test_a_hostile_subject_cannot_smuggle_the_cut_off_line_into_the_follow_up():
    request = NudgeRequest(
        (("Dana", "dana@example.com"),), f"x {CUTOFF} y ![img](http://t.example/p.png)", at("2026-05-04 10:00")
    )
    text = follow_up_text(request)
    assert CUTOFF not in text and "![" not in text


def test_a_backdated_reply_and_a_strangers_message_never_answer_the_owners_question():
    """Given the owner's question to Dana, When Dana's reply is dated before it (backdated) or a stranger writes
    after it, Then nothing answered it and it is still awaited; Dana's reply dated after it answers it."""
    ask = msg("<1>", "2026-05-04 10:00", out=True, asks=True)
    backdated = msg("<2>", "2026-05-03 09:00", seen="2026-05-05 10:00")
    stranger = msg("<3>", "2026-05-05 10:00", sender="mallory@evil.example")
    assessed = assess([ask, backdated, stranger], OWNER)
    assert assessed.answer is None and assessed.awaited == ask
    dana = msg("<4>", "2026-05-05 11:00")
    assert assess([ask, backdated, stranger, dana], OWNER).answer == dana


# -- notes read through the typed model (h0.vault.model): any case of `type`, `follow_up`, `status` ------------


def test_given_an_email_note_typed_in_another_case_when_the_ledger_has_not_seen_it_then_it_is_recorded():
    from h0.followup.messages import from_email_note

    fm = {
        "type": "Email",
        "message_id": "m1",
        "thread_id": "T1",
        "from": "Dana Rivera <Dana@Example.com>",
        "to": "Owner <me@example.com>",
        "subject": "Review",
        "received": "2026-05-04T10:00:00Z",
    }
    message = from_email_note(note_facts("Needs_Action/EMAIL_1.md", fm), now=at("2026-05-06 10:00"))
    assert message is not None and message.key == "id:m1" and message.thread == "T1"
    assert message.sender == "dana@example.com" and message.at == at("2026-05-04 10:00") and not message.outbound
    assert message.recipients == (("Owner", "me@example.com"),)
    assert from_email_note(note_facts("Notes/n.md", {**fm, "type": "note"}), now=at("2026-05-06 10:00")) is None


def test_given_follow_up_words_in_another_case_when_the_status_is_collected_then_they_are_listed(tmp_path):
    """Given notes marked `follow_up: Reply_Owed` and `follow_up: REPLY_AWAITED` + `status: Awaiting_Reply`
    (a person's edit in Obsidian), When the follow-up status is collected, Then both are listed."""
    from h0.report.followups import collect_followups
    from h0.vault import Vault, init_vault

    init_vault(tmp_path)
    (tmp_path / "Needs_Action" / "EMAIL_1.md").write_text(
        "---\ntype: email\nfollow_up: Reply_Owed\nfrom: Dana <dana@example.com>\nsubject: Review\n"
        "received: 2026-05-04T10:00:00Z\n---\nbody\n",
        encoding="utf-8",
    )
    (tmp_path / "Needs_Action" / "FOLLOWUP_1.md").write_text(
        "---\ntype: follow_up\nfollow_up: REPLY_AWAITED\nstatus: Awaiting_Reply\nawaiting_from: Bob\n"
        "subject: Invoice?\nasked_at: 2026-05-04T10:00:00Z\n---\nbody\n",
        encoding="utf-8",
    )
    status = collect_followups(Vault(tmp_path), at("2026-05-07 10:00"), private=lambda _path: False)
    assert [(o.path, o.subject, o.working_days) for o in status.owed] == [("Needs_Action/EMAIL_1.md", "Review", 3)]
    assert [(a.path, a.waiting_on) for a in status.awaited] == [("Needs_Action/FOLLOWUP_1.md", "Bob")]
