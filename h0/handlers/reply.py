"""The reply draft triage writes for an email: who it goes to, its subject, the warnings it carries.

The email's words stay data in the draft: the subject is cleaned of control characters
(h0.mail.headers), the drafted reply fetches nothing when opened and never carries H0's
cut-off line (h0.mail.incoming.htmltext.disarm_reply), and anything quoted below the cut-off is
escaped. A reply to a sender whose domain failed DMARC (the email note's `auth.dmarc`)
says so: `warning:` in the draft's frontmatter and a callout below the cut-off, never in
the text that is sent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from h0.drafting import DraftContext
from h0.drafting.grounding import clean_reply, grounding, notes_section
from h0.drafting.learning import LEARN_KEY, text_hash, written_record
from h0.drafting.scheduling import scheduled_reply
from h0.errors import InternalError
from h0.handlers.thread import ThreadNote
from h0.mail.compose.drafts import NEXT_STEP, REVISE_HINT
from h0.mail.headers import clean_header_text
from h0.mail.incoming.htmltext import defuse_cutoff, disarm_reply, inert_inline
from h0.vault import Note
from h0.vault.api import Write
from h0.vault.audit import note_timestamp
from h0.vault.layout import DRAFTS
from h0.vault.marks import TEXT_HASH_KEY
from h0.vault.model import NoteFacts
from h0.vault.sendable import CUTOFF

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


def sender_warning(email: NoteFacts) -> str | None:
    """The warning a reply to this email carries, or None: DMARC failed for the sender's domain."""
    auth = email.email.auth
    return DMARC_WARNING if auth is not None and auth.get("dmarc") == "fail" else None


def reply_recipient(facts: NoteFacts) -> str | None:
    """Reply-To if the email had one, else From — the bare address (as the note model reads them)."""
    for found in (facts.reply_to, (facts.sender,)):
        addresses = [addr for addr in found if "@" in addr]
        if addresses:
            return addresses[0]
    return None


def reply_all(facts: NoteFacts, to: str, owner: frozenset[str]) -> tuple[list[str], str]:
    """Who else was on the email and gets the reply (Cc), and the sentence saying so.

    Everyone in its To and Cc but the sender and the owner (OWNER_EMAILS, SMTP_FROM, …). When H0
    does not know the owner's addresses, the To line may be the owner's own: only its Cc is kept."""
    others = (*facts.to, *facts.cc) if owner else facts.cc
    skip = {to.lower(), *owner}
    cc = list(dict.fromkeys(a for a in others if "@" in a and a.lower() not in skip))
    if not cc:
        return [], ""
    note = f"Replying to all: Cc {', '.join(cc)} (everyone else who was on the email"
    note += ", but you)." if owner else "; set OWNER_EMAILS so H0 knows your own addresses and keeps the To line too)."
    return cc, note


def _only_from_headers(path: str, facts: NoteFacts, recipients: list[str]) -> None:
    """Recipients come from the email's own headers, never from a lesson, the profile or a model's words:
    checked here, where every reply draft is made, so a change elsewhere cannot quietly add one."""
    known = {addr.lower() for addr in (*facts.reply_to, facts.sender, *facts.to, *facts.cc)}
    stray = [r for r in recipients if r.lower() not in known]
    if stray:
        raise InternalError(
            f"The reply to {path} would have gone to {', '.join(stray)}, who is not on the email; nothing was written.",
            path=path,
        )


def draft_head(draft_id: str, source: str, to: str, subject: str) -> dict[str, Any]:
    """The frontmatter every draft H0 writes begins with: whom it goes to, its subject, waiting for the owner
    (`status: pending_approval`), its id, the note it answers and when it was drafted."""
    return {
        "to": to,
        "subject": subject,
        "status": "pending_approval",
        "draft_id": draft_id,
        "source": source,
        "drafted_at": note_timestamp(),
    }


