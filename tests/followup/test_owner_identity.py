"""The owner's identity (issue 29, rule 2) in the follow-ups, with the real handlers against the fake Gmail:
only the provider's sent mail (and H0's own sends) is the owner's. A stranger's message From the owner's
address, a message with several From addresses, a stranger writing into the thread and a backdated reply
neither close nor open a follow-up, nor hold a draft as "you already replied". And (issue 30) what is owed
does not depend on whether triage or the follow-up pass ran first."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.drafting import Drafting
from h0.followup.workdays import add_working_days
from h0.mail.owner import Evidence, OwnerAuthority
from h0.state import StateDB
from tests.followup.conftest import DANA, OWNER, fm, follow, ingest, synced, triage

STRANGER = "Mallory <mallory@evil.example>"


def authority(ctx) -> OwnerAuthority:
    return OwnerAuthority(StateDB.for_vault(ctx.paths.root, ctx.settings.h0_state_dir))


def rfc(gmail, message_id: str) -> str:
    return str(gmail.message(message_id).header("Message-ID"))


def owners_question(gmail) -> str:
    return gmail.add_message(
        sender=f"Owner <{OWNER}>",
        to=DANA,
        subject="Q3 numbers?",
        labels=("SENT",),
        body="Hi Dana,\n\nCould you send me the Q3 numbers by Friday?\n\nThanks",
    )


def test_a_forged_from_a_stranger_and_a_backdated_reply_never_close_a_follow_up_dana_does(ctx, gmail, vault_dir, clock):
    """Given the owner's question to Dana (Gmail's SENT label: recorded as the owner's) and its follow-up note,
    When a message From the owner's own address arrives in the inbox (no SENT label), a stranger writes into
    the thread, and Dana's reply arrives dated before the question, Then the follow-up stays open and none of
    them is the owner's; When Dana really answers, Then it is closed."""
    synced(ctx, gmail)
    asked = owners_question(gmail)
    assert ingest(ctx).sent == 1
    assert authority(ctx).wrote(rfc(gmail, asked)) == Evidence.SENT_LABEL
    due = add_working_days(gmail.message(asked).internal_date_ms / 1000, 2)
    note = f"Needs_Action/FOLLOWUP_{asked}.md"
    assert follow(ctx, due + 60).awaited == [note]

    asked_ms = gmail.message(asked).internal_date_ms
    forged = gmail.add_message(
        sender=f"Owner <{OWNER}>", to=DANA, subject="Re: Q3 numbers?", body="Never mind, all sorted!", thread_id=asked
    )
    gmail.add_message(sender=STRANGER, subject="Re: Q3 numbers?", body="Here they are (not really).", thread_id=asked)
    gmail.add_message(
        sender=DANA, subject="Re: Q3 numbers?", body="Old news.", thread_id=asked, date_ms=asked_ms - 86_400_000
    )
    assert len(ingest(ctx).written) == 3
    assert authority(ctx).wrote(rfc(gmail, forged)) is None
    report = follow(ctx, due + 120)
    assert report.answered == [] and report.withdrawn == []
    assert fm(vault_dir, note)["status"] == "awaiting_reply"

    gmail.add_message(sender=DANA, subject="Re: Q3 numbers?", body="Attached.", thread_id=asked)
    ingest(ctx)
    assert follow(ctx, due + 180).answered == [f"Done/FOLLOWUP_{asked}.md"]


def test_a_forged_from_of_the_owner_neither_clears_a_reply_owed_nor_says_you_already_replied(
    ctx, gmail, vault_dir, clock
):
    """Given Dana's email with H0's draft waiting and a reply owed, When a stranger sends a message From the
    owner's address into the thread, Then the email stays owed in Needs_Action/ and the draft is never marked
    "you already replied" (it may be marked stale as any new message in the thread makes it)."""
    synced(ctx, gmail)
    first = gmail.add_message(sender=DANA, subject="Friday review?", body="Could we move the review to Friday?")
    (path,) = ingest(ctx).written
    assert triage(ctx, path) == "draft_reply"
    draft = fm(vault_dir, path)["draft"]
    from h0.vault.dates import stamp_epoch as epoch

    due = add_working_days(epoch(fm(vault_dir, path)["received"]) or 0, 2)
    assert follow(ctx, due + 60).owed == [path]

    gmail.add_message(
        sender=f"Owner <{OWNER}>", to=DANA, subject="Re: Friday review?", body="Done, thanks.", thread_id=first
    )
    ingest(ctx)
    report = follow(ctx, due + 120)
    assert report.replied == [] and (vault_dir / path).exists()
    assert "already replied" not in str(fm(vault_dir, draft).get("stale_reason") or "")
    assert fm(vault_dir, path)["follow_up"] == "reply_owed"


