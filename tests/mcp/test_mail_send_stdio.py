"""The send path across a real `h0 mcp gmail` process (outbox backend), driven by H0's own client.

Refusals cross the stdio boundary as typed values: the server puts the refusal's value in the wire's
`details.reason`, and the client gives back the error class with its `Refusal` — so the send step
compares enums, never strings. And what a send reports is what was sent: the recipients in the
result, in the one `email_sent` record and in the handler's outcome are the envelope the message
was built with, never a second reading of the note.
"""

from __future__ import annotations

import json
import os
import time
from email import message_from_bytes, policy
from email.utils import getaddresses
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.errors import Conflict, InvalidRequest, NotFound, Refusal, Then, wording
from h0.handlers.context import HandlerContext
from h0.handlers.outcome import Action
from h0.handlers.send import send_approved_draft
from h0.mcp.api import McpMail
from h0.mcp.client import McpConnection, ServerCommand
from h0.vault import Vault
from h0.vault.last_change import Arrival
from tests.conftest import subprocess_env
from tests.mail.conftest import gmail_env
from tests.pipeline.harness import wait_until


def mail_server(vault_dir: Path, **extra: str):
    env = subprocess_env(VAULT_PATH=str(vault_dir), MAIL_BACKEND="outbox", LOG_LEVEL="ERROR", **extra)
    conn = McpConnection(ServerCommand.h0("mail", "gmail", env), call_timeout=20).start()
    assert conn.wait_ready(30), conn.last_error
    return conn


@pytest.fixture
def mail(vault_dir: Path):
    """The mail server as any MCP client (Claude Code) starts it: it must name the version it read."""
    conn = mail_server(vault_dir)
    yield McpMail(conn)
    conn.close()


@pytest.fixture
def daemon_mail(vault_dir: Path):
    """The daemon's own mail server (its child: H0_DAEMON_CHILD=1), which reads the note itself."""
    conn = mail_server(vault_dir, H0_DAEMON_CHILD="1")
    yield McpMail(conn)
    conn.close()


def approve(vault_dir: Path, name: str, text: str) -> str:
    """A draft the human read a minute ago, then moved into Approved/."""
    draft = vault_dir / "Drafts" / name
    draft.write_text(text, encoding="utf-8")
    then = time.time() - 60
    os.utime(draft, (then, then))
    os.rename(draft, vault_dir / "Approved" / name)
    return f"Approved/{name}"


def note_hash(vault_dir: Path, path: str) -> str:
    return Vault(vault_dir).read_note(path).hash


def records(vault_dir: Path, event: str) -> list[dict]:
    found = []
    for log in sorted((vault_dir / "Logs").glob("*.jsonl")):
        found += [r for r in map(json.loads, log.read_text().splitlines()) if r.get("event") == event]
    return found


def test_given_a_withdrawn_draft_when_sent_over_stdio_then_the_client_gets_the_typed_refusal(vault_dir, mail):
    path = approve(vault_dir, "w.md", "---\nto: a@example.com\nsubject: Hi\nstatus: withdrawn\n---\nHello\n")

    with pytest.raises(InvalidRequest) as refused:
        mail.send_approved_draft(path, note_hash(vault_dir, path), Arrival("moved"))

    error = refused.value
    assert error.refusal is Refusal.NOT_SENDABLE_STATUS and not error.refusal.holds
    assert error.details["reason"] == "status_not_sendable"  # the wire format is unchanged
    assert error.message == wording(Refusal.NOT_SENDABLE_STATUS, {"state": "withdrawn", "because": ""})
    assert not (vault_dir / "Outbox").exists() or not list((vault_dir / "Outbox").iterdir())


def test_given_a_stale_reply_when_sent_over_stdio_then_it_is_held_as_newer_in_thread(vault_dir, mail):
    """Given drafts marked stale with any yes the note model reads (true, y, on, Yes, 1: one flag everywhere),
    When each is sent through the real mail server, Then each is held as out of date, none sent."""
    for n, word in enumerate(("true", "y", "on", "Yes", "1")):
        path = approve(
            vault_dir,
            f"s{n}.md",
            f"---\nto: a@example.com\nsubject: Re x {n}\nstale: {word}\nstale_reason: Ann wrote again\n---\nOk\n",
        )

        with pytest.raises(Conflict) as held:
            mail.send_approved_draft(path, note_hash(vault_dir, path), Arrival("moved"))

        assert held.value.refusal is Refusal.NEWER_IN_THREAD and held.value.refusal.holds, word
        assert "Ann wrote again" in held.value.message and held.value.details["hold"] is True
    assert not (vault_dir / "Outbox").exists() or not list((vault_dir / "Outbox").iterdir())


