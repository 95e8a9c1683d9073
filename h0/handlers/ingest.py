"""Ingest new mail: each new message GMAIL_QUERY selects becomes `Needs_Action/EMAIL_<id>.md`.

A pass asks the mail server what arrived since the last acknowledged sync (`list_new_emails`:
Gmail's history from a durable historyId, so an idle poll is one 2-unit call; see
h0.mail.incoming.sync), writes a note per message, then acknowledges the slice (`ack_new_emails`), which
labels each message GMAIL_INGESTED_LABEL (default `H0/ingested`) and only then moves the
cursor — repeated while the server says more is waiting. A backend that cannot follow
changes falls back to the query (`list_emails` minus the label, then `get_email` each), as
does a pass whose sync call fails for a reason other than auth, rate limits or the server
being away. The label is the truth either way: a labelled message never gets a second note,
whatever happened to the cursor. Order matters for crashes: note first (created only if
absent), label second; a crash in between is finished by the next pass without a second
note. Nothing is marked as read. A message whose Message-ID already has a note (a duplicate
delivery) gets the label and no new note.

Threads (h0.handlers.thread): a note records `thread_id` and, for a message that is not the
first of its thread, `thread:` — links to the notes of the messages before it (emails and the
replies H0 sent). A new inbound message marks every draft of its thread still waiting in
Drafts/ `stale: true`, with the reason; the mail server holds a stale draft at send time.

Mail is written by strangers and stays data. Header text is cleaned (h0.mail.headers: no
control character, encoded words decoded, display names quoted); the body is one fenced
code block (h0.mail.incoming.htmltext.inert_block: nothing in it renders, fetches or hides in
Obsidian, and H0's cut-off line is defused). The receiving provider's SPF/DKIM/DMARC
verdicts, when the mail tools report them, are kept as `auth: {spf, dkim, dmarc}`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from loguru import logger

from h0.config import Settings
from h0.errors import AuthRequired, Conflict, H0Error, McpUnavailable, NotSupported, RateLimited
from h0.handlers.context import HandlerContext
from h0.handlers.followup.record import record_mail
from h0.handlers.learn import remember_sent_mail
from h0.handlers.mail_history import keep_old_as_history
from h0.handlers.thread import (
    ThreadNote,
    classify,
    mark_stale_drafts,
    starts_thread,
    thread_links,
    thread_notes,
    threads_of,
)
from h0.mail.api import MailAPI
from h0.mail.compose.recipients import shown_sender
from h0.mail.headers import clean_address_header, clean_header_text, format_address, header_addresses
from h0.mail.incoming.authresults import AUTH_METHODS
from h0.mail.incoming.htmltext import defuse_cutoff, inert_block
from h0.mail.incoming.sync_query import ingest_query as _query_without_label
from h0.mail.models import EmailFull
from h0.vault import Note
from h0.vault.layout import NEEDS_ACTION

TRUNCATION_MARKER = (
    "\n\n[… H0 cut this message here: it is longer than 100,000 characters. Open it in Gmail to read the rest.]\n"
)
_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")
_VERDICT = re.compile(r"[a-z]{1,16}")
MAX_LOOKUP = 10_000  # notes one duplicate look-up returns, the whole batch together
MAX_SYNC_ROUNDS = 40  # list/ack rounds in one pass (40 × 50 messages); the next poll goes on


@dataclass
class IngestReport:
    listed: int = 0
    written: list[str] = field(default_factory=list)
    duplicates: int = 0
    failed: int = 0
    unsupported: bool = False
    mode: str = ""  # "history", "catch_up", "query" (as the last round was served)
    skipped: int = 0  # new messages gone before they could be read
    sent: int = 0  # messages the owner sent (any client), passed to the follow-ups
    history: int = 0  # older messages of a first sync or catch-up kept as history, not notes (docs/mail-in.md)

    def history_line(self, window_days: float) -> str:
        """The one line a first sync of a full mailbox says."""
        return (
            f"ingest: {len(self.written)} recent message(s) became notes; {self.history} older than "
            f"{window_days:g} days kept as history (WORK_WINDOW_DAYS), not as notes"
        )


def ingest_query(settings: Settings) -> str:
    """The Gmail query for mail not ingested yet: GMAIL_QUERY without the ingested label."""
    return _query_without_label(settings.gmail_query, settings.gmail_ingested_label)


def ingest_new_mail(ctx: HandlerContext, *, max_results: int = 50, mode: str = "sync") -> IngestReport:
    """One pass: write a note for each new message, then label it. Never raises for one message.

    `mode="query"` skips the incremental sync (benchmarks compare the two)."""
    report = IngestReport()
    if ctx.mail is None:
        report.unsupported = True
        return report
    if mode == "sync":
        try:
            _sync(ctx, ctx.mail, report, max_results)
            return report
        except NotSupported:
            pass  # this backend cannot follow changes: search instead
        except (AuthRequired, RateLimited, McpUnavailable) as error:
            ctx.audit.write("ingest_failed", "error", **ctx.error_fields(error))
            logger.error("ingest: {}", error.message)
            return report
        except H0Error as error:
            ctx.audit.write("ingest_sync_failed", "warning", **ctx.error_fields(error))
            logger.warning(
                "ingest: the incremental sync failed ({}); searching with GMAIL_QUERY this time", error.message
            )
    return ingest_by_query(ctx, report, max_results=max_results)


def _sync(ctx: HandlerContext, mail: MailAPI, report: IngestReport, max_results: int) -> None:
    label = ctx.settings.gmail_ingested_label
    for _ in range(MAX_SYNC_ROUNDS):
        batch = mail.list_new_emails(max_results)
        report.mode = batch.mode
        report.skipped += len(batch.skipped)
        emails = batch.emails
        report.listed += len(emails)
        handled: list[str] = []
        if batch.mode == "catch_up":  # a first sync (or a catch-up): history is knowledge, work is recent
            fresh = [e for e in emails if label not in e.labels]
            _, kept = keep_old_as_history(ctx, fresh, now=time.time(), origin="sync")
            if kept:
                report.history += len(kept)
                handled += [e.id for e in kept]
                old = {e.id for e in kept}
                emails = [e for e in emails if e.id not in old]
        failed: list[str] = []
        written: dict[str, str] = {}
        seen = look_up_batch([e for e in emails if label not in e.labels], ctx)
        for email in emails:
            message_id = email.id
            if label not in email.labels:
                try:
                    path = write_email_note(message_id, email, ctx, seen)
                except H0Error as error:
                    report.failed += 1
                    failed.append(message_id)
                    ctx.audit.write("ingest_failed", "error", message_id=message_id, **ctx.error_fields(error))
                    logger.error("ingest of message {} failed: {}", message_id, error.message)
                    continue
                if path is None:
                    report.duplicates += 1
                else:
                    report.written.append(path)
                    written[message_id] = path
            handled.append(message_id)
        report.sent += len(batch.sent)
        record_mail(ctx, emails, batch.sent, written, now=time.time())  # follow-ups: never raises
        remember_sent_mail(ctx, batch.sent)  # past replies for drafting: never raises
        if emails or batch.sent:
            mail.ack_new_emails(batch.cursor, handled, failed)
        if not batch.more:
            break
    if report.history:
        logger.info(report.history_line(ctx.settings.work_window_days))
        ctx.audit.write("ingest_history_kept", kept=report.history, notes=len(report.written))


def ingest_by_query(ctx: HandlerContext, report: IngestReport | None = None, *, max_results: int = 50) -> IngestReport:
    """One pass the search way: list GMAIL_QUERY minus the label, read each message, write, label."""
    report = report or IngestReport()
    report.mode = "query"
    mail = ctx.mail
    if mail is None:  # no mail server configured: nothing to read
        report.unsupported = True
        return report
    label = ctx.settings.gmail_ingested_label
    try:
        listing = mail.list_emails(ingest_query(ctx.settings), max_results)
    except NotSupported:
        report.unsupported = True
        return report
    report.listed = len(listing.emails)
    for summary in listing.emails:
        if label in summary.labels:
            continue  # the search ignored the label filter: the label is the truth
        try:
            path = _ingest_one(summary.id, mail, ctx)
        except H0Error as error:
            report.failed += 1
            ctx.audit.write("ingest_failed", "error", message_id=summary.id, **ctx.error_fields(error))
            logger.error("ingest of message {} failed: {}", summary.id, error.message)
            continue
        if path is None:
            report.duplicates += 1
        else:
            report.written.append(path)
    return report


def _ingest_one(message_id: str, mail: MailAPI, ctx: HandlerContext) -> str | None:
    email = mail.get_email(message_id)
    path = write_email_note(message_id, email, ctx)
    mail.add_label(message_id, ctx.settings.gmail_ingested_label)
    return path


@dataclass
class _Seen:
    """What a batch of new mail looks up in the vault once for all its messages (two walks, not two
    per message): the notes already holding each message, and the notes of each thread. The batch's
    own notes are added as they are written, so a later message of the batch sees the earlier ones."""

    holders: dict[str, list[str]] = field(default_factory=dict)  # duplicate filter → paths of notes matching it
    threads: dict[str, list[ThreadNote]] = field(default_factory=dict)  # thread id → its notes, oldest first

    def wrote(self, key: str, note: Note) -> None:
        self.holders.setdefault(key, []).append(note.path)
        thread_id = note.facts.thread_id
        if thread_id is not None and thread_id in self.threads:
            self.threads[thread_id] = sorted(
                [*self.threads[thread_id], classify(note)], key=lambda n: (n.when, n.note.path)
            )


def _duplicate_key(message_id: str, rfc822: str | None) -> str:
    """The filter that finds another note of this email: its Message-ID, or (mail without one) its provider id."""
    return f"rfc822_message_id:{rfc822}" if rfc822 else f"message_id:{message_id}"


def look_up_batch(emails: list[EmailFull], ctx: HandlerContext) -> _Seen:
    seen = _Seen()
    keys = {_duplicate_key(e.id, _text(e.rfc822_message_id) or None) for e in emails}
    if keys:
        found = ctx.notes.list("", sorted(keys), recursive=True, limit=MAX_LOOKUP)
        for path, got in zip(found, ctx.notes.read_many(found) if found else [], strict=True):
            if isinstance(got, H0Error):  # gone since the listing
                logger.debug("ingest: {} could not be read while looking for duplicates ({})", path, got.message)
                continue
            facts = got.facts
            for key in (f"rfc822_message_id:{facts.rfc822_message_id}", f"message_id:{facts.message_id}"):
                if key in keys:
                    seen.holders.setdefault(key, []).append(path)
    ids = {str(e.thread_id) for e in emails if not starts_thread(e.id, e.thread_id)}
    if ids:
        try:
            seen.threads = threads_of(ctx, ids)
        except H0Error as error:
            logger.warning("ingest: the threads of {} new message(s) could not be read ({})", len(ids), error.message)
    return seen


def write_email_note(message_id: str, email: EmailFull, ctx: HandlerContext, seen: _Seen | None = None) -> str | None:
    """The note for one email, unless one exists (this path, or this Message-ID elsewhere: None)."""
    rfc822 = _text(email.rfc822_message_id) or None
    path = f"{NEEDS_ACTION}/EMAIL_{_SAFE_ID.sub('_', message_id)}.md"
    # Another note for this email: a duplicate delivery (same Message-ID), or — for mail without
    # one — this message's own note, already triaged and filed by a pass that stopped before labelling.
    key = _duplicate_key(message_id, rfc822)
    holders = seen.holders.get(key, []) if seen is not None else ctx.notes.list("", key, recursive=True, limit=5)
    if any(p != path for p in holders):
        ctx.audit.write("email_duplicate_skipped", message_id=message_id, rfc822_message_id=rfc822)
        return None
    thread = _thread(email, path, ctx, seen)
    frontmatter = email_frontmatter(email, rfc822)
    if thread:
        frontmatter["thread"] = thread_links(thread, email.date)
    body = email_body(email)
    try:
        written = ctx.notes.write(path, frontmatter, body, create_only=True)
    except Conflict:
        _check_own_note(path, message_id, ctx)
        logger.info("ingest: {} was written by a pass that stopped before labelling the message", path)
        return None
    if seen is not None:
        seen.wrote(key, Note(path, frontmatter, body, written.hash))
    if thread:
        mark_stale_drafts(ctx, thread, email, path)
    subject, sender = _subject(email), clean_address_header(email.sender)
    ctx.audit.write("email_ingested", path=path, message_id=message_id, subject=subject, sender=sender)
    logger.info("✉ new mail {} — {} from {}", path, subject or "(no subject)", shown_sender(sender))
    return path


def _thread(email: EmailFull, path: str, ctx: HandlerContext, seen: _Seen | None = None) -> list[ThreadNote]:
    """The vault's notes of this email's thread (none for a message that starts one). A failed
    look-up costs the note its `thread:` links, never the note."""
    if starts_thread(email.id, email.thread_id):
        return []
    if seen is not None:
        return [n for n in seen.threads.get(str(email.thread_id), []) if n.note.path != path]
    try:
        return thread_notes(ctx, str(email.thread_id), exclude=path)
    except H0Error as error:
        logger.warning("ingest: the thread of {} could not be read ({})", path, error.message)
        return []


def _check_own_note(path: str, message_id: str, ctx: HandlerContext) -> None:
    """Something is already at this email's note path: fine if it is this email's note (a pass
    that crashed before labelling wrote it); otherwise a Conflict, so the message stays
    unlabelled and is tried again rather than labelled with no note of its own."""
    try:
        existing = ctx.notes.read(path)
    except H0Error as error:
        raise Conflict(
            f"{path} is taken by something H0 cannot read as a note ({error.message}); the email was not ingested.",
            path=path,
        ) from None
    if (existing.facts.message_id or "") != message_id:
        raise Conflict(
            f"{path} holds another note (message_id {existing.facts.message_id!r}); the email was not ingested.",
            path=path,
        )


def _text(value: Any) -> str:
    """Header text as a note keeps it: one clean line that cannot pass for H0's cut-off line."""
    return defuse_cutoff(clean_header_text(value or ""))


