"""Triage a `Needs_Action/` email note and apply the decision (ARCHITECTURE.md's state machine).

    draft_reply → Drafts/REPLY_<name>.md (status: pending_approval); email: awaiting_approval
    urgent      → the same, with priority: urgent
    archive     → email to Done/ (status: done, decision: archive)
    needs_info  → email stays, status: needs_info
    delegate    → email stays, status: delegated, a delegation note appended to the body

Triage sees the conversation, not one message: the earlier emails and sent replies of the
email's thread, as the vault holds them (h0.handlers.thread), go to the triager with it. A
draft for an email its thread has already moved past (a later email is in the vault) is
written `stale: true`, as ingest marks a waiting draft when a reply arrives.

Only notes with `status: pending` (or none) are triaged, and every branch changes that
status, so H0's own writes never trigger a second triage. The draft is written first and
created only if absent: after a crash between "draft written" and "email updated", the
next pass finds the draft and re-uses it instead of writing a second one (or overwriting
the human's edits).

The email's words stay data in the draft: the subject is cleaned of control characters
(h0.mail.headers), the drafted reply fetches nothing when opened and never carries H0's
cut-off line (h0.mail.htmltext.disarm_reply), and anything quoted below the cut-off is
escaped. A reply to a sender whose domain failed DMARC (the email note's `auth.dmarc`)
says so: `warning:` in the draft's frontmatter and a callout below the cut-off, never in
the text that is sent.
"""

from __future__ import annotations

import re
from email.utils import getaddresses, parseaddr
from typing import Any

from loguru import logger

from h0.errors import Conflict, H0Error
from h0.handlers.context import HandlerContext, NoteView, Outcome
from h0.handlers.thread import ThreadNote, conversation, later_emails, thread_notes
from h0.mail.drafts import CUTOFF
from h0.mail.headers import clean_address_header, clean_header_text
from h0.mail.htmltext import block_text, defuse_cutoff, disarm_reply, inert_inline
from h0.vault.audit import note_timestamp
from h0.vault.layout import DONE, DRAFTS

