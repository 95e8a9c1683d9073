"""The first sync of a full mailbox (issue 30): history is knowledge, work is recent. Given a Gmail inbox
with years of unread mail, the first ingest turns only the mail of the last WORK_WINDOW_DAYS into
notes, keeps the older mail as history (labelled as ingested, so it is never fetched again), and says
so in one line. Runs against the fake Gmail through the real client, service and ingest handler."""

from __future__ import annotations

import time
from pathlib import Path

from loguru import logger

from h0.handlers.context import HandlerContext
from h0.handlers.ingest import ingest_new_mail
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.state.history import MailHistory
from h0.vault import AuditLog, Vault
from tests.fakes.fake_gmail import FakeGmail

DAY_MS = 86_400_000


def test_a_first_sync_of_years_of_unread_mail_makes_notes_of_the_recent_only(
    vault_dir: Path, service: MailService, gmail: FakeGmail
):
    now_ms = int(time.time() * 1000)
    old = [gmail.add_message(subject=f"old {i}", date_ms=now_ms - (100 + 90 * i) * DAY_MS) for i in range(8)]
    recent = [gmail.add_message(subject=f"recent {i}", date_ms=now_ms - (1 + i) * DAY_MS) for i in range(3)]
    ctx = HandlerContext.local(
        service.settings, Vault(vault_dir), mail=LocalMail(service), audit=AuditLog(vault_dir / "Logs", "h0")
    )
    said: list[str] = []
    sink = logger.add(lambda message: said.append(str(message)), level="INFO", format="{message}")
    try:
        report = ingest_new_mail(ctx)
    finally:
        logger.remove(sink)
    assert report.mode == "catch_up" and report.failed == 0
    assert sorted(p.name for p in (vault_dir / "Needs_Action").glob("EMAIL_*.md")) == sorted(
        f"EMAIL_{m}.md" for m in recent
    )
    assert report.history == len(old)
    line = report.history_line(30)
    assert (
        line
        == "ingest: 3 recent message(s) became notes; 8 older than 30 days kept as history (WORK_WINDOW_DAYS), not as notes"
    )
    assert any(line in entry for entry in said)
    label = gmail.label_named("H0/ingested")
    assert label is not None and all(label["id"] in gmail.message(m).labels for m in old + recent)
    kept = MailHistory(service.state).counts()
    assert kept["messages"] == len(old)
    again = ingest_new_mail(ctx)  # labelled: never fetched as new again
    assert again.written == [] and again.history == 0
