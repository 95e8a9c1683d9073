"""Ingest new mail: each unread inbox message becomes `Needs_Action/EMAIL_<id>.md`.

What was ingested is tracked in the mailbox itself — H0 puts a label (GMAIL_INGESTED_LABEL,
default `H0/ingested`) on each message after its note is written and leaves it out of the
next query — so no local state can drift. Order matters for crashes: note first (created
only if absent), label second; a crash in between is finished by the next pass without a
second note. Nothing is marked as read. A message whose Message-ID already has a note (a
duplicate delivery) gets the label and no new note.

Mail is written by strangers and stays data. Header text is cleaned (h0.mail.headers: no
control character, encoded words decoded, display names quoted); the body is one fenced
code block (h0.mail.htmltext.inert_block: nothing in it renders, fetches or hides in
Obsidian, and H0's cut-off line is defused). The receiving provider's SPF/DKIM/DMARC
verdicts, when the mail tools report them, are kept as `auth: {spf, dkim, dmarc}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.utils import getaddresses
from typing import Any

from loguru import logger

from h0.errors import Conflict, H0Error, NotFound, NotSupported
from h0.handlers.context import HandlerContext
from h0.mail.headers import AUTH_METHODS, clean_address_header, clean_header_text, format_address
from h0.mail.htmltext import defuse_cutoff, inert_block
from h0.vault.layout import NEEDS_ACTION

TRUNCATION_MARKER = "\n\n[… H0 cut this message here: it is longer than 100,000 characters. Open it in Gmail to read the rest.]\n"
_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")
_VERDICT = re.compile(r"[a-z]{1,16}")


@dataclass
class IngestReport:
    listed: int = 0
    written: list[str] = field(default_factory=list)
    duplicates: int = 0
    failed: int = 0
    unsupported: bool = False


def ingest_query(settings: Any) -> str:
    label = settings.gmail_ingested_label
    quoted = f'"{label}"' if " " in label else label
    return f"{settings.gmail_query} -label:{quoted}".strip()


def ingest_new_mail(ctx: HandlerContext, *, max_results: int = 50) -> IngestReport:
    """One pass: list new mail, write a note per message, label it. Never raises for one message."""
    report = IngestReport()
    if ctx.mail is None:
        report.unsupported = True
        return report
    label = ctx.settings.gmail_ingested_label
    try:
        listing = ctx.mail.call_tool("list_emails", {"query": ingest_query(ctx.settings), "max_results": max_results})
    except NotSupported:
        report.unsupported = True
        return report
    emails = listing.get("emails", [])
    report.listed = len(emails)
    for summary in emails:
        if label in (summary.get("labels") or []):
            continue  # the search ignored the label filter: the label is the truth
        try:
            path = _ingest_one(summary["id"], ctx)
        except H0Error as error:
            report.failed += 1
            ctx.audit.write("ingest_failed", "error", message_id=summary.get("id"), **ctx.error_fields(error))
            logger.error("ingest of message {} failed: {}", summary.get("id"), error.message)
            continue
        if path is None:
            report.duplicates += 1
        else:
            report.written.append(path)
    return report


def _ingest_one(message_id: str, ctx: HandlerContext) -> str | None:
    email = ctx.mail.call_tool("get_email", {"message_id": message_id})
    rfc822 = _text(email.get("rfc822_message_id")) or None
    path = f"{NEEDS_ACTION}/EMAIL_{_SAFE_ID.sub('_', message_id)}.md"
    duplicate = bool(rfc822) and _already_have(rfc822, path, ctx)
    if not duplicate:
        try:
            ctx.notes.write(path, _frontmatter(email, rfc822), _body(email), create_only=True)
        except Conflict:
            pass  # written by a pass that crashed before labelling
    ctx.mail.call_tool("add_label", {"message_id": message_id, "label_name": ctx.settings.gmail_ingested_label})
    if duplicate:
        ctx.audit.write("email_duplicate_skipped", message_id=message_id, rfc822_message_id=rfc822)
        return None
    subject, sender = _subject(email), clean_address_header(email.get("sender"))
    ctx.audit.write("email_ingested", path=path, message_id=message_id, subject=subject, sender=sender)
    logger.info("✉ new mail {} — {} from {}", path, subject or "(no subject)", sender)
    return path


def _already_have(rfc822: str, path: str, ctx: HandlerContext) -> bool:
    """True if a note for this Message-ID exists under another name (a duplicate delivery)."""
    tools = ctx.notes.tools
    flt = f"rfc822_message_id:{rfc822}"
    try:
        if tools is not None:
            found = tools.call_tool(
                "list_notes", {"directory": "", "filter": flt, "recursive": True, "limit": 5},
                fallback=lambda: {"notes": [{"path": n.path} for n in ctx.notes.vault.list_notes("", flt, recursive=True).notes]},
            )
            paths = [n["path"] for n in found.get("notes", [])]
        else:
            paths = [n.path for n in ctx.notes.vault.list_notes("", flt, recursive=True).notes]
    except NotFound:
        return False
    return any(p != path for p in paths)


def _text(value: Any) -> str:
    """Header text as a note keeps it: one clean line that cannot pass for H0's cut-off line."""
    return defuse_cutoff(clean_header_text(value or ""))


def _addresses(value: Any) -> list[str]:
    if not value:
        return []
    return [defuse_cutoff(format_address(name, addr))
            for name, addr in getaddresses([clean_address_header(value)]) if addr]


def _subject(email: dict[str, Any]) -> str:
    return _text(email.get("subject"))


def _auth(email: dict[str, Any]) -> dict[str, str] | None:
    """The provider's verdicts as reported by get_email (`authentication`), each a plain word."""
    verdicts = email.get("authentication")
    if not isinstance(verdicts, dict):
        return None
    words = {method: str(verdicts.get(method) or "none").strip().lower() for method in AUTH_METHODS}
    return {method: word if _VERDICT.fullmatch(word) else "unknown" for method, word in words.items()}


def _frontmatter(email: dict[str, Any], rfc822: str | None) -> dict[str, Any]:
    frontmatter = {
        "type": "email",
        "status": "pending",
        "message_id": email.get("id"),
        "rfc822_message_id": rfc822,
        "thread_id": email.get("thread_id"),
        "from": defuse_cutoff(clean_address_header(email.get("sender"))),
        "to": _addresses(email.get("to")),
        "cc": _addresses(email.get("cc")),
        "subject": _subject(email),
        "received": email.get("date"),
        "labels": list(email.get("labels") or []),
        "has_attachments": bool(email.get("has_attachments")),
        "attachment_names": [_text(name) for name in email.get("attachment_names") or []],
    }
    auth = _auth(email)
    if auth is not None:
        frontmatter["auth"] = auth
    return frontmatter


def _body(email: dict[str, Any]) -> str:
    """The body as one inert fenced block; H0's own truncation notice after it, outside."""
    body = inert_block((email.get("body") or "").rstrip())
    if email.get("body_truncated"):
        body = body + TRUNCATION_MARKER.lstrip("\n")
    return body
