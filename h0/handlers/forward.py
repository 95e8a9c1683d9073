"""The forward draft of a delegated email: to the colleague triage named, with a line of context and
the original included, waiting in Drafts/ for the owner's approval like any draft.

Who: `delegate_to` is an address, or a name whose People note (found as a `[[link]]` is: by file
name or alias) gives the address in its `email:` property. Without an address there is no draft:
the email stays `delegated` and says how to fix it (add `email:` to the People note). The draft is
not a reply: no `reply_to_message_id`, no thread; `source:` is the email, so sending the forward
files the email in Done/ as a sent reply would.
"""

from __future__ import annotations

from email.utils import parseaddr
from typing import Any

from h0.drafting import Drafting
from h0.drafting.knowledgenotes import frontmatter_addresses
from h0.mail.compose.drafts import CUTOFF, NEXT_STEP, REVISE_HINT
from h0.mail.headers import clean_address_header, clean_header_text
from h0.mail.incoming.htmltext import block_text, defuse_cutoff, disarm_reply, inert_inline
from h0.vault import Note
from h0.vault.api import Write
from h0.vault.audit import note_timestamp
from h0.vault.layout import DRAFTS

_FWD_PREFIX = ("fwd:", "fw:", "wg:", "tr:")


def colleague(delegate_to: str, drafting: Drafting | None) -> tuple[str, str, str | None]:
    """(name, address, the People note's link) of whom `delegate_to` names; address "" when unknown."""
    name, address = parseaddr(delegate_to)
    if "@" in address:
        return (name or address), address.strip().lower(), None
    who = delegate_to.strip().strip("[]").strip()
    if drafting is None or not who:
        return who, "", None
    note = drafting.knowledge.resolve_link(who)
    if note is None:
        return who, "", None
    found = frontmatter_addresses(note.frontmatter)
    return note.title, (found[0].lower() if found else ""), note.link


def forward_subject(subject: str) -> str:
    clean = clean_header_text(subject or "").strip()
    return clean if clean.lower().startswith(_FWD_PREFIX) else f"Fwd: {clean or '(no subject)'}"


def forward_draft(
    note: Note, delegate_to: str, reasoning: str, drafting: Drafting | None
) -> tuple[Write | None, str | None]:
    """The forward draft of `note` to whom `delegate_to` names (created only if absent), or (None, why not)."""
    name, address, link = colleague(delegate_to, drafting)
    if not address:
        where = f"the `email:` property of {link or f'a People note named {name!r}'}"
        return None, f"no address for {inert_inline(name or 'the colleague')}: add it to {where}, then triage again"
    facts = note.facts
    greeting, sign_off = (None, None)
    if drafting is not None:
        greeting, sign_off = drafting.voice_for_people([(name, address)])
    first = name.split()[0] if name and "@" not in name else ""
    context_line = f"Could you take this one? {reasoning.strip()}".strip()
    original = block_text(note.body).strip()
    header = [
        "---------- Forwarded message ----------",
        f"From: {clean_address_header(facts.sender_text)}",
        f"Date: {note.frontmatter.get('received') or ''}",  # as the email said it, not as an epoch
        f"Subject: {clean_header_text(facts.subject)}",
        f"To: {clean_address_header(_listed(note.frontmatter.get('to')))}",  # display names kept, as written
    ]
    text = "\n\n".join(
        part
        for part in (
            greeting or (f"Hi {first}," if first else "Hi,"),
            context_line,
            sign_off or "",
            "\n".join(header) + "\n\n" + original,
        )
        if part
    )
    text = disarm_reply(defuse_cutoff(text))
    file_name = note.path.rsplit("/", 1)[-1]
    path = f"{DRAFTS}/FWD_{file_name}"
    draft_fm: dict[str, Any] = {
        "to": address,
        "subject": forward_subject(facts.subject),
        "status": "pending_approval",
        "draft_id": f"FWD_{file_name[:-3]}",
        "source": note.path,
        "drafted_at": note_timestamp(),
        "decision": "delegate",
        "drafted_by": "rules",
    }
    body = (
        f"{text}\n\n{CUTOFF}\n"
        f"Forwarding [[{file_name[:-3]}]] to {inert_inline(name)} ({address})"
        + (f", from {link}" if link else "")
        + f" — H0's reasoning: {inert_inline(reasoning)}\n{NEXT_STEP}\n\n{REVISE_HINT}\n"
    )
    return Write(path, draft_fm, body, create_only=True), None


def _listed(value: object) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value or "")
