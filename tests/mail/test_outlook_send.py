"""Outlook mail out (issue 43): a MIME sendMail, threaded, in Sent Items once, exactly once through H0's ledger.

Against the fake Graph and the fake HTTPS authority (msal unchanged), through the real MailService.
"""

from __future__ import annotations

import json
import stat
from email.message import EmailMessage
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.errors import AuthRequired, RateLimited, SendFailed
from h0.mail import MailService
from h0.mail.models import DirectSend
from h0.mail.providers.outlook import OutlookBackend
from tests.fakes.fake_authority import FakeAuthority
from tests.fakes.fake_graph import FakeGraph
from tests.mail.conftest import DIRECT_SEND, audit_records, dead_pid
from tests.mail.outlook_fixtures import outlook_values, sign_in
from tests.mail.test_gmail_backend import _pending_attempt


@pytest.fixture
def service(outlook_settings) -> MailService:
    mail = MailService(outlook_settings.model_copy(update=DIRECT_SEND))
    yield mail
    mail.close()


def test_a_reply_threads_by_the_original_and_lands_in_sent_items_once(service, graph):
    """A reply carries In-Reply-To/References of the original, joins its conversation, and sendMail leaves
    exactly one copy in Sent Items; "already sent" is then found there by internetMessageId."""
    original = graph.add_message(subject="Question", message_id="<q1@example.com>", sender="Ann <ann@example.com>")
    result = service.send_email(
        DirectSend(to="ann@example.com", subject="Re: Question", body="Answer.", reply_to_message_id=original)
    )
    (sent,) = graph.sent
    assert sent.header("In-Reply-To") == "<q1@example.com>" and "<q1@example.com>" in sent.header("References")
    assert sent.header("Message-ID") == result.rfc822_message_id and not result.already_sent
    (copy,) = graph.in_folder("sentitems")
    assert copy.props["internetMessageId"] == result.rfc822_message_id
    assert copy.props["conversationId"] == graph.messages[original].props["conversationId"] == result.thread_id
    found = service.backend.find_sent(result.rfc822_message_id)
    assert found is not None and found.message_id == copy.id
    assert all('IdType="ImmutableId"' in prefer for prefer in graph.prefers)


def test_a_429_storm_on_send_is_answered_at_once_each_time_and_the_message_goes_once(service, graph, vault_dir):
    """Hostile: sendMail is throttled three times (Retry-After). Each call makes one attempt and answers
    rate_limited with Graph's Retry-After at once; each next call first asks Sent Items whether the last try
    went through; the fourth sends, once."""
    graph.fail_next(429, count=3, retry_after=0.05, path_contains="/sendMail")
    for _ in range(3):
        with pytest.raises(RateLimited) as caught:
            service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="storm-1"))
        assert caught.value.retry_after == 0.05 and graph.sent == []
    result = service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="storm-1"))
    assert len(graph.sent) == 1 and not result.already_sent
    assert len(audit_records(vault_dir, "send_failed")) == 3


def test_an_answer_lost_after_graph_took_the_send_is_found_in_sent_items_not_sent_again(service, graph):
    graph.drop_next(path_contains="/sendMail")
    result = service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="drop-1"))
    assert len(graph.sent) == 1 and result.message_id == graph.sent[0].id  # the Graph id, read from Sent Items
    again = service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="drop-1"))
    assert again.already_sent and len(graph.sent) == 1


def test_a_crash_after_graph_sent_is_already_sent_by_internet_message_id(service, graph):
    """The send was claimed and the process died; the message is in Sent Items: recovered, not sent again.
    A stranger's message reusing the Message-ID in the Inbox does not count."""
    message = {"to": "bob@example.com", "subject": "S", "body": "b", "idempotency_key": "crash-1"}
    rfc = _pending_attempt(service, dead_pid(), **message)
    graph.add_message(subject="S", message_id=rfc)  # in the Inbox: not the owner's sent mail
    stranger_only = service.backend.find_sent(rfc)
    assert stranger_only is None
    graph.add_message(subject="S", message_id=rfc, folder="sentitems", is_read=True)
    result = service.send_email(DirectSend(**message))
    assert result.already_sent is True and graph.sent == []


