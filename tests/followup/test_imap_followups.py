"""Replies awaited on IMAP (issue 25): the owner's sent mail is read from the Sent folder (found by
SPECIAL-USE, as the send path finds it), on real IMAP servers (pymap always, Dovecot when installed),
with the real MailService, ingest and follow-up pass; days pass on the tests' clock."""

# ruff: noqa: F811 — the IMAP fixtures are imported from tests.mail.imap_fixtures, then named as parameters
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from h0.followup.workdays import add_working_days
from h0.handlers.ingest import ingest_new_mail
from h0.mail import MailService
from tests.fakes.imap_server import PymapServer
from tests.followup.conftest import context, fm, follow
from tests.mail.imap_fixtures import imap, imap_server, imap_settings, raw_message, relay, sent_of  # noqa: F401

OWNER = "h0@example.com"  # the test account (IMAP_USER, SMTP_FROM)
DANA = "Dana Rivera <dana@example.org>"


@pytest.fixture
def service(vault_dir: Path, imap: PymapServer, relay) -> Iterator[MailService]:
    mail = MailService(imap_settings(vault_dir, imap, relay[0]), trusted_caller=True)
    yield mail
    mail.close()


def test_given_the_owners_question_in_the_sent_folder_when_no_answer_comes_then_a_follow_up_and_the_answer_closes_it(
    vault_dir, imap, service
):
    """Given H0 follows the mailbox, When the owner's question to Dana lands in the Sent folder (another mail
    client saved it there) and FOLLOW_UP_DAYS pass, Then the follow-up note and draft are written (replying to
    that Sent message); When Dana's answer arrives in INBOX (In-Reply-To the question), Then the note is filed
    and the draft withdrawn."""
    ctx = context(vault_dir, service)
    ingest_new_mail(ctx)  # the first sync: from here on the Sent folder is followed
    now = time.time()
    imap.deliver(
        raw_message(
            "Q3 numbers?",
            "Hi Dana,\nCould you send me the Q3 numbers?\n",
            sender=OWNER,
            to=DANA,
            message_id="<q3@example.com>",
        ),
        folder=sent_of(imap),
        flags=["\\Seen"],
    )
    report = ingest_new_mail(ctx)
    assert report.sent == 1 and report.written == []
    due = add_working_days(now, 2) + 3600
    followed = follow(ctx, due)
    (note,) = followed.awaited
    assert note.startswith("Needs_Action/FOLLOWUP_") and fm(vault_dir, note)["thread_id"] == "<q3@example.com>"
    draft = fm(vault_dir, note)["draft"]
    assert fm(vault_dir, draft)["reply_to_message_id"].startswith(f"{sent_of(imap)}/")
    assert fm(vault_dir, draft)["to"] == "dana@example.org"

    imap.deliver(
        raw_message(
            "Re: Q3 numbers?",
            "Here they are.",
            sender=DANA,
            to=OWNER,
            In_Reply_To="<q3@example.com>",
            References="<q3@example.com>",
        )
    )
    (answer,) = ingest_new_mail(ctx).written
    closed = follow(ctx, due + 60)
    assert closed.answered == [f"Done/{Path(note).name}"] and closed.withdrawn == [f"Done/{Path(draft).name}"]
    assert fm(vault_dir, f"Done/{Path(note).name}")["answered_by"] == f"[[{Path(answer).stem}]]"


def test_sent_mail_with_no_message_id_is_recorded_by_its_uid_and_still_followed_up(vault_dir, imap, service):
    """A message in Sent without a Message-ID (some clients, some scripts): nothing fails, it is known by its
    UIDVALIDITY-UID, and its follow-up replies to it by that id."""
    ctx = context(vault_dir, service)
    ingest_new_mail(ctx)
    bare = (
        f"From: {OWNER}\r\nTo: {DANA}\r\nSubject: Contract\r\n\r\nCan you sign the contract by Friday?\r\n"
    ).encode()
    imap.deliver(bare, folder=sent_of(imap), flags=["\\Seen"])
    report = ingest_new_mail(ctx)
    assert report.sent == 1 and report.failed == 0
    (note,) = follow(ctx, add_working_days(time.time(), 2) + 3600).awaited
    provider_id = fm(vault_dir, note)["asked_message_id"]
    assert (
        provider_id.startswith(f"{sent_of(imap)}/")
        and fm(vault_dir, fm(vault_dir, note)["draft"])["subject"] == "Re: Contract"
    )