def test_given_a_note_changed_since_read_when_sent_over_stdio_then_the_refusal_says_look_again(vault_dir, mail):
    path = approve(vault_dir, "c.md", "---\nto: a@example.com\nsubject: Hi\n---\nHello\n")

    with pytest.raises(Conflict) as changed:
        mail.send_approved_draft(path, "0" * 64, Arrival("moved"))

    assert changed.value.refusal is Refusal.NOTE_CHANGED and changed.value.refusal.looks_again


def test_given_an_unknown_reason_on_the_wire_then_no_refusal_is_made_up():
    assert InvalidRequest("bad", reason="something_else").refusal is None
    assert InvalidRequest("bad").refusal is None


def test_given_a_display_name_posing_as_a_company_when_sent_then_every_report_names_the_envelope(
    vault_dir, daemon_mail
):
    """Given a draft whose To shows a name that is not where it goes, and Cc/Bcc as a list,
    When the daemon's send step sends it through the real mail server,
    Then the result, the one `email_sent` record and the handler's outcome name the addresses the
    message was built for — the same as the .eml's own headers — and no display name."""
    path = approve(
        vault_dir,
        "r.md",
        "---\nto: '\"Example Bank, Accounts\" <pay@evil.example>'\ncc: ['Bo <bo@example.org>']\n"
        "bcc: audit@example.net\nsubject: Invoice\n---\nPlease pay.\n",
    )
    settings = load_settings(vault_path=vault_dir, mail_backend="outbox")
    ctx = HandlerContext.local(settings, Vault(vault_dir), mail=daemon_mail)

    outcome = send_approved_draft(path, ctx)

    assert outcome.action is Action.SENT, outcome
    envelope = {"to": ["pay@evil.example"], "cc": ["bo@example.org"], "bcc": ["audit@example.net"]}
    assert outcome.data["recipients"] == envelope and outcome.data["to"] == "pay@evil.example"
    (sent,) = records(vault_dir, "email_sent")
    assert sent["recipients"] == envelope and sent["path"] == path
    (eml,) = (vault_dir / "Outbox").glob("*.eml")
    message = message_from_bytes(eml.read_bytes(), policy=policy.default)
    for field in ("to", "cc"):
        assert [addr for _, addr in getaddresses([str(message[field])])] == envelope[field]
    assert (vault_dir / "Done" / "r.md").exists() and not (vault_dir / "Approved" / "r.md").exists()


def test_given_a_display_name_pretending_to_be_another_address_then_nothing_is_sent_or_reported_sent(
    vault_dir, daemon_mail
):
    """Given `to: "ceo@bank.com" <pay@evil.example>` (the reader's mail would show ceo@bank.com),
    When the send step asks the real mail server to send it,
    Then it is refused with a typed error, back in Drafts/ with the reason, and no report says it was sent."""
    path = approve(vault_dir, "p.md", "---\nto: '\"ceo@bank.com\" <pay@evil.example>'\nsubject: Hi\n---\nPay.\n")
    settings = load_settings(vault_path=vault_dir, mail_backend="outbox")
    ctx = HandlerContext.local(settings, Vault(vault_dir), mail=daemon_mail)

    outcome = send_approved_draft(path, ctx)

    assert outcome.action is Action.REFUSED, outcome
    assert isinstance(outcome.data["error"], InvalidRequest) and "ceo@bank.com" in outcome.data["error"].message
    back = Vault(vault_dir).read_note("Drafts/p.md").frontmatter
    assert back["status"] == "not_sent" and back["h0_error_code"] == "invalid_request"
    assert records(vault_dir, "email_sent") == [] and not list((vault_dir / "Outbox").glob("*.eml"))


