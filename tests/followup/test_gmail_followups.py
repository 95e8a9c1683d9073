"""Replies owed and replies awaited (issue 25) with the real handlers and the real MailService against
the fake Gmail (google-api-python-client, the real wire format). The clock is the tests': the
follow-up pass is given `now`, days pass in a line, nothing sleeps."""

from __future__ import annotations

import os
from pathlib import Path

from h0.followup.ledger import FollowupLedger
from h0.followup.workdays import add_working_days
from h0.handlers.send import send_approved_draft
from tests.followup.conftest import DANA, DAY, OWNER, fm, follow, ingest, names, synced, triage


def received(vault_dir: Path, rel: str) -> float:
    from h0.followup.messages import epoch

    return epoch(fm(vault_dir, rel)["received"])


def owners_question(gmail, **extra) -> str:
    """The owner asks Dana something from their phone: the message is in Gmail's sent mail only."""
    return gmail.add_message(
        sender=f"Owner <{OWNER}>",
        to=DANA,
        subject="Q3 numbers?",
        labels=("SENT",),
        body="Hi Dana,\n\nCould you send me the Q3 numbers by Friday?\n\nThanks",
        **extra,
    )


# -- replies owed ---------------------------------------------------------------------------------------


def test_given_an_email_with_a_draft_waiting_when_two_working_days_pass_then_a_reply_is_owed(
    ctx, gmail, vault_dir, clock
):
    """Given Dana's question, triaged into a draft nobody approved, When the clock passes FOLLOW_UP_DAYS working
    days after it arrived, Then the email note says `follow_up: reply_owed` (with reply_owed_since), once —
    and the passes asked Gmail for nothing."""
    synced(ctx, gmail)
    gmail.add_message(sender=DANA, subject="Friday review?", body="Could we move the review to Friday?")
    (path,) = ingest(ctx).written
    assert triage(ctx, path) == "draft_reply"
    due = add_working_days(received(vault_dir, path), 2)
    gmail.reset_quota()

    assert follow(ctx, clock.now).owed == []
    assert follow(ctx, due - 60).owed == []
    report = follow(ctx, due + 60)
    assert report.owed == [path]
    note = fm(vault_dir, path)
    assert note["follow_up"] == "reply_owed" and note["reply_owed_since"].startswith(note["received"][:16])
    assert follow(ctx, due + 120).owed == []  # said once
    assert gmail.quota == []  # the passes cost Gmail nothing

    assert gmail.quota == []


def test_given_an_email_note_whose_type_and_status_the_owner_retyped_then_a_reply_is_still_owed(
    ctx, gmail, vault_dir, clock
):
    """The pass reads the note through the typed model: `type: Email` and `status: Awaiting_Approval` (a
    person's edit in Obsidian) are the email and the waiting draft they were."""
    synced(ctx, gmail)
    gmail.add_message(sender=DANA, subject="Friday review?", body="Could we move the review to Friday?")
    (path,) = ingest(ctx).written
    assert triage(ctx, path) == "draft_reply"
    note = vault_dir / path
    text = (
        note.read_text()
        .replace("type: email", "type: Email")
        .replace("status: awaiting_approval", "status: Awaiting_Approval")
    )
    assert "type: Email" in text and "status: Awaiting_Approval" in text
    note.write_text(text)
    due = add_working_days(received(vault_dir, path), 2)
    assert follow(ctx, due + 60).owed == [path]
    assert fm(vault_dir, path)["follow_up"] == "reply_owed"


