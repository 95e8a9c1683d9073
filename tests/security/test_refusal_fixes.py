"""A refusal says what to do in Obsidian (issue 20, class 7).

Every reason H0 writes on a draft it gives back names a fix a person can make in the note — a
frontmatter field to change, text to delete, then approve again — and never a tool's argument
(`allow_typo_domains=true`) no note can set. Hostile and broken drafts of every kind go through
one real `h0 sweep`; then a suspected typo domain the note confirms (`confirm_domains:`) is sent.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from h0.cli import main
from tests.pipeline.harness import frontmatter, outbox, write_draft

pytestmark = pytest.mark.usefixtures("loguru_restored")

EMAIL_FROM_BANK = "---\ntype: email\nstatus: done\nfrom: ceo@bank.com\nsubject: Statement\n---\nHi\n"

# name → (frontmatter fields, body)
BROKEN = {
    "typo-domain.md": ({"to": "ann@gmial.com"}, "Hi Ann\n"),
    "lookalike.md": ({"to": "ceo@b\u0430nk.com"}, "Hi\n"),
    "posing-name.md": ({"to": "'\"ceo@bank.com\" <eve@evil.example>'"}, "Hi\n"),
    "no-recipient.md": ({"to": "''"}, "Hi\n"),
    "invisible.md": ({}, "Hi\u200b Ann\n"),
    "reference.md": ({}, "Hi\n[x]: https://evil.example\n"),
    "template.md": ({}, "[H0 draft — edit before approving]\nHi\n"),
    "empty.md": ({}, "\n"),
    "hidden-attachment.md": ({"attachments": "[.obsidian/app.json]"}, "Hi\n"),
    "log-attachment.md": ({"attachments": "[Logs/secret.json]"}, "Hi\n"),
    "missing-attachment.md": ({"attachments": "[Files/nope.pdf]"}, "Hi\n"),
    "folder-attachment.md": ({"attachments": "[Files]"}, "Hi\n"),
    "program-attachment.md": ({"attachments": "[Files/setup.exe]"}, "Hi\n"),
    "renamed-program.md": ({"attachments": "[Files/report.pdf]"}, "Hi\n"),
    "encoded-injection.md": ({"subject": "'=?utf-8?q?Hi=0D=0ABcc:_eve@evil.example?='"}, "Hi\n"),
}
TOOL_WORDS = re.compile(r"allow_typo_domains|=true|\bpass\b|create_draft|\btool\b|argument", re.IGNORECASE)
OBSIDIAN_FIX = re.compile(r"approve (it )?again|Approved/ again|frontmatter|`\w+:`|in the note", re.IGNORECASE)


@pytest.fixture
def sweep_env(monkeypatch: pytest.MonkeyPatch, vault_dir: Path):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    return monkeypatch


def test_every_reason_on_a_refused_draft_names_a_fix_in_the_note(vault_dir: Path, sweep_env, capsys):
    """Given approved drafts broken in every way H0 refuses, When swept, Then each is back in Drafts/
    with a reason that names what to change in the note and says to approve again, and none of
    them mentions a tool argument; nothing was sent."""
    (vault_dir / "Done/EMAIL_1.md").write_text(EMAIL_FROM_BANK)
    (vault_dir / "Files").mkdir()
    (vault_dir / "Files/setup.exe").write_bytes(b"MZ")
    (vault_dir / "Files/report.pdf").write_bytes(b"MZ\x90\x00 a program renamed")
    (vault_dir / "Logs").mkdir(exist_ok=True)
    (vault_dir / "Logs/secret.json").write_text("{}")
    (vault_dir / ".obsidian").mkdir(exist_ok=True)
    (vault_dir / ".obsidian/app.json").write_text("{}")
    for name, (fields, body) in BROKEN.items():
        fields = dict(fields)
        to = fields.pop("to", "bob@example.com")
        subject = fields.pop("subject", None)
        path = write_draft(vault_dir, "Approved", name, to=to, body=body, **fields)
        if subject is not None:
            path.write_text(path.read_text().replace("subject: 'Hello'", f"subject: {subject}"))
            os.utime(path, (time.time() - 60, time.time() - 60))
    assert main(["sweep"]) == 0
    capsys.readouterr()
    for name in BROKEN:
        reason = frontmatter(vault_dir, f"Drafts/{name}")["h0_error"]
        assert OBSIDIAN_FIX.search(reason), (name, reason)
        assert not TOOL_WORDS.search(reason), (name, reason)
    assert outbox(vault_dir) == []


def test_given_a_typo_domain_the_note_confirms_then_it_is_sent(vault_dir: Path, sweep_env, capsys):
    """Given a draft to ann@gmial.com, When swept, Then it is refused saying to correct the address or
    add `confirm_domains: [gmial.com]`; When the note says so and is approved again, Then it is sent
    to exactly that address."""
    write_draft(vault_dir, "Approved", "typo.md", to="ann@gmial.com")
    assert main(["sweep"]) == 0
    reason = frontmatter(vault_dir, "Drafts/typo.md")["h0_error"]
    assert "gmail.com" in reason and "confirm_domains: [gmial.com]" in reason
    path = vault_dir / "Drafts/typo.md"
    path.write_text(path.read_text().replace("---\n", "---\nconfirm_domains: gmial.com\n", 1))
    os.utime(path, (time.time() - 60, time.time() - 60))
    os.rename(path, vault_dir / "Approved/typo.md")
    assert main(["sweep"]) == 0
    (message,) = outbox(vault_dir)
    assert message["To"] == "ann@gmial.com"


def test_a_confirmation_covers_only_the_domain_it_names(vault_dir: Path, sweep_env, capsys):
    """Given `confirm_domains: [gmial.com]`, When the draft also writes to hotmial.com, Then it is still
    refused for hotmial.com."""
    write_draft(vault_dir, "Approved", "two.md", to="'ann@gmial.com, bo@hotmial.com'", confirm_domains="[gmial.com]")
    assert main(["sweep"]) == 0
    reason = frontmatter(vault_dir, "Drafts/two.md")["h0_error"]
    assert "hotmial.com" in reason and outbox(vault_dir) == []
