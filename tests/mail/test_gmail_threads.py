"""Reading a thread's messages (for "one reply per email"): the Gmail backend against the fake
Gmail with the real Google client, and the backends that cannot read."""

from __future__ import annotations

import time
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from h0.config import Settings, load_settings
from h0.errors import InternalError, InvalidRequest, NotFound, NotSupported
from h0.mail import MailService
from h0.mail.providers.backend import Mailbox, mailbox_of, open_backend
from h0.mail.providers.gmail import GmailBackend
from tests.fakes.fake_gmail import FakeGmail

HOUR_MS = 3_600_000


@pytest.fixture
def backend(gmail_settings: Settings) -> Iterator[GmailBackend]:
    with GmailBackend(gmail_settings) as gmail_backend:
        yield gmail_backend


def thread_requests(gmail: FakeGmail) -> list[tuple[str, str]]:
    return [(method, path) for method, path in gmail.requests if "/threads/" in path]


def test_given_two_inbound_and_one_sent_message_when_the_thread_is_read_then_they_come_oldest_first(backend, gmail):
    """Given a thread whose newer inbound message was stored before the older one, and H0's reply
    sent into it, when its messages are read, then they come oldest first with headers, labels and
    internal dates, the sent one labelled SENT, and no bodies are fetched."""
    now_ms = int(time.time() * 1000)
    newer = gmail.add_message(
        subject="Re: Plans",
        thread_id="t-plans",
        date_ms=now_ms - HOUR_MS,
        message_id="<second@example.com>",
        sender="Ann <ann@example.com>",
    )
    older = gmail.add_message(
        subject="Plans",
        thread_id="t-plans",
        date_ms=now_ms - 2 * HOUR_MS,
        message_id="<first@example.com>",
        sender="Ann <ann@example.com>",
    )
    gmail.add_message(subject="Elsewhere", thread_id="t-other")
    reply = backend.send(build_reply(), thread_id="t-plans")

    messages = backend.thread_messages("t-plans")

    assert [m.id for m in messages] == [older, newer, reply.message_id]
    assert all(m.thread_id == "t-plans" for m in messages)
    first, second, sent = messages
    assert first.internal_date_ms == now_ms - 2 * HOUR_MS and second.internal_date_ms == now_ms - HOUR_MS
    assert sent.internal_date_ms is not None and sent.internal_date_ms >= now_ms
    assert first.labels == ["INBOX", "UNREAD"] and sent.labels == ["SENT"]
    assert first.headers["Message-ID"] == "<first@example.com>" and first.headers["Subject"] == "Plans"
    assert first.headers["From"] == "Ann <ann@example.com>" and first.headers["To"] == gmail.address
    assert first.headers["Date"] is not None
    assert sent.headers["To"] == "ann@example.com" and sent.headers["In-Reply-To"] is None  # metadata headers only
    assert all(m.text is None and m.html is None for m in messages)
    [(method, path)] = thread_requests(gmail)
    assert method == "GET" and path.endswith("/users/me/threads/t-plans")


def test_given_an_unknown_thread_when_it_is_read_then_not_found(backend, gmail):
    """Given a mailbox without thread "t-none", when its messages are read, then NotFound (Gmail's 404)."""
    gmail.add_message(thread_id="t-some")
    with pytest.raises(NotFound) as caught:
        backend.thread_messages("t-none")
    assert caught.value.details["status"] == 404


@pytest.mark.parametrize("thread_id", ["", "   ", "t-1\r\nX-Evil: yes", "t\u2028x", "t" * 257])
def test_given_a_malformed_thread_id_then_invalid_request_and_gmail_is_not_asked(backend, gmail, thread_id):
    """Given an empty, multi-line or overlong thread id, when its messages are read, then
    InvalidRequest names the field, and no request reaches Gmail."""
    with pytest.raises(InvalidRequest) as caught:
        backend.thread_messages(thread_id)
    assert caught.value.details["field"] == "thread_id"
    assert thread_requests(gmail) == []


def test_given_the_outbox_backend_when_a_thread_is_wanted_then_there_is_no_mailbox_to_read_it(vault_dir: Path):
    """Given the outbox backend (the dry-run default), when a caller wants a thread, then the backend has no
    mailbox (it only sends), and the mail service answers a read with NotSupported."""
    settings = load_settings(vault_path=vault_dir)
    with open_backend(settings) as outbox:
        assert outbox.name == "outbox"
        assert mailbox_of(outbox) is None and not isinstance(outbox, Mailbox)
    service = MailService(settings)
    with pytest.raises(NotSupported):
        service.get_email("t-1")
    service.close()


def test_given_a_500_when_the_thread_is_read_then_a_retryable_error_and_the_next_read_brings_it(backend, gmail):
    """Given Gmail answers the first thread read with a 500, when the thread is read, then the 500 surfaces
    at once as a retryable InternalError (one request: the caller decides when to ask again), and the
    next read brings the thread."""
    only = gmail.add_message(thread_id="t-flaky")
    gmail.fail_next(500, path_contains="/threads/")

    with pytest.raises(InternalError) as caught:
        backend.thread_messages("t-flaky")

    assert caught.value.details["retryable"] is True and caught.value.details["status"] == 500
    assert len(thread_requests(gmail)) == 1
    assert [m.id for m in backend.thread_messages("t-flaky")] == [only]
    assert len(thread_requests(gmail)) == 2


def build_reply() -> EmailMessage:
    """H0's answer to Ann's second message, threaded by its headers."""
    reply = EmailMessage()
    reply["From"] = "h0.tester@gmail.com"
    reply["To"] = "ann@example.com"
    reply["Subject"] = "Re: Plans"
    reply["Message-ID"] = "<h0.reply@h0.local>"
    reply["In-Reply-To"] = "<second@example.com>"
    reply.set_content("Sounds good.")
    return reply