def test_given_claude_code_sends_an_approved_reply_over_stdio_then_it_is_filed_at_once(vault_dir, mail):
    """Given a reply the human moved into Approved/, answering an email waiting in Needs_Action/,
    When an MCP client (not H0's daemon) sends it with the hash it read,
    Then the mail server files it in the same call: the note in Done/ marked sent with H0's "Sent on …"
    line, the email beside it, the filing journal and `email_filed` written — nothing waits for a daemon."""
    (vault_dir / "Needs_Action" / "EMAIL_1.md").write_text("---\ntype: email\nstatus: awaiting_approval\n---\nHi\n")
    path = approve(
        vault_dir,
        "reply.md",
        "---\nto: ann@example.com\nsubject: 'Re: Hi'\nsource: '[[EMAIL_1]]'\nh0_error: an old refusal\n---\n"
        "Thanks!\n\n%% h0: not sent below %%\n"
        "Edit the text above, then move this note to Approved/ to send it, or to Rejected/ to drop it.\n",
    )

    result = mail.send_approved_draft(path, note_hash(vault_dir, path))

    assert result.filed_as == "Done/reply.md" and result.filing_error is None
    assert not (vault_dir / "Approved" / "reply.md").exists()
    filed = Vault(vault_dir).read_note("Done/reply.md")
    assert filed.frontmatter["status"] == "sent" and "h0_error" not in filed.frontmatter
    assert filed.frontmatter["rfc822_message_id"] == result.rfc822_message_id
    assert "Sent on " in filed.body and "to ann@example.com" in filed.body and "move this note" not in filed.body
    email = Vault(vault_dir).read_note("Done/EMAIL_1.md").frontmatter
    assert email["status"] == "done" and email["replied_with"] == "Done/reply.md"
    (filing,) = records(vault_dir, "email_filed")
    assert filing["done_path"] == "Done/reply.md" and filing["idempotency_key"] == result.idempotency_key
    (approval,) = records(vault_dir, "draft_approved")
    assert approval["note_hash"] == result.note_hash


def test_given_no_hash_from_an_mcp_client_then_nothing_is_sent(vault_dir, mail):
    path = approve(vault_dir, "n.md", "---\nto: a@example.com\nsubject: Hi\n---\nHello\n")

    with pytest.raises(InvalidRequest) as refused:
        mail.send_approved_draft(path, None, Arrival("moved"))

    assert refused.value.details["field"] == "note_hash" and (vault_dir / "Approved" / "n.md").exists()
    assert not (vault_dir / "Outbox").exists() or not list((vault_dir / "Outbox").iterdir())


def test_given_gmail_slower_than_the_servers_answer_time_then_the_call_is_answered_in_time_and_sent_once(
    vault_dir, gmail, token_path
):
    """Issue W over stdio: given Gmail holds the send past MAIL_ANSWER_SECONDS, when the daemon's own server is
    asked to send an approved draft, then the call is answered in time — still sending, look again — the
    session stays (no restart, the client's timeout never reached), the send goes on and files the note, and
    a look after that sends nothing more."""
    gmail.hold_next(path_contains="messages/send")
    env = gmail_env(vault_dir, gmail, token_path, MAIL_ANSWER_SECONDS="0.5", H0_DAEMON_CHILD="1", LOG_LEVEL="ERROR")
    conn = McpConnection(ServerCommand.h0("mail", "gmail", subprocess_env(**env)), call_timeout=20).start()
    assert conn.wait_ready(30), conn.last_error
    mail = McpMail(conn)
    try:
        path = approve(vault_dir, "slow.md", "---\nto: a@example.com\nsubject: Hi\n---\nHello\n")
        with pytest.raises(Conflict) as answered:
            mail.send_approved_draft(path, None, Arrival("moved"))
        assert answered.value.refusal is Refusal.STILL_SENDING and answered.value.then is Then.LOOK_AGAIN
        assert answered.value.details["retry_after"] <= 1.0 and gmail.sent == []
        gmail.release_stalled()
        assert wait_until(lambda: (vault_dir / "Done/slow.md").exists())  # the send went on, and filed the note
        with pytest.raises(NotFound):  # looked at again: nothing left to send
            mail.send_approved_draft(path, None, Arrival("moved"))
        assert conn.connects == 1
    finally:
        conn.close()
    assert len(gmail.sent) == 1
    (sent,) = records(vault_dir, "email_sent")
    assert sent["path"] == path