def test_a_revoked_refresh_token_mid_send_is_auth_required_naming_the_command_and_sends_once_after(
    service, graph, authority, vault_dir
):
    """Hostile: the access token expires and the grant is revoked between two sends. The second send gets
    Graph's 401, msal's refresh is refused (invalid_grant): auth_required naming `h0 auth outlook`, nothing
    sent. After a new sign-in the same send goes, once."""
    service.send_email(DirectSend(to="bob@example.com", subject="first", body="b", idempotency_key="r-1"))
    graph.expire_tokens()
    authority.revoke()
    with pytest.raises(AuthRequired) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="second", body="b", idempotency_key="r-2"))
    assert "h0 auth outlook" in caught.value.message and len(graph.sent) == 1
    assert service.health("mail").token == "revoked"
    sign_in(service.settings)  # the owner runs `h0 auth outlook` again; the running server reads the new cache
    result = service.send_email(DirectSend(to="bob@example.com", subject="second", body="b", idempotency_key="r-2"))
    assert not result.already_sent and [s.header("Subject") for s in graph.sent] == ["first", "second"]


def test_an_expired_access_token_is_refreshed_once_and_the_cache_rewritten_0600(
    service,
    graph,
    authority,
    outlook_token,
):
    before = json.loads(outlook_token.read_text())
    graph.expire_tokens()
    service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="x-1"))
    assert authority.refreshes == 1 and len(graph.sent) == 1
    after = json.loads(outlook_token.read_text())
    assert after["AccessToken"] != before["AccessToken"]
    assert stat.S_IMODE(outlook_token.stat().st_mode) == 0o600


def test_a_message_past_graphs_request_limit_is_refused_unsent(outlook_settings, graph):
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "me@example.com", "bob@example.com", "big"
    message["Message-ID"] = "<big@h0.example>"
    message.set_content("see attached")
    message.add_attachment(b"\0" * (3_200_000), maintype="application", subtype="octet-stream", filename="big.bin")
    with OutlookBackend(outlook_settings) as backend, pytest.raises(SendFailed) as caught:
        backend.send(message)
    assert caught.value.details["outcome"] == "not_sent" and "not sent" in caught.value.message
    assert graph.sent == []


def test_health_names_the_account_and_the_token(service, graph):
    health = service.health("mail")
    assert health.account == graph.address and health.token == "valid" and health.status == "ok"
    assert health.backend == "outlook"


def test_no_sign_in_is_auth_required_naming_the_command(vault_dir: Path, graph: FakeGraph, authority: FakeAuthority):
    settings = load_settings(**outlook_values(vault_dir, graph, authority, vault_dir.parent / "none.json"))
    mail = MailService(settings.model_copy(update=DIRECT_SEND))
    try:
        with pytest.raises(AuthRequired) as caught:
            mail.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
        health = mail.health("mail")
    finally:
        mail.close()
    assert "h0 auth outlook" in caught.value.message and graph.sent == []
    assert health.token == "missing" and any("h0 auth outlook" in p for p in health.problems)


def test_the_graph_sessions_of_worker_threads_that_ended_are_closed(service, graph):
    """The mail server calls the backend from anyio's worker threads, which it retires when idle. Given sends from
    five threads that then end, their sessions (and keep-alive connections) are closed and let go, not kept
    open until the server exits; the calling thread's own stays."""
    import gc
    import threading

    http = service.backend.http
    service.send_email(DirectSend(to="bob@example.com", subject="main", body="b", idempotency_key="thread-main"))

    def send(i: int) -> None:
        service.send_email(DirectSend(to="bob@example.com", subject=f"t{i}", body="b", idempotency_key=f"thread-{i}"))

    for i in range(5):
        worker = threading.Thread(target=send, args=(i,))
        worker.start()
        worker.join()
    gc.collect()
    assert len(graph.sent) == 6
    assert http.sessions == 1


def test_graph_throttling_without_retry_after_is_rate_limited_for_one_second(service, graph):
    graph.fail_next(429, path_contains="/sendMail")
    with pytest.raises(RateLimited) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    assert caught.value.retry_after == 1.0 and "Microsoft Graph is throttling H0" in caught.value.message
    assert graph.sent == []
