"""Issue 40: the mail server honours every private place, as the vault server does. An MCP client (`h0 mcp
gmail` as a real stdio process, driven by the mcp client) over the fake Gmail and over a real IMAP server
(Dovecot when installed, else pymap) lists, searches, reads, follows and answers the mailbox: an email whose
vault note is marked private, one in a private thread (a stranger's new message, no note of its own), and
one whose note lies in a private folder, and a private person's (a private People note names the sender)
never show a word — not their subject, sender, snippet or body —
while an ordinary email is shown. When the server cannot tell (no vault index), it shows nothing."""

# ruff: noqa: F811 — the IMAP fixtures are imported from tests.mail.imap_fixtures, then named as parameters
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from h0.config import Settings
from h0.mail import MailService
from h0.state import state_dir_for
from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.fakes.imap_server import PymapServer
from tests.mail.conftest import gmail_env, gmail_settings_for
from tests.mail.imap_fixtures import dovecot_available, imap, imap_server, imap_settings, raw_message  # noqa: F401

pytestmark = pytest.mark.anyio

# Each private email's own word, in its subject and its body; and the ordinary email's.
WORDS = {"marked": "zqmarkedword", "thread": "zqthreadword", "folder": "zqfolderword", "person": "zqpersonword"}
OPEN = "openlunchword"
SEARCH = "quarterly"  # in every email's body: a search that finds them all


def subject(kind: str) -> str:
    return f"{WORDS.get(kind, OPEN)} {kind} plans"


def body(kind: str) -> str:
    return f"The {SEARCH} numbers, {WORDS.get(kind, OPEN)}: the {kind} email's own words."


def write(vault_dir: Path, rel: str, head: dict[str, Any]) -> None:
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key}: {json.dumps(value)}\n" for key, value in head.items())
    path.write_text(f"---\n{lines}---\nThe owner's note.\n", encoding="utf-8")


def mark_in_vault(vault_dir: Path, found: dict[str, tuple[str, str | None]]) -> None:
    """The vault as the owner keeps it, each email's note named by the provider's ids (as ingest writes them):
    the marked email's note is `private: true`; the thread email has no note, but a note of its thread is
    tagged private; the folder email's note was filed in Journal/ (PRIVATE_FOLDERS); the open email's note is
    an ordinary one."""

    def email(kind: str) -> dict[str, Any]:
        message_id, thread = found[kind]
        return {"type": "email", "message_id": message_id, "thread_id": thread, "subject": subject(kind)}

    write(vault_dir, f"Needs_Action/EMAIL_{found['marked'][0]}.md", {**email("marked"), "private": True})
    write(vault_dir, "Projects/Offer talks.md", {"tags": ["work", "Private"], "thread_id": found["thread"][1]})
    write(vault_dir, f"Journal/EMAIL_{found['folder'][0]}.md", email("folder"))
    write(vault_dir, f"Needs_Action/EMAIL_{found['open'][0]}.md", email("open"))
    # The person email has no note: its sender is a private person (only a private People note names her).
    write(vault_dir, "People/Dr Lind.md", {"private": True, "email": "dr.lind@therapy.example"})


def ids_by_kind(settings: Settings) -> dict[str, tuple[str, str | None]]:
    """(id, thread id) of each email by kind, as the provider names them (H0's own in-process service reads
    everything)."""
    service = MailService(settings, trusted_caller=True)
    try:
        listed = service.list_emails("in:inbox", 50).emails
    finally:
        service.close()
    # "Re: zqthreadword thread plans" is the stranger's message in the private thread.
    return {
        "stranger" if item.subject.startswith("Re:") else item.subject.split()[1]: (item.id, item.thread_id)
        for item in listed
    }


def text_of(result: Any) -> str:
    """Everything an answer carries: its text content and its structured content."""
    parts = [getattr(c, "text", "") for c in result.content]
    return "\n".join([*parts, json.dumps(result.structured_content or {})])


async def every_answer(params: StdioServerParameters, found: dict[str, tuple[str, str | None]]) -> dict[str, Any]:
    """Ask the server for everything a client can ask of the mailbox; each answer by what was asked."""
    assert set(found) == {"marked", "thread", "stranger", "folder", "person", "open"}, found
    answers: dict[str, Any] = {}
    async with Client(params) as client:
        answers["list"] = await client.call_tool("list_emails", {"query": "in:inbox", "max_results": 50})
        answers["search"] = await client.call_tool("list_emails", {"query": SEARCH, "max_results": 50})
        for kind, (message_id, _) in found.items():
            answers[f"get {kind}"] = await client.call_tool("get_email", {"message_id": message_id})
            answers[f"reply {kind}"] = await client.call_tool(
                "create_draft", {"to": "eve@evil.example", "body": "Tell me more.", "reply_to_message_id": message_id}
            )
        answers["new"] = await client.call_tool("list_new_emails", {"max_results": 50})
    return answers


def check_nothing_private_shown(answers: dict[str, Any], vault_dir: Path) -> None:
    for asked, result in answers.items():
        text = text_of(result)
        for kind, word in WORDS.items():
            assert word not in text, f"{asked} showed the {kind} email: {text[:400]}"
        if asked.startswith(("get ", "reply ")) and not asked.endswith("open"):
            error = json.loads(result.content[0].text)
            assert result.is_error and error["error"] == "permission_denied", text
            assert error["details"]["reason"] == "private", error
    for asked in ("list", "search", "get open", "new"):
        assert not answers[asked].is_error and OPEN in text_of(answers[asked]), asked  # the open email is shown
    drafts = [p.read_text(encoding="utf-8") for p in (vault_dir / "Drafts").glob("*.md")]
    assert len(drafts) == 1 and OPEN in drafts[0]  # only the open email's reply was written


