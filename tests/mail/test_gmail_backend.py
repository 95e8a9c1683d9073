"""The Gmail backend through MailService, against the fake Gmail, with the real Google client."""

from __future__ import annotations

import base64
import json
import os
import socket
from pathlib import Path

import pytest

from h0.errors import Conflict, InternalError, InvalidRequest, McpUnavailable, NotFound, RateLimited, SendFailed
from h0.mail import MailService
from h0.mail.models import AttachmentMeta, DirectSend, EmailStatus
from h0.mcp.mail_server import SERVER_NAME
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import audit_records, dead_pid, gmail_settings_for
from tests.statedb import crash_edit


def test_given_a_message_when_sent_then_gmail_receives_the_mime_and_the_audit_brackets_the_call(
    service, gmail, vault_dir
):
    result = service.send_email(
        DirectSend(
            to="Bob <bob@example.com>",
            cc="carol@example.com",
            bcc=["dan@example.com"],
            subject="Quarterly report",
            body="Numbers attached.\n",
            html_body="<p>Numbers</p>",
        )
    )
    [sent] = gmail.sent
    assert result.message_id == sent.id and result.thread_id == sent.thread_id and result.backend == "gmail"
    assert result.already_sent is False and result.rfc822_message_id == sent.header("Message-ID")
    assert sent.header("To") == "Bob <bob@example.com>" and sent.header("Cc") == "carol@example.com"
    assert sent.header("Bcc") == "dan@example.com"  # Gmail reads Bcc from the raw message and strips it
    assert sent.message.get_body(("html",)).get_content().strip() == "<p>Numbers</p>"
    assert sent.metadata["upload"] == "json"
    events = [r["event"] for r in audit_records(vault_dir)]
    assert events == ["pre_send_audit", "email_sent"]
    [pre] = audit_records(vault_dir, "pre_send_audit")
    assert pre["to"] == "Bob <bob@example.com>" and pre["subject"] == "Quarterly report"
    assert pre["body_preview"] == "Numbers attached.\n" and pre["rfc822_message_id"] == result.rfc822_message_id
    assert "reply_to_message_id" not in pre  # None fields are left out of the line


def test_given_the_audit_log_cannot_be_written_then_nothing_is_sent(service, gmail, vault_dir):
    (vault_dir / "Logs").rename(vault_dir / "Logs.moved")
    (vault_dir / "Logs").write_text("not a folder")
    with pytest.raises(InternalError):
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    assert gmail.sent == []


def test_given_a_reply_then_it_threads_by_the_original_message_id_and_thread(service, gmail):
    original = gmail.add_message(
        subject="Question", message_id="<q1@example.com>", references="<q0@example.com>", thread_id="thread-77"
    )
    result = service.send_email(
        DirectSend(to="ann@example.com", subject="Re: Question", body="Answer.", reply_to_message_id=original)
    )
    sent = gmail.sent[-1]
    assert sent.header("In-Reply-To") == "<q1@example.com>"
    assert sent.header("References") == "<q0@example.com> <q1@example.com>"
    assert result.thread_id == sent.thread_id == "thread-77" and sent.metadata["threadId"] == "thread-77"
    assert result.hints == []


def test_given_a_reply_to_an_unknown_message_then_not_found_unless_a_thread_id_is_given(service, gmail):
    with pytest.raises(NotFound):
        service.send_email(DirectSend(to="ann@example.com", subject="Re: x", body="b", reply_to_message_id="deadbeef"))
    assert gmail.sent == []
    thread = gmail.message(gmail.add_message(subject="x", thread_id="t-1")).thread_id
    result = service.send_email(
        DirectSend(to="ann@example.com", subject="Re: x", body="b", reply_to_message_id="deadbeef", thread_id=thread)
    )
    assert result.thread_id == "t-1" and "threaded by thread_id only" in result.hints[0]


