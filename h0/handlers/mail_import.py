"""`h0 import`: mail from files into the vault, exactly as ingest writes it.

A message from someone else becomes a `Needs_Action/` note through ingest's own writer (the same
duplicate check, thread links and hostile-input rules), so triage, drafting and approval run on it
as on mail H0 fetched. A message the owner sent — the owner's identity says so from the export
(h0.mail.owner.import_evidence: a Sent mailbox or folder, or Takeout's Sent label, and no trace of
arriving from outside; never a From: header alone) — is the owner's own writing: it becomes a note in
`Done/` with `type: sent_email` (same fields), recorded as the owner's, which drafting learns the owner's
voice from, never a task.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from loguru import logger

from h0.errors import Conflict, H0Error
from h0.handlers.context import HandlerContext
from h0.handlers.ingest import email_body, email_frontmatter, write_email_note
from h0.mail.email_views import email_full
from h0.mail.importer import FileMessage, Problem
from h0.mail.models import EmailFull
from h0.mail.owner import Observed, OwnerAuthority, import_evidence, message_key, single_sender
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
    report = ImportReport()
    owners: list[Observed] = []  # recorded at the end, in one transaction (a resume records them again)
    try:
        _import(items, ctx, report, owners)
    finally:
        OwnerAuthority(ctx.state_database()).record(owners)
    return report


def _import(
    items: Iterable[FileMessage | Problem], ctx: HandlerContext, report: ImportReport, owners: list[Observed]
) -> None:
    for item in items:
        if isinstance(item, Problem):
            report.problems.append(item)
            continue
        try:
            email = email_full(item.fetched)
            evidence = import_evidence(item.source, item.fetched.headers)
            if evidence is not None:
                path = _write_sent(email, ctx)
                sender = single_sender(item.fetched.headers) or ""
                key = message_key(email.rfc822_message_id, email.id)
                owners.append(Observed(key, evidence, item.source, sender, f"{DONE}/SENT_{email.id}.md"))
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


def _write_sent(email: EmailFull, ctx: HandlerContext) -> str | None:
    frontmatter = {**email_frontmatter(email, email.rfc822_message_id or None), "type": "sent_email", "status": "sent"}
    path = f"{DONE}/SENT_{email.id}.md"
    try:
        ctx.notes.write(path, frontmatter, email_body(email), create_only=True)
    except Conflict:
        return None
    return path