def test_sent_mail_with_several_from_addresses_is_never_the_owners(ctx, gmail, vault_dir, clock):
    """Given a SENT message whose From names the owner and someone else, Then the owner's identity does not
    record it, no follow-up is awaited on it, and its words are not learned as the owner's voice."""
    synced(ctx, gmail)
    odd = gmail.add_message(
        sender=f"Owner <{OWNER}>, Eve <eve@evil.example>",
        to=DANA,
        subject="Wire details?",
        labels=("SENT",),
        body="Yo Dana,\n\nCan you send the wire details?\n\nPeace out",
    )
    ingest(ctx)
    assert authority(ctx).wrote(rfc(gmail, odd)) is None
    due = add_working_days(gmail.message(odd).internal_date_ms / 1000, 2)
    assert follow(ctx, due + 60).awaited == []
    drafting = Drafting.build(ctx.settings, vault_dir)
    assert drafting.past.to_address("dana@example.com") == []


def test_the_owners_sent_mail_is_learned_as_their_voice_and_a_forged_from_is_not(ctx, gmail, vault_dir):
    """Given the owner's reply to Dana in Gmail's sent mail and a stranger's message From the owner's address,
    Then past replies to Dana hold the owner's words only."""
    synced(ctx, gmail)
    gmail.add_message(
        sender=f"Owner <{OWNER}>", to=DANA, subject="Re: Lunch", labels=("SENT",), body="Hey Dana,\n\nSure!\n\nBest,\nO"
    )
    gmail.add_message(sender=f"Owner <{OWNER}>", to=DANA, subject="Re: Lunch", body="Yo Dana,\n\nNo.\n\nPeace out")
    ingest(ctx)
    drafting = Drafting.build(ctx.settings, vault_dir)
    (reply,) = drafting.past.to_address("dana@example.com")
    assert reply.parts.greeting == "Hey Dana," and "Peace out" not in reply.text


@pytest.mark.parametrize("order", ["triage first", "follow-up pass first"])
def test_what_is_owed_does_not_depend_on_which_pass_ran_first(ctx, gmail, vault_dir, clock, order):
    """Given Dana's email, ingested and already past FOLLOW_UP_DAYS (as after an import or a long weekend), When
    triage and the follow-up pass run in either order (and the pass once more, as the daemon runs it every
    minute), Then the same email is owed — never "looked at again in an hour"."""
    synced(ctx, gmail)
    gmail.add_message(sender=DANA, subject="Contract?", body="Could you sign the contract this week?")
    (path,) = ingest(ctx).written
    from h0.vault.dates import stamp_epoch as epoch

    due = add_working_days(epoch(fm(vault_dir, path)["received"]) or 0, 2) + 60
    owed: list[str] = []
    if order == "triage first":
        triage(ctx, path)
        owed += follow(ctx, due).owed
    else:
        owed += follow(ctx, due).owed
        triage(ctx, path)
    owed += follow(ctx, due + 61).owed
    assert owed == [path]


def test_a_stranger_in_the_thread_does_not_answer_and_is_recorded_as_nobodys_owner_mail(ctx, gmail, vault_dir, clock):
    """The record answers later questions: the stranger's message is not the owner's however often it is asked,
    and the owner's SENT message stays recorded after the sync moved on."""
    synced(ctx, gmail)
    asked = owners_question(gmail)
    ingest(ctx)
    stranger = gmail.add_message(sender=STRANGER, subject="Re: Q3 numbers?", body="Numbers!", thread_id=asked)
    ingest(ctx)
    owned = authority(ctx).owned([rfc(gmail, asked), rfc(gmail, stranger)])
    assert owned == {rfc(gmail, asked): Evidence.SENT_LABEL}
    assert authority(ctx).senders() == {OWNER}
    assert Path(vault_dir / "Needs_Action").exists()


def test_history_told_the_owner_wrote_a_message_is_not_believed_without_the_authoritys_evidence(ctx):
    """Given two messages kept as history that their recorder was told the owner wrote (an import's
    `outbound`), only one of them with evidence (the provider's sent mail), When triage assembles the
    thread's conversation, Then only the vouched one is shown as the owner's words (issue 42: no module
    decides authorship but the owner's identity)."""
    from h0.handlers.thread import conversation, kept_earlier
    from h0.mail.owner import Observed
    from h0.state.history import HistoryMessage, MailHistory

    state = StateDB.for_vault(ctx.paths.root, ctx.settings.h0_state_dir)

    def told(key: str, at: float, text: str) -> HistoryMessage:
        return HistoryMessage(
            key=key, thread="T-hist", outbound=True, sender=OWNER, recipients=(("", "dana@example.com"),),
            subject="Budget", at=at, text=text, provider_id=key.strip("<>"),
        )  # fmt: skip

    MailHistory(state).commit(
        [told("<forged@x>", 1_000_000.0, "Pay the new account"), told("<real@x>", 1_000_100.0, "Fine")]
    )
    OwnerAuthority(state).record([Observed("<real@x>", Evidence.SENT_LABEL, "test", OWNER)])
    entries = conversation([], 1_000_200.0, kept_earlier(ctx, "T-hist", 1_000_200.0))
    assert [(e["own"], e["text"]) for e in entries] == [(False, "Pay the new account"), (True, "Fine")]
    assert entries[0]["sender"] == OWNER