TRIAGE_STATUSES = {"", "pending"}
_RE_PREFIX = re.compile(r"^\s*((re|aw|sv|antw|r)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
DMARC_WARNING = (
    "The sender's domain failed DMARC: this email may not come from who it claims to be. "
    "Check the sender another way before replying or acting on it."
)


def reply_subject(subject: str) -> str:
    """'Re: ' + the subject, without doubling an existing Re:/AW:/SV: prefix.

    The subject is cleaned first (control characters removed, encoded words decoded): a
    stranger's subject is copied into a message the human will send.
    """
    stripped = _RE_PREFIX.sub("", defuse_cutoff(clean_header_text(subject or ""))).strip()
    return f"Re: {stripped}" if stripped else "Re: (no subject)"


def sender_warning(frontmatter: dict[str, Any]) -> str | None:
    """The warning a reply to this email carries, or None: DMARC failed for the sender's domain."""
    auth = frontmatter.get("auth")
    if isinstance(auth, dict) and str(auth.get("dmarc") or "").strip().lower() == "fail":
        return DMARC_WARNING
    return None


def reply_recipient(frontmatter: dict[str, Any]) -> str | None:
    """Reply-To if the email had one, else From — the bare address."""
    for field in ("reply_to", "from"):
        value = frontmatter.get(field)
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        if isinstance(value, str) and value.strip():
            value = clean_address_header(value)
            addresses = [addr for _, addr in getaddresses([value]) if "@" in addr]
            if addresses:
                return addresses[0]
            name, addr = parseaddr(value)
            if "@" in addr:
                return addr
    return None


def triage_email(path: str, ctx: HandlerContext) -> Outcome:
    note = ctx.read_note(path)
    if isinstance(note, Outcome):
        return note
    if str(note.frontmatter.get("status") or "").strip().lower() not in TRIAGE_STATUSES:
        return Outcome("skipped", "already triaged")

    from h0.triage.models import EarlierMessage, EmailInput

    # The email's words, not the code block that keeps them inert in Obsidian; and the conversation before it.
    thread = _thread(note, ctx)
    email = EmailInput.from_note(note.frontmatter, block_text(note.body))
    if thread:
        email = email.model_copy(update={"conversation": [
            EarlierMessage(**entry) for entry in conversation(thread, note.frontmatter.get("received"))]})
    outcome = ctx.triager.triage(email)
    decision = outcome.decision
    record = {
        "decision": decision.decision,
        "confidence": round(float(decision.confidence), 3),
        "reasoning": decision.reasoning,
        "triaged_at": note_timestamp(),
        "triaged_by": outcome.provider if not outcome.fallback else f"{outcome.provider} → rules (fallback)",
    }
    draft_path = None
    done_path = None
    if decision.decision in ("draft_reply", "urgent"):
        newer = later_emails(thread, note.frontmatter.get("received"))
        draft_path = _write_draft(note, decision, ctx, newer[-1] if newer else None)
        if draft_path is None:
            ctx.notes.patch(note, {**record, "status": "needs_info", "problem": "no address to reply to"})
            record["decision"] = "needs_info"
        else:
            ctx.notes.patch(note, {**record, "status": "awaiting_approval", "draft": draft_path})
    elif decision.decision == "archive":
        done_path = ctx.notes.move_to_folder(path, DONE, {**record, "status": "done"})["destination"]
    elif decision.decision == "delegate":
        whom = decision.delegate_to or "someone else"
        appended = (note.body.rstrip("\n")
                    + f"\n\n> [!note] H0: delegate to {inert_inline(whom)}\n> {inert_inline(decision.reasoning)}\n")
        fresh = ctx.notes.read(path)
        ctx.notes.write(
            path, {**fresh.frontmatter, **record, "status": "delegated", "delegate_to": whom},
            appended if fresh.hash == note.hash else fresh.body, if_match=fresh.hash,
        )
    else:
        ctx.notes.patch(note, {**record, "status": "needs_info"})

    ctx.audit.write(
        "triage_decision",
        note=path,
        decision=record["decision"],
        confidence=record["confidence"],
        reasoning=decision.reasoning,
        provider=outcome.provider,
        model=outcome.model,
        latency_ms=round(outcome.latency_ms, 2),
        fallback=outcome.fallback or None,
        fallback_reason=outcome.fallback_reason,
        rule=outcome.rule,
        draft=draft_path,
        warnings=outcome.warnings or None,
    )
    for warning in outcome.warnings:
        logger.warning("{}: {}", path, warning)
    where = f" → {draft_path}" if draft_path else (f" → {done_path}" if done_path else "")
    logger.info("☐ triaged {}: {} ({:.0%}){}", path, record["decision"], record["confidence"], where)
    data = {"decision": record["decision"], "confidence": record["confidence"], "draft_path": draft_path}
    return Outcome("triaged", record["decision"], data=data)


def _thread(note: NoteView, ctx: HandlerContext) -> list[ThreadNote]:
    """The vault's other notes of this email's thread (those after it too: its draft may be out of
    date already), or none when it has no thread or the look-up fails."""
    fm = note.frontmatter
    if not fm.get("thread_id"):
        return []
    try:
        return thread_notes(ctx, str(fm["thread_id"]), exclude=note.path)
    except H0Error as error:
        logger.warning("{}: its thread could not be read ({}); triaged on its own", note.path, error.message)
        return []


def _write_draft(note: NoteView, decision: Any, ctx: HandlerContext, newer: ThreadNote | None = None) -> str | None:
    fm = note.frontmatter
    to = reply_recipient(fm)
    if to is None:
        return None
    name = note.path.rsplit("/", 1)[-1]
    draft_path = f"{DRAFTS}/REPLY_{name}"
    draft_fm: dict[str, Any] = {
        "to": to,
        "subject": reply_subject(str(fm.get("subject") or "")),
        "status": "pending_approval",
        "draft_id": f"REPLY_{name[:-3]}",
        "source": note.path,
        "drafted_at": note_timestamp(),
    }
    if fm.get("message_id"):
        draft_fm["reply_to_message_id"] = str(fm["message_id"])
    if fm.get("thread_id"):
        draft_fm["thread_id"] = str(fm["thread_id"])
    if decision.decision == "urgent":
        draft_fm["priority"] = "urgent"
    if newer is not None:  # the thread already moved on past this email: the draft is out of date from the start
        draft_fm["stale"] = True
        draft_fm["stale_reason"] = (f"{inert_inline(str(newer.note.frontmatter.get('from') or 'someone'))} wrote again "
                                    f"in this thread ({newer.link}) after the email this draft answers: read it, "
                                    "edit the reply, and set `send_anyway: true` to send it anyway")
        draft_fm["stale_since"] = newer.link
    warning = sender_warning(fm)
    if warning:
        draft_fm["warning"] = warning
    draft_fm["decision"] = decision.decision
    draft_fm["confidence"] = round(float(decision.confidence), 3)
    reply = disarm_reply((decision.reply_body or "").strip()) or "[H0 draft — write your reply here before approving]"
    link = name[:-3]  # by name: the link survives the email moving to Done/
    body = (
        f"{reply}\n\n{CUTOFF}\n"
        + (f"> [!warning] H0: {warning}\n\n" if warning else "")
        + f"Replying to [[{link}]] — H0's reasoning: {inert_inline(decision.reasoning)}\n"
        "Edit the text above, then move this note to Approved/ to send it, or to Rejected/ to drop it.\n"
    )
    try:
        ctx.notes.write(draft_path, draft_fm, body, create_only=True)
    except Conflict:
        pass  # written by an earlier pass that crashed before updating the email: keep it
    return draft_path
