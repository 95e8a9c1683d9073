"""A reply goes to everyone who was on the email but the owner (issue 24): the sender in To, the rest
in Cc, and the draft says so below its cut-off line; the owner's own addresses are never copied."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import load_settings
from h0.handlers.context import HandlerContext
from h0.handlers.reply import reply_all
from h0.handlers.triage import triage_emails
from h0.triage import Triager, ensure_rules_file
from h0.vault import Vault
from h0.vault.model import note_facts

EMAIL = """---
type: email
status: pending
message_id: m-9
thread_id: t-9
from: Dana Rivera <dana@example.com>
to: [Me <me@example.com>, Lee <lee@example.com>]
cc: [Sam <sam@example.com>, me@example.com]
subject: Could we meet on Friday?
---
Could we meet on Friday at 10:00?
"""


@pytest.mark.parametrize(
    "owner, cc",
    [
        (frozenset({"me@example.com"}), ["lee@example.com", "sam@example.com"]),
        (frozenset(), ["sam@example.com", "me@example.com"]),  # owner unknown: only the Cc line is kept, as written
    ],
)
def test_who_else_gets_the_reply(owner, cc):
    frontmatter = {
        "to": ["Me <me@example.com>", "Lee <lee@example.com>"],
        "cc": ["Sam <sam@example.com>", "me@example.com"],
    }
    got, sentence = reply_all(note_facts("Needs_Action/e.md", frontmatter), "dana@example.com", owner)
    assert got == cc and sentence.startswith("Replying to all: Cc ")
    assert ("OWNER_EMAILS" in sentence) is (not owner)


def test_given_an_email_with_people_on_cc_then_the_draft_keeps_them_and_not_the_owner(vault_dir: Path):
    (vault_dir / "Needs_Action/EMAIL_m-9.md").write_text(EMAIL)
    ensure_rules_file(vault_dir)
    settings = load_settings(vault_path=vault_dir, owner_emails="me@example.com")
    ctx = HandlerContext.local(settings, Vault(vault_dir), triager=Triager.from_settings(settings, vault_dir))
    triage_emails(["Needs_Action/EMAIL_m-9.md"], ctx)
    draft = Vault(vault_dir).read_note("Drafts/REPLY_EMAIL_m-9.md")
    assert draft.frontmatter["to"] == "dana@example.com"
    assert draft.frontmatter["cc"] == "lee@example.com, sam@example.com"
    assert "Replying to all: Cc lee@example.com, sam@example.com" in draft.body.split("%% h0: not sent below %%")[1]
