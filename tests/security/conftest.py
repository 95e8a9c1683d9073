"""Shared fixtures of the security tests: the mail service as the daemon's child sees it, the
handlers' context around it, and the human's act of approving a drafted reply."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.handlers.context import HandlerContext
from h0.mail.api import MailAPI
from h0.mail.service import MailService
from h0.triage import Triager, ensure_rules_file
from h0.vault import Vault
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import gmail_settings_for
from tests.pipeline.harness import edit_template


@pytest.fixture
def mail(vault_dir: Path, gmail: FakeGmail, token_path: Path):
    """The mail service as the daemon's own child sees it (it may vouch that a note was moved in)."""
    service = MailService(
        gmail_settings_for(vault_dir, gmail, token_path, allow_unapproved_send=False), trusted_caller=True
    )
    yield service
    service.close()


def handler_context(vault_dir: Path, mail: MailAPI) -> HandlerContext:
    ensure_rules_file(vault_dir)
    settings_ = load_settings(vault_path=vault_dir)
    return HandlerContext.local(
        settings_, Vault(vault_dir), mail=mail, triager=Triager.from_settings(settings_, vault_dir)
    )


def approve_draft(vault_dir: Path, draft: str) -> str:
    """The human's edit of H0's template line (and the rules-mode briefing: the human's answer instead),
    then the move into Approved/. Returns the note's hash."""
    path = vault_dir / draft
    name = Path(draft).name
    edit_template(vault_dir, name)
    os.rename(path, vault_dir / "Approved" / name)
    return Vault(vault_dir).read_note(f"Approved/{name}").hash