def test_given_a_reply_owed_when_the_owner_answers_from_another_mail_client_then_it_is_cleared(
    ctx, gmail, vault_dir, clock
):
    """Given a reply owed to Dana, When the owner answers from their phone (Gmail's sent mail, same thread),
    Then the next sync reads it with the new mail (one history call, one read, no search), and the pass
    files the email in Done/ (`follow_up: replied`) and marks H0's waiting draft stale — so it is held,
    not sent, if approved."""
    synced(ctx, gmail)
    first = gmail.add_message(sender=DANA, subject="Friday review?", body="Could we move the review to Friday?")
    (path,) = ingest(ctx).written
    triage(ctx, path)
    draft = fm(vault_dir, path)["draft"]
    due = add_working_days(received(vault_dir, path), 2)
    assert follow(ctx, due + 60).owed == [path]

    gmail.add_message(
        sender=f"Owner <{OWNER}>",
        to=DANA,
        subject="Re: Friday review?",
        labels=("SENT",),
        thread_id=first,
        body="Friday works, see you then.",
    )
    gmail.reset_quota()
    report = ingest(ctx)
    assert report.sent == 1 and report.written == []
    assert sorted(name for name, _ in gmail.quota) == ["history.list", "messages.get"]
    report = follow(ctx, due + 120)
    assert report.replied == [f"Done/{Path(path).name}"] and gmail.quota[-1][0] == "messages.get"
    done = fm(vault_dir, f"Done/{Path(path).name}")
    assert done["status"] == "done" and done["follow_up"] == "replied" and done["replied_at"]
    stale = fm(vault_dir, draft)
    assert stale["stale"] is True and "another mail client" in stale["stale_reason"]


def test_the_sync_reads_sent_mail_without_a_call_of_its_own(ctx, gmail, vault_dir):
    """An idle poll stays one history call (2 units) with sent mail followed; the owner's sent message rides in
    the same history call and the same batch as the new mail (5 units each to read, no search, no profile)."""
    synced(ctx, gmail)
    gmail.reset_quota()
    for _ in range(3):
        ingest(ctx)
    assert gmail.quota == [("history.list", 2)] * 3
    gmail.reset_quota()
    gmail.add_message(sender=DANA, subject="Hello", body="Hi")
    owners_question(gmail)
    report = ingest(ctx)
    assert len(report.written) == 1 and report.sent == 1
    assert sorted(gmail.quota) == [
        ("history.list", 2),
        ("messages.get", 5),
        ("messages.get", 5),
        ("messages.modify", 5),
    ]
    assert gmail.batches[0] == 2  # both messages read in one batch request (then one to label the new one)


# -- replies awaited ------------------------------------------------------------------------------------


def test_given_the_owners_question_from_another_client_when_no_answer_comes_then_a_follow_up_is_drafted(
    ctx, gmail, vault_dir, clock
):
    """Given the owner asked Dana something from their phone, When FOLLOW_UP_DAYS pass without an answer,
    Then Needs_Action/ holds "No answer from Dana Rivera since …" linked to the thread, with a short
    follow-up draft in Drafts/ (to Dana, Re: the subject, replying in the thread, waiting for approval);
    approved, it is sent in the thread, and the note is filed."""
    synced(ctx, gmail)
    sent_id = owners_question(gmail)
    assert ingest(ctx).sent == 1
    due = add_working_days(gmail.message(sent_id).internal_date_ms / 1000, 2)
    gmail.reset_quota()
    assert follow(ctx, clock.now).awaited == []
    report = follow(ctx, due + 60)
    note_path, draft_path = f"Needs_Action/FOLLOWUP_{sent_id}.md", f"Drafts/REPLY_FOLLOWUP_{sent_id}.md"
    assert report.awaited == [note_path] and gmail.quota == []
    note = fm(vault_dir, note_path)
    assert note["type"] == "follow_up" and note["status"] == "awaiting_reply" and note["follow_up"] == "reply_awaited"
    assert note["thread_id"] == sent_id and note["awaiting_from"] == [DANA] and note["draft"] == draft_path
    body = (vault_dir / note_path).read_text()
    assert "No answer from Dana Rivera since" in body and "Could you send me the Q3 numbers by Friday?" in body
    draft = fm(vault_dir, draft_path)
    assert draft["to"] == "dana@example.com" and draft["subject"] == "Re: Q3 numbers?"
    assert draft["status"] == "pending_approval" and draft["reply_to_message_id"] == sent_id
    assert draft["source"] == note_path and draft["thread_id"] == sent_id
    assert (vault_dir / draft_path).read_text().split("---\n", 2)[2].startswith("Hi Dana,")

    # Approved as drafted: sent in the thread; the note is filed with it.
    os.rename(vault_dir / draft_path, vault_dir / "Approved" / Path(draft_path).name)
    outcome = send_approved_draft(f"Approved/{Path(draft_path).name}", ctx)
    assert outcome.action == "sent", outcome
    (sent,) = gmail.sent
    assert sent.thread_id == sent_id and sent.header("In-Reply-To") == gmail.message(sent_id).header("Message-ID")
    assert names(vault_dir, "Done", "FOLLOWUP_") == [f"FOLLOWUP_{sent_id}.md"]
    assert not (vault_dir / note_path).exists()


