"""`h0 import`: mail from files into the vault, exactly as ingest writes it.

A message from someone else becomes a `Needs_Action/` note through ingest's own writer (the same
duplicate check, thread links and hostile-input rules), so triage, drafting and approval run on it
as on mail H0 fetched. A message the owner sent (From one of the owner's addresses: OWNER_EMAILS,
SMTP_FROM, SMTP_USER, IMAP_USER) is the owner's own writing: it becomes a note in `Done/` with
`type: sent_email` (same fields), which drafting learns the owner's voice from, never a task.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from email.utils import getaddresses

from loguru import logger

from h0.errors import Conflict, H0Error
from h0.followup.threads import owner_addresses
from h0.handlers.context import HandlerContext
from h0.handlers.ingest import email_body, email_frontmatter, write_email_note
from h0.mail.email_views import email_full
from h0.mail.importer import FileMessage, Problem
from h0.mail.models import EmailFull
from h0.vault.layout import DONE


@dataclass(slots=True)
class ImportReport:
    written: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    duplicates: int = 0
    problems: list[Problem] = field(default_factory=list)

    def line(self) -> str:
        parts = [f"{len(self.written)} new in Needs_Action/"]
        if self.sent:
            parts.append(f"{len(self.sent)} of yours filed in Done/ as sent mail")
        if self.duplicates:
            parts.append(f"{self.duplicates} already in the vault")
        if self.problems:
            parts.append(f"{len(self.problems)} not imported")
        return "h0 import: " + ", ".join(parts)


def import_messages(items: Iterable[FileMessage | Problem], ctx: HandlerContext) -> ImportReport:
    owner = owner_addresses(ctx.settings)
    report = ImportReport()
    for item in items:
        if isinstance(item, Problem):
            report.problems.append(item)
            continue
        try:
            email = email_full(item.fetched)
            if _from_owner(email, owner):
                path = _write_sent(email, ctx)
                (report.sent.append(path) if path else None)
                report.duplicates += path is None
                continue
            path = write_email_note(email.id, email, ctx)
        except H0Error as error:
            report.problems.append(Problem(item.source, error.message))
            logger.warning("h0 import: {} not imported: {}", item.source, error.message)
            continue
        if path is None:
            report.duplicates += 1
        else:
            report.written.append(path)
    return report


def _from_owner(email: EmailFull, owner: frozenset[str]) -> bool:
    return any(addr.lower() in owner for _, addr in getaddresses([email.sender or ""]))


def _write_sent(email: EmailFull, ctx: HandlerContext) -> str | None:
    frontmatter = {**email_frontmatter(email, email.rfc822_message_id or None), "type": "sent_email", "status": "sent"}
    path = f"{DONE}/SENT_{email.id}.md"
    try:
        ctx.notes.write(path, frontmatter, email_body(email), create_only=True)
    except Conflict:
        return None
    return path
