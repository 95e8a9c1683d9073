"""Issue 40: the mail server reads `.h0/private-folders` (the record of PRIVATE_FOLDERS) at each call, as the
vault server does (h0.mcp.gate_now.GateNow): one real `h0 mcp gmail` process over the fake Gmail, when the
folder that holds an email's note is added to the record while it runs, refuses that email and hides its
thread from the next call on — no restart — and shows them again when the line is removed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import gmail_env

pytestmark = pytest.mark.anyio

SECRET = "zqhealthword"  # in the private thread's subjects and bodies
OPEN = "openlunchword"


def text_of(result: Any) -> str:
    return "\n".join([*(getattr(c, "text", "") for c in result.content), json.dumps(result.structured_content or {})])


async def test_given_a_folder_recorded_private_while_the_mail_server_runs_then_its_thread_is_hidden_at_the_next_call(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """Given an email whose note is in Health/ and a stranger's reply in its thread (no note of its own), shown
    by a running mail server; when the owner adds Health to `.h0/private-folders`, then the next list_emails
    leaves both out and get_email refuses both as private; when the line is removed, both are shown again."""
    first = gmail.add_message(sender="Doc <doc@clinic.example>", subject=f"{SECRET} results", thread_id="TH")
    reply = gmail.add_message(sender="Eve <eve@evil.example>", subject=f"Re: {SECRET} results", thread_id="TH")
    gmail.add_message(sender="Sam <sam@team.example>", subject=f"{OPEN} plans")
    (vault_dir / ".h0").mkdir(exist_ok=True)
    record = vault_dir / ".h0/private-folders"
    record.write_text("# private folders\nDiary\n", encoding="utf-8")
    (vault_dir / "Health").mkdir()
    (vault_dir / f"Health/EMAIL_{first}.md").write_text(
        f"---\ntype: email\nmessage_id: {first}\nthread_id: TH\nsubject: results\n---\nResults.\n", encoding="utf-8"
    )
    env = gmail_env(vault_dir, gmail, token_path, LOG_LEVEL="ERROR")
    params = StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**env))

    async def every_answer(client: Client) -> tuple[str, list[Any]]:
        listed = await client.call_tool("list_emails", {"query": "in:inbox", "max_results": 50})
        assert not listed.is_error and OPEN in text_of(listed), text_of(listed)
        return text_of(listed), [await client.call_tool("get_email", {"message_id": m}) for m in (first, reply)]

    async with Client(params) as client:
        listed, got = await every_answer(client)
        assert SECRET in listed and all(not r.is_error and SECRET in text_of(r) for r in got)

        record.write_text("# private folders\nDiary\nHealth\n", encoding="utf-8")
        listed, got = await every_answer(client)
        assert SECRET not in listed
        for result in got:
            error = json.loads(result.content[0].text)
            assert result.is_error and error["error"] == "permission_denied", text_of(result)
            assert error["details"]["reason"] == "private" and SECRET not in text_of(result)

        record.write_text("# private folders\nDiary\n", encoding="utf-8")
        listed, got = await every_answer(client)
        assert SECRET in listed and all(not r.is_error and SECRET in text_of(r) for r in got)