def test_given_a_follow_up_drafted_when_the_answer_lands_before_approval_then_it_is_withdrawn_and_never_sent(
    ctx, gmail, vault_dir, clock
):
    """Given the follow-up note and its draft, When Dana answers before the owner approved it, Then the note
    is filed in Done/ (answered, linked to her email) and the draft leaves Drafts/ as `status: withdrawn`
    with the reason; the owner moving it into Approved/ afterwards gets it back with that reason, nothing sent."""
    synced(ctx, gmail)
    sent_id = owners_question(gmail)
    ingest(ctx)
    due = add_working_days(clock.now, 2)
    follow(ctx, due + 60)
    draft_name = f"REPLY_FOLLOWUP_{sent_id}.md"
    assert (vault_dir / "Drafts" / draft_name).exists()

    gmail.add_message(sender=DANA, subject="Re: Q3 numbers?", body="Attached. Sorry for the delay!", thread_id=sent_id)
    (answer,) = ingest(ctx).written
    report = follow(ctx, due + 120)
    assert report.answered == [f"Done/FOLLOWUP_{sent_id}.md"] and report.withdrawn == [f"Done/{draft_name}"]
    note = fm(vault_dir, f"Done/FOLLOWUP_{sent_id}.md")
    assert note["status"] == "done" and note["follow_up"] == "answered"
    assert note["answered_by"] == f"[[{Path(answer).stem}]]"
    withdrawn = fm(vault_dir, f"Done/{draft_name}")
    assert withdrawn["status"] == "withdrawn" and withdrawn["withdrawn_reason"].startswith("Dana Rivera answered on")
    assert not (vault_dir / "Drafts" / draft_name).exists()

    os.rename(vault_dir / "Done" / draft_name, vault_dir / "Approved" / draft_name)
    outcome = send_approved_draft(f"Approved/{draft_name}", ctx)
    assert outcome.action != "sent" and gmail.sent == []
    back = fm(vault_dir, f"Drafts/{draft_name}")
    assert back["status"] == "withdrawn" and back["h0_error_code"] == "status_not_sendable"
    assert "withdrew" in back["h0_error"] and "answered" in back["h0_error"]


def test_given_a_follow_up_drafted_when_dana_writes_in_another_thread_then_it_is_withdrawn(
    ctx, gmail, vault_dir, clock
):
    """Given the follow-up note and its draft, When Dana writes to the owner about something else (a new thread),
    Then the owner has heard from her: the note is filed (`heard_from`) and the draft withdrawn — a nudge about the
    old question would cross her new message. Her out-of-office answer would not have done it."""
    synced(ctx, gmail)
    sent_id = owners_question(gmail)
    ingest(ctx)
    due = add_working_days(clock.now, 2)
    follow(ctx, due + 60)
    draft_name = f"REPLY_FOLLOWUP_{sent_id}.md"
    assert (vault_dir / "Drafts" / draft_name).exists()

    gmail.add_message(
        sender=DANA, subject="Out of office", body="I'm away.", extra_headers=[("Auto-Submitted", "auto-replied")]
    )
    ingest(ctx)
    assert follow(ctx, due + 90).withdrawn == []  # a robot answering for her is not her

    gmail.add_message(sender=DANA, subject="Offsite in May", body="FYI, the offsite moved to May.")
    ingest(ctx)
    report = follow(ctx, due + 120)
    assert report.answered == [f"Done/FOLLOWUP_{sent_id}.md"] and report.withdrawn == [f"Done/{draft_name}"]
    assert fm(vault_dir, f"Done/FOLLOWUP_{sent_id}.md")["follow_up"] == "heard_from"
    assert "Dana Rivera wrote to you on" in fm(vault_dir, f"Done/{draft_name}")["withdrawn_reason"]


