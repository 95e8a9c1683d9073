"""Fixtures for the follow-up tests: a clock the tests move (no sleeping for days), the real mail
service against the fake Gmail, and a handler context with H0's state database."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from h0.config import load_settings
from h0.handlers.context import HandlerContext
from h0.handlers.followup.find import find_followup_notes
from h0.handlers.followup.follow_up import follow_up
from h0.handlers.followup.pass_report import FollowupReport
from h0.handlers.ingest import IngestReport, ingest_new_mail
from h0.handlers.triage import triage_email
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.state import StateDB
from h0.triage import Triager, ensure_rules_file
from h0.vault import Vault
from h0.vault.last_change import Arrival
from tests.mail.conftest import gmail_settings_for

DAY = 86400.0
OWNER = "h0.tester@gmail.com"  # the fake Gmail's account
DANA = "Dana Rivera <dana@example.com>"


class Clock:
    """`now` for the follow-up pass: starts at the real time, moves only when a test says so."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, *, days: float = 0.0, seconds: float = 0.0) -> float:
        self.now += days * DAY + seconds
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def mail(vault_dir: Path, gmail, token_path: Path) -> Iterator[MailService]:
    # The daemon's own mail server: it may vouch that a note was moved into Approved/.
    service = MailService(
        gmail_settings_for(vault_dir, gmail, token_path, allow_unapproved_send=False), trusted_caller=True
    )
    yield service
    service.close()


def context(vault_dir: Path, service: MailService | None, **overrides: Any) -> HandlerContext:
    ensure_rules_file(vault_dir)
    settings = service.settings if service is not None else load_settings(vault_path=vault_dir, **overrides)
    if overrides and service is not None:
        settings = settings.model_copy(update=overrides)
    return HandlerContext.local(
        settings,
        Vault(vault_dir),
        mail=LocalMail(service) if service else None,
        triager=Triager.from_settings(settings, vault_dir),
        state_db=StateDB.for_vault(vault_dir, settings.h0_state_dir),
        arrival=lambda path: Arrival("moved"),
    )


@pytest.fixture
def ctx(vault_dir: Path, mail: MailService) -> HandlerContext:
    return context(vault_dir, mail)


def ingest(ctx: HandlerContext) -> IngestReport:
    return ingest_new_mail(ctx)


def synced(ctx: HandlerContext, gmail) -> None:
    """The first run's catch-up is over: from here on the sync follows the history (and sent mail)."""
    gmail.add_message(subject="before H0", body="An old newsletter.", sender="News <news@example.org>")
    ingest_new_mail(ctx)


def follow(ctx: HandlerContext, now: float) -> FollowupReport:
    return follow_up(ctx, find_followup_notes(Vault(ctx.paths.root)), now=now)


def triage(ctx: HandlerContext, path: str) -> str:
    return triage_email(path, ctx).detail


def fm(vault_dir: Path, rel: str) -> dict[str, Any]:
    return Vault(vault_dir).read_note(rel).frontmatter


def names(vault_dir: Path, folder: str, prefix: str = "") -> list[str]:
    return sorted(p.name for p in (vault_dir / folder).glob(f"{prefix}*.md"))