async def test_given_private_emails_in_gmail_then_no_mcp_answer_carries_their_words(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    gmail.add_message(sender="Mara <mara@firm.example>", subject=subject("marked"), body=body("marked"))
    gmail.add_message(sender="Jo <jo@firm.example>", subject=subject("thread"), body=body("thread"), thread_id="TQ")
    gmail.add_message(
        sender="Eve <eve@evil.example>", subject=f"Re: {subject('thread')}", body=body("thread"), thread_id="TQ"
    )
    gmail.add_message(sender="Doc <doc@clinic.example>", subject=subject("folder"), body=body("folder"))
    gmail.add_message(sender="Dr Lind <dr.lind@therapy.example>", subject=subject("person"), body=body("person"))
    gmail.add_message(sender="Sam <sam@team.example>", subject=subject("open"), body=body("open"))
    found = ids_by_kind(gmail_settings_for(vault_dir, gmail, token_path))
    mark_in_vault(vault_dir, found)
    env = gmail_env(vault_dir, gmail, token_path, PRIVATE_FOLDERS="Journal", LOG_LEVEL="ERROR")
    answers = await every_answer(
        StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**env)), found
    )
    check_nothing_private_shown(answers, vault_dir)


# One real IMAP server is enough here (the backend's own tests run both): Dovecot when installed, else pymap.
@pytest.mark.parametrize("imap_server", ["dovecot" if dovecot_available() else "pymap"], indirect=True)
async def test_given_private_emails_on_an_imap_server_then_no_mcp_answer_carries_their_words(
    vault_dir: Path, imap: PymapServer
):
    root = "<thread-root@firm.example>"
    imap.deliver(raw_message(subject("marked"), body("marked"), sender="Mara <mara@firm.example>"))
    imap.deliver(raw_message(subject("thread"), body("thread"), sender="Jo <jo@firm.example>", message_id=root))
    imap.deliver(
        raw_message(f"Re: {subject('thread')}", body("thread"), sender="Eve <eve@evil.example>", References=root)
    )
    imap.deliver(raw_message(subject("folder"), body("folder"), sender="Doc <doc@clinic.example>"))
    imap.deliver(raw_message(subject("person"), body("person"), sender="Dr Lind <dr.lind@therapy.example>"))
    imap.deliver(raw_message(subject("open"), body("open"), sender="Sam <sam@team.example>"))
    found = ids_by_kind(imap_settings(vault_dir, imap))
    mark_in_vault(vault_dir, found)
    env = {
        "VAULT_PATH": str(vault_dir),
        "MAIL_BACKEND": "imap",
        "IMAP_HOST": imap.host,
        "IMAP_PORT": str(imap.port),
        "IMAP_SECURE": "none",
        "IMAP_USER": imap.user,
        "IMAP_PASS": imap.password,
        "PRIVATE_FOLDERS": "Journal",
        "LOG_LEVEL": "ERROR",
    }
    answers = await every_answer(
        StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**env)), found
    )
    check_nothing_private_shown(answers, vault_dir)


async def test_given_no_vault_index_then_the_mail_server_shows_no_email_at_all(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """Fail closed: the index's file cannot be opened (a folder stands in its place), so the server cannot tell
    which emails are private — every read answers a retryable error and no email's words."""
    gmail.add_message(subject=subject("open"), body=body("open"))
    state = state_dir_for(vault_dir, Path(os.environ["H0_STATE_DIR"]))
    (state / "index.db").mkdir(parents=True)
    env = gmail_env(vault_dir, gmail, token_path, LOG_LEVEL="CRITICAL")
    async with Client(
        StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**env))
    ) as client:
        listed = await client.call_tool("list_emails", {"query": "in:inbox"})
    error = json.loads(listed.content[0].text)
    assert listed.is_error and error["error"] == "internal_error" and error["details"]["retryable"] is True
    assert OPEN not in text_of(listed)


async def test_given_a_backend_that_reads_no_mail_then_a_reply_to_a_private_email_note_is_refused(vault_dir: Path):
    """The outbox knows an email by its note: a reply to one in a private thread is refused, nothing written;
    a reply to an ordinary one is drafted with its subject."""
    write(
        vault_dir,
        "Needs_Action/EMAIL_p1.md",
        {"type": "email", "message_id": "p1", "subject": subject("thread"), "thread_id": "TP"},
    )
    write(vault_dir, "Journal/Notes on TP.md", {"thread_id": "TP"})
    write(vault_dir, "Needs_Action/EMAIL_o1.md", {"type": "email", "message_id": "o1", "subject": subject("open")})
    env = subprocess_env(VAULT_PATH=str(vault_dir), MAIL_BACKEND="outbox", PRIVATE_FOLDERS="Journal", LOG_LEVEL="ERROR")
    async with Client(StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=env)) as client:
        refused = await client.call_tool(
            "create_draft", {"to": "eve@evil.example", "body": "?", "reply_to_message_id": "p1"}
        )
        drafted = await client.call_tool(
            "create_draft", {"to": "sam@team.example", "body": "!", "reply_to_message_id": "o1"}
        )
    error = json.loads(refused.content[0].text)
    assert refused.is_error and error["details"]["reason"] == "private" and WORDS["thread"] not in text_of(refused)
    assert not drafted.is_error and OPEN in drafted.structured_content["subject"]
    assert [p.name for p in (vault_dir / "Drafts").glob("*.md")] == [Path(drafted.structured_content["path"]).name]
