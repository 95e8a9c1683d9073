"""Issue 40: a People note names its person's address under whichever key its owner uses — `email`, `emails`,
`e-mail`, `mail`, `address`, `addresses`, or among its `aliases` — and one reader says which
(h0.vault.person.person_addresses). Marked private, it makes that person's mail private for every MCP answer:
the vault server's read_note (a real `h0 mcp vault` process) and the mail server's get_email (a real
`h0 mcp gmail` process over the fake Gmail) refuse the mail of each, and show a public person's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from h0.vault.person import PERSON_ADDRESS_KEYS
from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import gmail_env

pytestmark = pytest.mark.anyio

KEYS = ("email", "emails", "e-mail", "mail", "address", "addresses", "aliases")
SECRET = "zqsessionword"


def address(key: str) -> str:
    return f"{key.replace('-', '')}.person@care.example"


def people_notes(vault_dir: Path) -> None:
    """One private People note per key, its address under that key (a list for the plural ones, beside a plain
    name among the aliases), and a public one."""
    people = vault_dir / "People"
    people.mkdir(exist_ok=True)
    for key in KEYS:
        value = (
            [f"Dr {key}", address(key)] if key == "aliases" else [address(key)] if key.endswith("s") else address(key)
        )
        (people / f"Dr {key}.md").write_text(
            f"---\n{json.dumps(key)}: {json.dumps(value)}\nprivate: true\n---\nMy therapist.\n", encoding="utf-8"
        )
    (people / "Dr Upper.md").write_text(  # a key in another case counts, as `private:` does
        f"---\nE-Mail: {address('upper')}\nPrivate: yes\n---\nMy therapist.\n", encoding="utf-8"
    )
    (people / "Sam.md").write_text("---\ne-mail: sam@team.example\n---\nA colleague.\n", encoding="utf-8")


def refused(result: Any) -> bool:
    if not result.is_error:
        return False
    error = json.loads(result.content[0].text)
    return error["error"] == "permission_denied" and error["details"]["reason"] == "private"


def test_the_keys_tested_are_the_keys_read():
    assert set(KEYS) == set(PERSON_ADDRESS_KEYS)


async def test_given_a_private_people_note_under_each_key_then_read_note_refuses_their_mail(vault_dir: Path):
    people_notes(vault_dir)
    for key in (*KEYS, "upper", "sam"):
        sender = "sam@team.example" if key == "sam" else address(key)
        (vault_dir / f"Needs_Action/EMAIL_{key}.md").write_text(
            f"---\ntype: email\nfrom: {sender}\nsubject: {SECRET}\nstatus: pending\n---\n{SECRET}\n", encoding="utf-8"
        )
    params = StdioServerParameters(
        command=H0_BIN, args=["mcp", "vault"], env=subprocess_env(VAULT_PATH=str(vault_dir), LOG_LEVEL="WARNING")
    )
    async with Client(params) as client:
        answers = {
            key: await client.call_tool("read_note", {"path": f"Needs_Action/EMAIL_{key}.md"})
            for key in (*KEYS, "upper")
        }
        public = await client.call_tool("read_note", {"path": "Needs_Action/EMAIL_sam.md"})
    assert [key for key, result in answers.items() if not refused(result)] == []
    assert not public.is_error and public.structured_content["frontmatter"]["from"] == "sam@team.example"


async def test_given_a_private_people_note_under_each_key_then_get_email_refuses_their_mail(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    people_notes(vault_dir)
    ids = {key: gmail.add_message(sender=f"Dr <{address(key)}>", subject=SECRET) for key in KEYS}
    open_id = gmail.add_message(sender="Sam <sam@team.example>", subject="lunch")
    env = gmail_env(vault_dir, gmail, token_path, LOG_LEVEL="ERROR")
    params = StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**env))
    async with Client(params) as client:
        answers = {key: await client.call_tool("get_email", {"message_id": ids[key]}) for key in KEYS}
        listed = await client.call_tool("list_emails", {"query": "in:inbox", "max_results": 50})
        public = await client.call_tool("get_email", {"message_id": open_id})
    assert [key for key, result in answers.items() if not refused(result)] == []
    assert not listed.is_error and SECRET not in json.dumps(listed.structured_content)
    assert not public.is_error and public.structured_content["subject"] == "lunch"