def test_given_the_owners_question_when_dana_writes_in_another_thread_before_the_deadline_then_no_follow_up(
    ctx, gmail, vault_dir, clock
):
    synced(ctx, gmail)
    owners_question(gmail)
    ingest(ctx)
    gmail.add_message(sender=DANA, subject="Offsite in May", body="FYI, the offsite moved to May.")
    ingest(ctx)
    assert follow(ctx, add_working_days(clock.now, 2) + 60).awaited == []


def test_given_a_follow_up_note_whose_status_the_owner_retyped_when_the_answer_lands_then_it_is_filed(
    ctx, gmail, vault_dir, clock
):
    """`status: Awaiting_Reply` (edited in Obsidian) is the follow-up's open status still (h0.vault.model)."""
    synced(ctx, gmail)
    sent_id = owners_question(gmail)
    ingest(ctx)
    due = add_working_days(clock.now, 2)
    follow(ctx, due + 60)
    note = vault_dir / f"Needs_Action/FOLLOWUP_{sent_id}.md"
    note.write_text(note.read_text().replace("status: awaiting_reply", "status: Awaiting_Reply"))
    gmail.add_message(sender=DANA, subject="Re: Q3 numbers?", body="Attached.", thread_id=sent_id)
    ingest(ctx)
    report = follow(ctx, due + 120)
    assert report.answered == [f"Done/FOLLOWUP_{sent_id}.md"] and not note.exists()
    assert fm(vault_dir, f"Done/FOLLOWUP_{sent_id}.md")["follow_up"] == "answered"


def test_the_owners_awaiting_word_overrides_the_rules_both_ways(ctx, gmail, vault_dir, clock):
    """`awaiting: false` on a follow-up note files it and withdraws its draft; `awaiting: true` on a note of a
    thread whose message asked nothing (by the rules) makes H0 wait for an answer there too."""
    synced(ctx, gmail)
    sent_id = owners_question(gmail)
    news = gmail.add_message(
        sender=f"Owner <{OWNER}>", to=DANA, subject="The deck", labels=("SENT",), body="Here is the deck from today."
    )
    ingest(ctx)
    due = add_working_days(clock.now, 2)
    assert follow(ctx, due + 60).awaited == [f"Needs_Action/FOLLOWUP_{sent_id}.md"]  # the deck asked nothing

    note = f"Needs_Action/FOLLOWUP_{sent_id}.md"
    text = (vault_dir / note).read_text().replace("status: awaiting_reply", "status: awaiting_reply\nawaiting: false")
    (vault_dir / note).write_text(text)
    report = follow(ctx, due + 120)
    assert report.answered == [f"Done/FOLLOWUP_{sent_id}.md"] and report.withdrawn == [
        f"Done/REPLY_FOLLOWUP_{sent_id}.md"
    ]
    assert fm(vault_dir, f"Done/FOLLOWUP_{sent_id}.md")["follow_up"] == "dismissed"
    assert (
        "You marked this thread `awaiting: false`"
        in fm(vault_dir, f"Done/REPLY_FOLLOWUP_{sent_id}.md")["withdrawn_reason"]
    )

    # The owner keeps a note of the deck thread saying it awaits an answer after all.
    # (Any case of the word: the typed model reads it, h0.vault.model.awaiting, and the listing of Done/ finds it.)
    (vault_dir / "Done" / "deck.md").write_text(f"---\nthread_id: '{news}'\nawaiting: 'Yes'\n---\nSent the deck.\n")
    assert follow(ctx, due + 180).awaited == [f"Needs_Action/FOLLOWUP_{news}.md"]
    assert len(FollowupLedger(ctx.state_db).work(due + 180)) == 0