@pytest.mark.parametrize("thread_id", [None, "t-big"])
def test_given_a_large_attachment_then_it_goes_as_a_media_upload(service, gmail, vault_dir, thread_id):
    if thread_id:
        gmail.add_message(thread_id=thread_id)
    data = bytes(range(256)) * (14 * 1024)  # 3.5 MB, 4.8 MB as base64 MIME: over the JSON-body threshold
    (vault_dir / "Done" / "scan.bin").write_bytes(data)
    service.send_email(
        DirectSend(
            to="bob@example.com",
            subject="Scan",
            body="see attached",
            attachments=["Done/scan.bin"],
            thread_id=thread_id,
        )
    )
    sent = gmail.sent[-1]
    assert sent.metadata["upload"] == ("multipart" if thread_id else "media")
    assert sent.thread_id == (thread_id or sent.id)
    [attachment] = sent.attachments
    assert attachment.get_filename() == "scan.bin" and attachment.get_content() == data


def test_given_a_mailbox_then_queries_select_like_gmail(service, gmail):
    unread = gmail.add_message(subject="unread one", labels=["INBOX", "UNREAD"])
    read = gmail.add_message(subject="read one", labels=["INBOX"])
    client = gmail.add_message(subject="client mail", labels=["INBOX", "Clients"])
    archived = gmail.add_message(subject="archived", labels=["Clients"])
    service.send_email(DirectSend(to="bob@example.com", subject="sent by me", body="b"))

    def ids(query: str) -> set[str]:
        return {e.id for e in service.list_emails(query, 50).emails}

    assert ids("is:unread") == {unread}
    assert ids("in:inbox") == {unread, read, client}
    assert ids("label:clients") == {client, archived}
    assert ids("in:inbox -label:Clients") == {unread, read}
    assert ids("in:sent") == {gmail.sent[-1].id}
    listed = service.list_emails("in:inbox", 2).emails
    assert [e.subject for e in listed] == ["client mail", "read one"]  # newest first, capped
    assert listed[0].sender == "Ann Example <ann@example.com>" and listed[0].date.endswith("Z")
    assert listed[0].labels == ["INBOX", "Clients"]


def test_given_rich_messages_then_get_email_decodes_them(service, gmail):
    html_only = gmail.add_message(
        subject="Überweisung ✓",
        body=None,
        html="<p>Pay&nbsp;<b>now</b></p><p>Thanks</p>",
        attachments=[("invoice.pdf", b"%PDF" * 100, "application/pdf")],
        cc="x@example.com",
    )
    email = service.get_email(html_only)
    assert email.subject == "Überweisung ✓" and email.cc == "x@example.com"
    assert email.body == "Pay now\n\nThanks" and email.body_format == "html"
    assert email.has_attachments and email.attachment_names == ["invoice.pdf"]
    assert email.attachments == [AttachmentMeta(filename="invoice.pdf", mime_type="application/pdf", size=400)]
    long_one = gmail.add_message(subject="long", body="line\n" * 30_000)
    email = service.get_email(long_one)
    assert email.body_truncated and len(email.body) == 100_000 and "\r" not in email.body
    with pytest.raises(NotFound):
        service.get_email("0000000000000000")


def test_given_labels_then_add_label_creates_once_and_move_takes_mail_out_of_the_inbox(service, gmail):
    msg = gmail.add_message(labels=["INBOX", "UNREAD"])
    first = service.add_label(msg, "H0/Processed")
    again = service.add_label(msg, "h0/processed")
    assert first.created and not again.created and first.label_id == again.label_id
    moved = service.move_email(msg, "H0/Done")
    assert "INBOX" not in moved.labels and moved.label_id in moved.labels
    back = service.move_email(msg, "INBOX")
    assert "INBOX" in back.labels and not back.created


