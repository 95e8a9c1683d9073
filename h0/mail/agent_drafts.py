"""Drafts an agent asks for (`create_draft`): checked now as a send would check them, written into Drafts/
under a free name for the human to approve, recorded as the agent's write. Nothing here sends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from h0.errors import Conflict, InvalidRequest, NotFound
from h0.mail.compose.drafts import parse_draft
from h0.mail.models import DraftCreated
from h0.state import StateDB
from h0.vault import Vault
from h0.vault.audit import AuditLog, note_timestamp
from h0.vault.last_change import name_key
from h0.vault.layout import DRAFTS
from h0.vault.model import note_facts
from h0.vault.note import Note
from h0.vault.sendable import CUTOFF


def write_draft(
    vault: Vault,
    state: StateDB,
    audit: AuditLog,
    recipients: dict[str, list[str]],
    subject: str,
    body: str,
    *,
    reply_to_message_id: str | None,
    thread_id: str | None,
    source: str | None,
    client: str | None,
) -> DraftCreated:
    """Write the draft (recipients already parsed, subject already settled) and say where it went."""
    drafted = note_timestamp()
    to, subject = ", ".join(recipients["to"]), subject.strip()
    name = f"DRAFT_{drafted.replace(':', '').replace('-', '')}_{_slug(subject)}"
    properties: dict[str, Any] = {
        "to": to,
        **{field: ", ".join(recipients[field]) for field in ("cc", "bcc") if recipients[field]},
        "subject": subject,
        "status": "pending_approval",
        "drafted_at": drafted,
        "created_by": "create_draft",
        **({"reply_to_message_id": reply_to_message_id} if reply_to_message_id else {}),
        **({"thread_id": thread_id} if thread_id else {}),
        **({"source": source} if source else {}),
        "draft_id": name,
    }
    text = (
        f"{body.strip()}\n\n{CUTOFF}\nWritten by an MCP client (create_draft) at {drafted}. Read it, edit it "
        "if needed, then move it to Approved/ to send it, or to Rejected/ to drop it.\n"
    )
    try:
        parse_draft(Note(f"{DRAFTS}/{name}.md", properties, text, ""))  # the send-time checks, now
    except InvalidRequest as error:  # said to the agent calling, not to a human holding a note
        raise InvalidRequest(for_agent(error.message), **error.details) from None
    for n in range(1, 100):
        path = f"{DRAFTS}/{name}.md" if n == 1 else f"{DRAFTS}/{name} ({n}).md"
        try:
            note = vault.write_note(path, properties, text, create_only=True)
            break
        except Conflict:
            continue
    else:
        raise Conflict(f"Could not find a free name for the draft in {DRAFTS}/.")
    state.record_note_writes([(name_key(note.path), note.path, note.hash, "create_draft", client)])
    audit.write(
        "draft_created",
        path=note.path,
        to=to,
        subject=subject,
        reply_to_message_id=reply_to_message_id,
        client=client,
    )
    return DraftCreated(path=note.path, hash=note.hash, to=recipients["to"], subject=subject, thread_id=thread_id)


def email_note(vault_root: Path, message_id: str, backend: str) -> tuple[str, str | None, str]:
    """(path, thread id, subject) of the email note for `message_id`, for a backend that reads no mail."""
    vault = Vault(vault_root)
    listing = vault.list_notes("", f"message_id:{message_id}", recursive=True, limit=1, with_frontmatter=True)
    if not listing.notes:
        raise NotFound(
            f"No email with the id {message_id!r} in the vault, and the {backend} backend "
            "cannot read mail: give the draft a subject and no reply_to_message_id, or import the "
            "email first (h0 import).",
            reply_to_message_id=message_id,
        )
    note = listing.notes[0]
    facts = note_facts(note.path, note.frontmatter or {})
    return note.path, facts.thread_id, facts.subject


def _slug(text: str) -> str:
    words = "".join(ch if ch.isalnum() else " " for ch in text.lower()).split()
    return "-".join(words)[:40].strip("-") or "draft"


def for_agent(message: str) -> str:
    """A refusal worded for a person fixing a note in Obsidian, reworded for an agent calling create_draft:
    nothing was written, and the fix goes into the call's arguments."""
    text = (
        message.replace("then approve again", "then call create_draft again")
        .replace("in the draft's frontmatter", "in the arguments")
        .replace("in the frontmatter", "in the arguments")
        .replace("to the frontmatter", "to the arguments")
        .replace("fix it in the frontmatter", "fix the argument")
    )
    return f"Nothing was written: {text[0].lower()}{text[1:]}" if text else text