def _addresses(value: Any) -> list[str]:
    if not value:
        return []
    return [defuse_cutoff(format_address(name, addr)) for name, addr in header_addresses(value)]


def _subject(email: EmailFull) -> str:
    return _text(email.subject)


def _auth(email: EmailFull) -> dict[str, str] | None:
    """The provider's verdicts as reported by get_email (`authentication`), each a plain word."""
    verdicts = email.authentication
    if not isinstance(verdicts, dict):
        return None
    words = {method: str(verdicts.get(method) or "none").strip().lower() for method in AUTH_METHODS}
    return {method: word if _VERDICT.fullmatch(word) else "unknown" for method, word in words.items()}


def email_frontmatter(email: EmailFull, rfc822: str | None) -> dict[str, Any]:
    frontmatter: dict[str, Any] = {
        "type": "email",
        "status": "pending",
        "message_id": email.id,
        "rfc822_message_id": rfc822,
        "thread_id": email.thread_id,
        "from": defuse_cutoff(clean_address_header(email.sender)),
        "to": _addresses(email.to),
        "cc": _addresses(email.cc),
        "subject": _subject(email),
        "received": email.date,
        "labels": list(email.labels),
        "has_attachments": email.has_attachments,
        "attachment_names": [_text(name) for name in email.attachment_names],
    }
    auth = _auth(email)
    if auth is not None:
        frontmatter["auth"] = auth
    if email.automated:  # machine-made mail (h0.mail.incoming.automated): no reply drafted, none owed
        frontmatter["automated"] = email.automated
    return frontmatter


def email_body(email: EmailFull) -> str:
    """The body as one inert fenced block; H0's own truncation notice after it, outside."""
    body = inert_block(email.body.rstrip())
    if email.body_truncated:
        body = body + TRUNCATION_MARKER.lstrip("\n")
    return body