@pytest.mark.parametrize("name", ["Work//Clients", "/leading", "SENT"])
def test_given_a_label_name_gmail_rejects_then_invalid_request_and_nothing_changes(service, gmail, name):
    msg = gmail.add_message(labels=["INBOX"])
    labels_before = dict(gmail.labels)
    with pytest.raises(InvalidRequest):
        service.add_label(msg, name)
    assert gmail.labels == labels_before and gmail.message(msg).labels == ["INBOX"]


def test_given_gmail_answers_429_then_one_request_and_rate_limited_with_retry_after_and_nothing_sent(
    service, gmail, vault_dir
):
    """Given Gmail answers the send 429 with Retry-After 7, when a message is sent, then one request went to
    Gmail and the answer comes at once: rate_limited, retry_after 7, nothing sent — "try again at T", never
    a wait inside the call (whoever asked decides when: the daemon's work queue)."""
    gmail.fail_next(429, count=5, retry_after=7, path_contains="messages/send")
    with pytest.raises(RateLimited) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    assert caught.value.retry_after == 7 and caught.value.to_dict()["retry_after"] == 7
    assert gmail.sent == []
    assert len([p for m, p in gmail.requests if p.endswith("messages/send")]) == 1
    [failed] = audit_records(vault_dir, "send_failed")
    assert failed["error"] == "rate_limited" and failed["retryable"] is True


def test_given_transient_429_and_5xx_then_each_call_is_one_attempt_and_the_next_call_succeeds(service, gmail):
    """Given Gmail answers a read 503 and a send 429 then 500, when the caller asks again after each typed
    answer, then each call made one attempt, the read and the send succeed, and before sending again after
    a failed attempt the Message-ID is looked up (it may have gone after all)."""
    msg = gmail.add_message(subject="eventually")
    gmail.fail_next(503, count=1, path_contains="/messages/")
    with pytest.raises(InternalError) as read_failed:
        service.get_email(msg)
    assert read_failed.value.details["retryable"] is True
    assert service.get_email(msg).subject == "eventually"
    gmail.fail_next(429, count=1, retry_after=0.01, path_contains="messages/send")
    gmail.fail_next(500, count=1, path_contains="messages/send")
    with pytest.raises(RateLimited):
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="k-1"))
    assert not [p for m, p in gmail.requests if m == "GET" and p.endswith("/messages")]
    with pytest.raises(SendFailed) as send_failed:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="k-1"))
    assert send_failed.value.details["retryable"] is True
    service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="k-1"))
    assert len(gmail.sent) == 1
    lookups = [p for m, p in gmail.requests if m == "GET" and p.endswith("/messages")]
    assert len(lookups) == 2, "before each send after a failed one, the Message-ID is looked up"


def test_given_the_connection_drops_after_gmail_took_the_send_then_it_is_not_replayed(service, gmail, vault_dir):
    """Given Gmail took the send and the connection dropped before its answer, Then H0 asks Gmail by
    Message-ID (rfc822msgid:) instead of sending again: it is there, so it was sent — once."""
    gmail.drop_next(path_contains="messages/send")
    sent = service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="draft-1"))
    assert len(gmail.sent) == 1 and sent.message_id == gmail.sent[0].id and not sent.already_sent
    lookups = [p for m, p in gmail.requests if m == "GET" and p.endswith("/messages")]
    assert lookups, "the Message-ID was looked up after the dropped answer"
    # The caller retries with the same key: answered from the ledger, nothing sent again.
    again = service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="draft-1"))
    assert again.already_sent is True and again.message_id == gmail.sent[0].id
    assert len(gmail.sent) == 1
    [record] = audit_records(vault_dir, "email_sent")  # the one record of the send
    assert record["provider_message_id"] == gmail.sent[0].id


