"""The mail MCP server in memory (mcp.Client): typed results, and a typed error for every hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from h0.mcp.mail_server import build_mail_server
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import audit_records, gmail_settings_for, tool_error
from tests.mcp.contracts import check_contract

pytestmark = pytest.mark.anyio

TOOLS = {
    "send_approved_draft",
    "create_draft",
    "send_email",
    "list_emails",
    "get_email",
    "move_email",
    "add_label",
    "validate_email",
    "get_email_status",
    "health_check",
    "list_new_emails",
    "ack_new_emails",
}


@pytest.fixture
async def client(gmail_settings):
    async with Client(build_mail_server(gmail_settings)) as c:
        yield c


async def call(client, tool: str, **arguments):
    return await client.call_tool(tool, arguments)


async def test_contract_of_every_mail_tool_is_pinned(client):
    tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        assert tool.output_schema and tool.input_schema and tool.annotations and tool.description
    check_contract("mail_tools", tools)


async def test_given_a_session_then_send_read_label_move_and_status_are_typed(client, gmail):
    incoming = gmail.add_message(subject="Invoice 42", body="Please pay.", message_id="<inv42@example.com>")
    listed = await call(client, "list_emails", query="is:unread", max_results=5)
    assert listed.structured_content["emails"][0]["id"] == incoming
    email = (await call(client, "get_email", message_id=incoming)).structured_content
    assert email["rfc822_message_id"] == "<inv42@example.com>" and email["body"].strip() == "Please pay."
    sent = await call(
        client,
        "send_email",
        to=["ann@example.com"],
        subject="Re: Invoice 42",
        body="Paid.",
        reply_to_message_id=incoming,
        idempotency_key="reply-42",
        message_id="reply42@example.org",
    )
    result = sent.structured_content
    assert not sent.is_error and json.loads(sent.content[0].text) == result
    assert result["rfc822_message_id"] == "<reply42@example.org>" and result["thread_id"] == email["thread_id"]
    assert gmail.sent[0].header("In-Reply-To") == "<inv42@example.com>"
    label = (await call(client, "add_label", message_id=incoming, label_name="H0/Replied")).structured_content
    assert label["created"] is True and label["label_name"] == "H0/Replied"
    moved = (await call(client, "move_email", message_id=incoming, destination_label="H0/Done")).structured_content
    assert "INBOX" not in moved["labels"]
    status = (await call(client, "get_email_status", message_id=result["message_id"])).structured_content
    assert status["status"] == "sent"
    valid = (await call(client, "validate_email", email="a@gmial.com")).structured_content
    assert valid == {
        "email": "a@gmial.com",
        "valid": False,
        "normalized": "a@gmial.com",
        "reason": "'gmial.com' looks like a typo of 'gmail.com' — did you mean a@gmail.com?",
        "suggestion": "a@gmail.com",
    }
    health = (await call(client, "health_check")).structured_content
    assert health["status"] == "ok" and health["server"] == "h0-gmail" and health["sends_last_hour"] == 1


HOSTILE_SENDS = [
    ({"to": "bob@example.com\r\nBcc: evil@x.com"}, "invalid_request"),
    ({"subject": "Hello\r\nBcc: evil@x.com"}, "invalid_request"),
    ({"subject": "Hello\nX-Injected: 1"}, "invalid_request"),
    ({"to": "not-an-address"}, "invalid_request"),
    ({"to": "a@gmial.com"}, "invalid_request"),  # refused, not sent with a hint: see h0/mail/compose/addresses.py
    ({"body": ""}, "invalid_request"),
    ({"body": "  \n "}, "invalid_request"),
    ({"to": []}, "invalid_request"),
    ({"cc": "ok@example.com, nope"}, "invalid_request"),
    ({"message_id": "<a@b>\r\nBcc: evil@x.com"}, "invalid_request"),
    ({"attachments": ["Done/huge.bin"]}, "invalid_request"),
    ({"attachments": ["../../etc/passwd"]}, "permission_denied"),
    ({"attachments": ["/etc/passwd"]}, "permission_denied"),
    ({"attachments": ["Done/tool.exe"]}, "invalid_request"),
    ({"to": 42}, "invalid_request"),
]


@pytest.mark.parametrize(("override", "code"), HOSTILE_SENDS, ids=[repr(o)[:40] for o, _ in HOSTILE_SENDS])
async def test_given_a_hostile_send_then_a_typed_error_and_nothing_is_sent(client, gmail, vault_dir, override, code):
    with (vault_dir / "Done" / "huge.bin").open("wb") as handle:
        handle.truncate(30 * 1024 * 1024)
    (vault_dir / "Done" / "tool.exe").write_bytes(b"MZ")
    arguments = {"to": "bob@example.com", "subject": "Hello", "body": "Hi", **override}
    error = tool_error(await client.call_tool("send_email", arguments))
    assert error["error"] == code
    assert gmail.sent == [] and audit_records(vault_dir) == []  # refused before the audit, the caps and Gmail


async def test_given_a_domain_typo_then_the_error_carries_the_suggestion_and_an_override_sends(client, gmail):
    error = tool_error(await call(client, "send_email", to="a@gmial.com", subject="S", body="b"))
    assert error["details"]["problems"][0]["suggestion"] == "a@gmail.com"
    # The message tells a person what to change in the note; the tool's way out is in the details.
    assert error["details"]["tool_argument"] == "allow_typo_domains" and "confirm_domains" in error["message"]
    sent = await call(client, "send_email", to="a@gmial.com", subject="S", body="b", allow_typo_domains=True)
    assert not sent.is_error and len(gmail.sent) == 1


async def test_given_gmail_answers_429_five_times_then_rate_limited_with_retry_after_at_top_level(client, gmail):
    gmail.fail_next(429, count=5, retry_after=0.01)
    error = tool_error(await call(client, "list_emails", query="in:inbox"))
    assert error["error"] == "rate_limited" and error["retry_after"] == 0.01 and error["details"]["retry_after"] == 0.01


async def test_given_unknown_ids_and_rejected_labels_then_typed_errors(client, gmail):
    assert tool_error(await call(client, "get_email", message_id="0123456789abcdef"))["error"] == "not_found"
    msg = gmail.add_message()
    assert (
        tool_error(await call(client, "add_label", message_id=msg, label_name="Bad//Name"))["error"]
        == "invalid_request"
    )
    assert (
        tool_error(await call(client, "add_label", message_id=msg, label_name="x\r\ny"))["error"] == "invalid_request"
    )
    assert (
        tool_error(await call(client, "add_label", message_id="0123456789abcdef", label_name="Fine"))["error"]
        == "not_found"
    )
    assert tool_error(await call(client, "list_emails", max_results=0))["error"] == "invalid_request"


async def test_given_the_hourly_cap_is_reached_then_rate_limited(vault_dir, gmail, token_path):
    settings = gmail_settings_for(vault_dir, gmail, token_path, rate_limit_per_hour=1)
    async with Client(build_mail_server(settings)) as client:
        assert not (await call(client, "send_email", to="bob@example.com", subject="S", body="b")).is_error
        error = tool_error(await call(client, "send_email", to="bob@example.com", subject="S2", body="b"))
    assert error["error"] == "rate_limited" and error["retry_after"] > 3000
    assert len(gmail.sent) == 1


async def test_given_a_missing_or_revoked_token_then_auth_required_tells_the_human_what_to_run(
    vault_dir, gmail, tmp_path: Path
):
    async with Client(build_mail_server(gmail_settings_for(vault_dir, gmail, tmp_path / "none.json"))) as client:
        error = tool_error(await call(client, "send_email", to="bob@example.com", subject="S", body="b"))
        assert error["error"] == "auth_required" and error["message"] == "Run `h0 auth gmail` to re-authenticate"
        health = (await call(client, "health_check")).structured_content
        assert health["token"] == "missing" and health["status"] == "degraded"
    token = gmail.write_token(tmp_path / "token.json", expired=True)
    gmail.revoke_refresh_token()
    async with Client(build_mail_server(gmail_settings_for(vault_dir, gmail, token))) as client:
        error = tool_error(await call(client, "list_emails", query="in:inbox"))
        assert error["error"] == "auth_required" and error["message"] == "Run `h0 auth gmail` to re-authenticate"
    assert gmail.sent == []


async def test_given_the_smtp_backend_then_read_tools_answer_not_supported(vault_dir):
    from h0.config import load_settings

    settings = load_settings(
        vault_path=vault_dir, mail_backend="smtp", smtp_host="localhost", smtp_from="h0@example.com"
    )
    async with Client(build_mail_server(settings)) as client:
        for tool, args in (
            ("list_emails", {}),
            ("get_email", {"message_id": "x"}),
            ("move_email", {"message_id": "x", "destination_label": "y"}),
        ):
            assert tool_error(await client.call_tool(tool, args))["error"] == "not_supported"


async def test_fake_gmail_fixture_is_isolated_per_test(gmail: FakeGmail):
    assert gmail.sent == [] and gmail.messages == {}