def test_an_auto_reply_and_a_bounce_are_no_answer_and_owe_nothing(ctx, gmail, vault_dir, clock):
    """Given the owner's question, When an out-of-office answer and a bounce arrive in the thread, Then the
    follow-up is still drafted when the time comes, and neither gets `reply_owed`, whatever triage said."""
    synced(ctx, gmail)
    sent_id = owners_question(gmail)
    gmail.add_message(
        sender=DANA,
        subject="Automatic reply: Q3 numbers?",
        thread_id=sent_id,
        body="I am out of the office until Monday. Can you write to Sam?",
        extra_headers=[("Auto-Submitted", "auto-replied")],
    )
    gmail.add_message(
        sender="Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        subject="Delivery delayed",
        thread_id=sent_id,
        body="Delivery to dana@example.com has been delayed. Could not connect?",
    )
    written = ingest(ctx).written
    assert len(written) == 2
    for path in written:
        triage(ctx, path)
    due = add_working_days(clock.now, 2)
    report = follow(ctx, due + 5 * DAY)
    assert report.awaited == [f"Needs_Action/FOLLOWUP_{sent_id}.md"] and report.owed == []
    assert all("follow_up" not in fm(vault_dir, p) for p in written if (vault_dir / p).exists())


def test_mail_the_owner_sent_to_themselves_gets_no_follow_up_and_is_owed_nothing(ctx, gmail, vault_dir, clock):
    synced(ctx, gmail)
    gmail.add_message(
        sender=f"Owner <{OWNER}>",
        to=f"Owner <{OWNER}>",
        subject="Remember: call the bank?",
        labels=("SENT", "INBOX", "UNREAD"),
        body="Can you call the bank tomorrow?",
    )
    report = ingest(ctx)
    assert report.sent == 1 and len(report.written) == 1  # in the inbox too: a note, like any new mail
    triage(ctx, report.written[0])
    follow_report = follow(ctx, add_working_days(clock.now, 2) + 5 * DAY)
    assert follow_report.awaited == [] and follow_report.owed == []
    assert names(vault_dir, "Drafts", "REPLY_FOLLOWUP") == []


def test_a_mailing_list_owes_nothing_and_a_question_to_it_awaits_nothing(ctx, gmail, vault_dir, clock):
    synced(ctx, gmail)
    post = gmail.add_message(
        sender="Bob <bob@example.org>",
        to="dev@lists.example.org",
        subject="Release plan?",
        body="Should we ship on Friday?",
        extra_headers=[("List-Id", "<dev.lists.example.org>"), ("List-Post", "<mailto:dev@lists.example.org>")],
    )
    (path,) = ingest(ctx).written
    triage(ctx, path)
    gmail.add_message(
        sender=f"Owner <{OWNER}>",
        to="dev@lists.example.org",
        subject="Re: Release plan?",
        labels=("SENT",),
        thread_id=post,
        body="Could we wait until Monday?",
    )
    ingest(ctx)
    report = follow(ctx, add_working_days(clock.now, 2) + 5 * DAY)
    assert report.awaited == [] and report.owed == []


def test_dates_in_the_future_count_from_when_h0_saw_the_mail(ctx, gmail, vault_dir, clock):
    """A message dated a month ahead (a wrong clock, a forged Date) is due FOLLOW_UP_DAYS after H0 saw it,
    not a month later."""
    synced(ctx, gmail)
    later_ms = int((clock.now + 30 * DAY) * 1000)
    sent_id = owners_question(gmail, date_ms=later_ms)
    ingest(ctx)
    report = follow(ctx, add_working_days(clock.now, 2) + 3600)
    assert report.awaited == [f"Needs_Action/FOLLOWUP_{sent_id}.md"]