def test_given_the_connection_drops_before_gmail_stored_the_send_then_the_outcome_stays_unknown(
    service, gmail, vault_dir
):
    """Given the connection dropped mid-send and Gmail has no message with that Message-ID, Then the outcome is
    unknown (a search may lag the send): H0 says so and sends nothing more by itself, asked again or not."""
    gmail.lose_next(path_contains="messages/send")
    with pytest.raises(SendFailed) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="draft-2"))
    assert caught.value.details["outcome"] == "unknown" and caught.value.details["provider_checked"] is True
    assert "Sent folder" in caught.value.message and gmail.sent == []
    with pytest.raises(SendFailed) as again:  # asked again: still not there, and still never sent blindly
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="draft-2"))
    assert again.value.details["outcome"] == "unknown" and "no message with its Message-ID" in again.value.message
    assert gmail.sent == [] and audit_records(vault_dir, "email_sent") == []
    status = service.email_status(caught.value.details["rfc822_message_id"])
    assert (status.status, status.error) == ("unknown", "the send's outcome was never confirmed")


def test_given_gmail_answers_429_without_retry_after_then_rate_limited_for_one_second(service, gmail):
    gmail.fail_next(429)
    with pytest.raises(RateLimited) as caught:
        service.list_emails("is:unread", 5)
    assert caught.value.retry_after == 1.0 and "Gmail is rate limiting H0" in caught.value.message


def test_given_gmail_refuses_a_recipient_then_send_failed_is_a_bounce(service, gmail):
    gmail.fail_next(400, message="Invalid To header", path_contains="messages/send")
    with pytest.raises(SendFailed) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="k-bounce"))
    assert caught.value.details["bounce"] is True and caught.value.details["retryable"] is False
    status = service.email_status(caught.value.details["rfc822_message_id"])
    assert status.status == "bounced"


def test_given_the_hourly_cap_is_reached_then_rate_limited_even_after_a_restart(vault_dir, gmail, token_path):
    settings = gmail_settings_for(vault_dir, gmail, token_path, rate_limit_per_hour=2)
    service = MailService(settings)
    for i in range(2):
        service.send_email(DirectSend(to="bob@example.com", subject=f"S{i}", body="b"))
    with pytest.raises(RateLimited) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S3", body="b"))
    assert 3500 < caught.value.retry_after <= 3600 and caught.value.details["window"] == "hourly"
    restarted = MailService(settings)
    with pytest.raises(RateLimited):
        restarted.send_email(DirectSend(to="bob@example.com", subject="S3", body="b"))
    assert len(gmail.sent) == 2 and restarted.health(SERVER_NAME).sends_last_hour == 2


def test_given_sent_mail_then_its_status_is_sent_until_a_bounce_report_arrives(service, gmail):
    result = service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    assert service.email_status(result.message_id).status == "sent"
    assert service.email_status(result.rfc822_message_id).status == "sent"
    gmail.add_message(
        sender="Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        subject="Delivery Status Notification (Failure)",
        body=f"Address not found.\n\nMessage-ID: {result.rfc822_message_id}\n",
    )
    assert service.email_status(result.message_id).status == "bounced"
    assert service.email_status("ffffffffffffffff") == EmailStatus(
        message_id="ffffffffffffffff", status="unknown", timestamp=None
    )


def _pending_attempt(service, pid: int, **message) -> str:
    """A send claimed in the state database by process `pid` whose outcome was never recorded
    (the process died mid-send); returns its Message-ID."""
    out = service.builder.direct_message(DirectSend(**message))
    claim = service.state.claim_send(
        key=out.key, rfc822_message_id=out.rfc822_message_id, content_hash=out.content_hash, caps=(), in_flight_s=120.0
    )
    assert claim.status == "claimed"
    assert crash_edit(
        service.state.path, "UPDATE sends SET pid = ? WHERE rfc822_message_id = ?", (pid, out.rfc822_message_id)
    )
    return out.rfc822_message_id