def reply_draft(
    note: Note,
    decision: Any,
    newer: ThreadNote | None = None,
    context: DraftContext | None = None,
    by_model: bool = False,
    drafted_by: str = "rules",
    owner: frozenset[str] = frozenset(),
    flags: Sequence[str] = (),
) -> tuple[Write | None, dict[str, Any] | None]:
    """The reply draft for this email (created only if absent) and the record of what H0 wrote in it;
    (None, None) when there is no address to reply to. `flags`: what the owner must check before
    sending (a reply in another language than the email's, an answer cut off at the token limit),
    said in `h0_flags:` and as a callout below the cut-off line."""

    facts = note.facts
    to = reply_recipient(facts)
    if to is None:
        return None, None
    cc, all_note = reply_all(facts, to, owner)
    name = note.path.rsplit("/", 1)[-1]
    draft_path = f"{DRAFTS}/REPLY_{name}"
    draft_fm = draft_head(f"REPLY_{name[:-3]}", note.path, to, reply_subject(facts.subject))
    if cc:
        draft_fm["cc"] = ", ".join(cc)
    _only_from_headers(note.path, facts, [to, *cc])
    if facts.message_id:
        draft_fm["reply_to_message_id"] = facts.message_id
    if facts.thread_id:
        draft_fm["thread_id"] = facts.thread_id
    if decision.decision == "urgent":
        draft_fm["priority"] = "urgent"
    if newer is not None:  # the thread already moved on past this email: the draft is out of date from the start
        draft_fm["stale"] = True
        draft_fm["stale_reason"] = (
            f"{inert_inline(newer.note.facts.sender_text or 'someone')} wrote again "
            f"in this thread ({newer.link}) after the email this draft answers: read it, "
            "edit the reply, and set `send_anyway: true` to send it anyway"
        )
        draft_fm["stale_since"] = newer.link
    warning = sender_warning(facts)
    if warning:
        draft_fm["warning"] = warning
    if flags:
        draft_fm["h0_flags"] = [inert_inline(flag) for flag in flags]
    draft_fm["decision"] = decision.decision
    draft_fm["confidence"] = round(float(decision.confidence), 3)
    scheduled = scheduled_reply(
        disarm_reply((decision.reply_body or "").strip()),
        context.scheduling if context is not None else None,
        by_model=by_model,
        sign_off=context.voice.sign_off if context is not None else "",
    )
    cleaned = clean_reply(scheduled.text)
    reply = cleaned.text or "[H0 draft — write your reply here before approving]"
    asked = [*decision.questions, *scheduled.questions]
    found = grounding(context, cleaned, decision.sources, asked, by_model=by_model)
    if scheduled.meeting:  # its times are kept current while it waits (h0.handlers.reschedule)
        draft_fm["meeting_request"] = True
    if scheduled.proposed_slots:
        draft_fm["proposed_slots"] = list(scheduled.proposed_slots)
    if scheduled.flagged:
        draft_fm["unverified_times"] = list(scheduled.flagged)
    draft_fm["drafted_by"] = drafted_by
    draft_fm[TEXT_HASH_KEY] = text_hash(reply)
    draft_fm[LEARN_KEY] = "pending"
    link = name[:-3]  # by name: the link survives the email moving to Done/
    body = (
        f"{reply}\n\n{CUTOFF}\n"
        + (f"> [!warning] H0: {warning}\n\n" if warning else "")
        + "".join(f"> [!warning] H0: {inert_inline(flag)}\n\n" for flag in flags)
        + f"Replying to [[{link}]] — H0's reasoning: {inert_inline(decision.reasoning)}\n"
        + (f"{inert_inline(all_note)}\n" if all_note else "")
        + f"{NEXT_STEP}\n"
        + "".join(f"\n{line}\n" for line in scheduled.notes)
        + (f"\n{section}" if (section := notes_section(found)) else "")
        + f"\n{REVISE_HINT}\n"
    )
    written = written_record(
        draft_path,
        draft_fm["draft_id"],
        reply,
        drafted_by,
        [i.label for i in found.used] or [i.label for i in found.given],
        found.questions,
    )
    return Write(draft_path, draft_fm, body, create_only=True), written