def test_an_llm_judges_what_asks_something_and_its_failure_falls_back_to_the_rules(vault_dir, gmail, token_path, clock):
    """With LLM_PROVIDER set, the model decides whether the owner's message waits for an answer (the rules
    would say no to "The report is attached."); when the model fails, the rules decide."""
    from h0.mail import MailService
    from tests.followup.conftest import context
    from tests.mail.conftest import gmail_settings_for
    from tests.triage.fake_llm import FakeLLM, error_reply, openai_answer

    with FakeLLM() as llm:
        settings = gmail_settings_for(
            vault_dir,
            gmail,
            token_path,
            llm_provider="openai",
            llm_model="fake-model",
            llm_api_key="sk-test",
            llm_base_url=f"{llm.url}/v1",
        )
        service = MailService(settings, trusted_caller=True)
        try:
            ctx = context(vault_dir, service)
            synced(ctx, gmail)
            llm.queue(
                openai_answer('{"asks": true, "ask": "Tell me what you think of the figures."}'),
                error_reply(500, "down"),
                openai_answer("Just checking in on the report: any thoughts?"),
            )
            report_id = gmail.add_message(
                sender=f"Owner <{OWNER}>",
                to=DANA,
                subject="Report",
                labels=("SENT",),
                body="The report is attached. Tell me what you think of the figures.",
            )
            plain_id = gmail.add_message(
                sender=f"Owner <{OWNER}>", to=DANA, subject="Plain", labels=("SENT",), body="Could you call me?"
            )
            ingest(ctx)
            assert "The report is attached" in llm.requests[0].last_text
            report = follow(ctx, add_working_days(clock.now, 2) + 3600)
            assert sorted(report.awaited) == sorted(
                [f"Needs_Action/FOLLOWUP_{report_id}.md", f"Needs_Action/FOLLOWUP_{plain_id}.md"]
            )
            drafts = [(vault_dir / "Drafts" / f"REPLY_FOLLOWUP_{i}.md").read_text() for i in (report_id, plain_id)]
            assert any("any thoughts?" in d for d in drafts)  # the model wrote one follow-up's middle
            assert all(d.split("---\n", 2)[2].startswith("Hi Dana,") for d in drafts)
        finally:
            service.close()


def test_a_thread_of_hundreds_of_messages_is_followed_as_one_conversation(ctx, gmail, vault_dir, clock):
    """300 messages in one Gmail thread, alternating between Dana (inbox) and the owner (sent mail), the last
    the owner's question: one thread in the ledger, one follow-up, and each email note links at most 20
    earlier notes."""
    synced(ctx, gmail)
    root = gmail.add_message(sender=DANA, subject="Plan", body="Point 0.")
    last = root
    for i in range(1, 300):
        if i % 2:
            last = gmail.add_message(
                sender=f"Owner <{OWNER}>",
                to=DANA,
                subject="Re: Plan",
                labels=("SENT",),
                thread_id=root,
                body="Could you check this?",
            )
        else:
            gmail.add_message(sender=DANA, subject="Re: Plan", thread_id=root, body=f"Point {i}.")
    written = sent = 0
    for _ in range(20):
        report = ingest(ctx)
        written, sent = written + len(report.written), sent + report.sent
        if not report.written and not report.sent:
            break
    assert (written, sent) == (150, 150)
    ledger = FollowupLedger(ctx.state_db)
    assert ledger.stats()["messages"] == 301  # 150 received, 150 sent, and the newsletter from before
    assert len(ledger.messages([root])[root]) == 300
    report = follow(ctx, add_working_days(clock.now, 2) + DAY)
    assert report.awaited == [f"Needs_Action/FOLLOWUP_{last}.md"]
    assert (
        max(
            len(fm(vault_dir, f"Needs_Action/{p.name}").get("thread") or [])
            for p in (vault_dir / "Needs_Action").glob("EMAIL_*.md")
        )
        == 20
    )
    assert follow(ctx, add_working_days(clock.now, 2) + 2 * DAY).awaited == []


def test_a_follow_up_opens_and_closes_as_the_owner_writes_to_that_person(ctx, gmail, vault_dir, clock):
    """The follow-up draft is in the owner's voice: the greeting and sign-off of the owner's own sent mail to
    Dana (read from the sync H0 already makes, no call of its own), not H0's defaults."""
    synced(ctx, gmail)
    sent_id = gmail.add_message(
        sender=f"Owner <{OWNER}>",
        to=DANA,
        subject="Q3 numbers?",
        labels=("SENT",),
        body="Hey Dana!\n\nCould you send me the Q3 numbers by Friday?\n\nCheers,\nSam",
    )
    assert ingest(ctx).sent == 1
    due = add_working_days(gmail.message(sent_id).internal_date_ms / 1000, 2)
    gmail.reset_quota()
    follow(ctx, due + 60)
    body = (vault_dir / f"Drafts/REPLY_FOLLOWUP_{sent_id}.md").read_text().split("---\n", 2)[2]
    text = body.split("%% h0: not sent below %%")[0].strip()
    assert text.startswith("Hey Dana!") and text.endswith("Cheers,\nSam"), text
    assert gmail.quota == []  # the voice came from what the sync had already brought