def test_given_a_crash_after_gmail_sent_then_the_same_key_returns_already_sent(service, gmail, vault_dir):
    """The send is claimed, the outcome never written (the process died mid-send), and Gmail has it."""
    message = {"to": "bob@example.com", "subject": "S", "body": "b", "idempotency_key": "draft-9"}
    rfc = _pending_attempt(service, dead_pid(), **message)
    gmail.add_message(message_id=rfc, labels=["SENT"], subject="S", thread_id="t-crash")
    result = service.send_email(DirectSend(**message))
    assert result.already_sent is True and result.thread_id == "t-crash"
    assert gmail.sent == []


def test_given_a_crash_before_gmail_got_it_then_the_same_key_sends_once(service, gmail):
    message = {"to": "bob@example.com", "subject": "S", "body": "b", "idempotency_key": "draft-10"}
    rfc = _pending_attempt(service, dead_pid(), **message)
    result = service.send_email(DirectSend(**message))
    assert result.already_sent is False and len(gmail.sent) == 1
    assert result.rfc822_message_id == rfc
    assert service.send_email(DirectSend(**message)).already_sent
    assert len(gmail.sent) == 1


def test_given_another_live_process_is_sending_the_same_key_then_conflict_and_nothing_sent(service, gmail):
    message = {"to": "bob@example.com", "subject": "S", "body": "b", "idempotency_key": "draft-11"}
    _pending_attempt(service, os.getppid(), **message)
    with pytest.raises(Conflict):
        service.send_email(DirectSend(**message))
    assert gmail.sent == []


@pytest.mark.timeout(30)  # health() has a 2 s network budget; a hang fails the test
def test_given_gmail_does_not_answer_then_health_check_still_answers_degraded(vault_dir, token_path, gmail):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections into the backlog, never answers
    try:
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        service = MailService(gmail_settings_for(vault_dir, gmail, token_path, gmail_api_endpoint=endpoint))
        health = service.health(SERVER_NAME)
        assert health.status == "degraded" and health.account is None and health.token == "valid"
    finally:
        silent.close()


def test_given_a_healthy_account_then_health_reports_it(service, gmail):
    service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    health = service.health(SERVER_NAME)
    expected = {
        "status": "ok",
        "backend": "gmail",
        "account": gmail.address,
        "token": "valid",
        "sends_last_hour": 1,
        "sends_last_day": 1,
        "problems": [],
    }
    assert health == health.model_copy(update=expected)


def test_fake_gmail_is_usable_on_its_own_with_the_plain_google_client(tmp_path: Path):
    """The fake's public API, as other engineers will use it (here without H0 in between)."""
    import google_auth_httplib2
    from google.oauth2.credentials import Credentials
    from googleapiclient.discovery import build

    with FakeGmail(address="me@example.com") as fake:
        token = json.loads(fake.write_token(tmp_path / "t.json", expired=True).read_text())
        creds = Credentials(
            token["token"],
            refresh_token=token["refresh_token"],
            token_uri=fake.token_uri,
            client_id=token["client_id"],
            client_secret=token["client_secret"],
        )
        http = google_auth_httplib2.AuthorizedHttp(creds)
        api = build("gmail", "v1", http=http, static_discovery=True, client_options={"api_endpoint": fake.api_endpoint})
        msg_id = fake.add_message(subject="Raw test", body="raw body", labels=["INBOX"])
        raw = api.users().messages().get(userId="me", id=msg_id, format="raw").execute()
        assert base64.urlsafe_b64decode(raw["raw"]) == fake.message(msg_id).raw
        minimal = api.users().messages().get(userId="me", id=msg_id, format="minimal").execute()
        assert "payload" not in minimal and minimal["labelIds"] == ["INBOX"]
        assert api.users().getProfile(userId="me").execute()["emailAddress"] == "me@example.com"
        assert fake.token_refreshes == 1 and fake.label_named("inbox")["id"] == "INBOX"


def test_given_a_shutdown_then_new_sends_are_refused_as_unavailable_and_nothing_is_sent(service, gmail):
    assert service.shutdown(timeout=1) is True
    with pytest.raises(McpUnavailable) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="b"))
    assert caught.value.details["retryable"] is True and gmail.sent == []
