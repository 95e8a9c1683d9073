"""A draft note as the message it sends, read strictly: the note model's one view for sending.

`NoteFacts` (h0.vault.model) reads a note leniently, for every consumer: a bad value is absent. What is
*sent* cannot be guessed at, so `sendable(note)` reads the message's own parts strictly — the recipients,
the subject, the text above the cut-off line, the attachments, the reply header and thread — and names
every problem with its fix instead of dropping a value. Everything else a send needs (the email it
answers, `draft_id`, `send_anyway`, when it was drafted) is the note's `facts`, the same for everyone.
Whether the text may be sent (hidden text, template markers, placeholders) is the mail server's check
(h0.mail.compose.drafts), added to these problems in one refusal.

A draft's body is the message up to an optional cut-off line — everything from
`%% h0: not sent below %%` on is H0's note to the human (a link to the source email, the triage
reasoning) and never leaves. `%%…%%` is Obsidian's comment syntax, so that line is hidden in reading view.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from h0.vault.model import NoteFacts
from h0.vault.note import Note

__all__ = ["AGAIN", "CUTOFF", "Sendable", "above_cutoff", "message_body", "sendable"]

CUTOFF = "%% h0: not sent below %%"
AGAIN = "then approve again"
# Header values are one line: no C0/C1 control (TAB included), no Unicode line/paragraph separator.
_HEADER_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})


@dataclass(frozen=True, slots=True)
class Sendable:
    """What a draft note sends, read strictly; `problems` lists what must be fixed first (empty: none)."""

    facts: NoteFacts  # everything else the note says: source, draft_id, send_anyway, drafted_at, …
    note_hash: str
    # Each recipient as written, display names kept, split at commas: the send path parses them
    # (h0.mail.compose.addresses.parse_recipients), and this split is the canonical form the send's key has
    # been made of since keys were first minted (h0.mail.compose.drafts.identity).
    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    subject: str
    body: str  # the text above the cut-off, trimmed: what is sent
    above: str  # the text above the cut-off as written: what the human saw, for the body's checks
    attachments: tuple[str, ...]
    reply_to_message_id: str | None
    thread_id: str | None
    confirm_domains: tuple[str, ...]  # domains the human confirmed (`confirm_domains:`), ASCII lower case
    problems: tuple[str, ...]

    @property
    def path(self) -> str:
        return self.facts.path


def above_cutoff(body: str) -> str:
    cut = body.find(CUTOFF)
    return body if cut == -1 else body[:cut]


def message_body(body: str) -> str:
    """The part of a draft body that is sent: the text above the cut-off, trimmed."""
    text = above_cutoff(body)
    return text.strip("\r\n").rstrip() + "\n" if text.strip() else ""


def sendable(note: Note) -> Sendable:
    """The strict view of a draft note; never raises: each problem is one sentence saying how to fix the note."""
    fm = note.frontmatter
    problems: list[str] = []
    to = _recipients("to", fm.get("to"), problems)
    cc = _recipients("cc", fm.get("cc"), problems) or ()
    bcc = _recipients("bcc", fm.get("bcc"), problems) or ()
    if to == ():
        problems.append(f"The frontmatter needs `to:` with the recipient's address; add it, {AGAIN}.")
    subject = _subject(fm.get("subject"), problems)
    text = message_body(note.body)
    if not text.strip():
        problems.append(
            f"The message is empty: write it in the body of the note, above `{CUTOFF}` if that line is there, {AGAIN}."
        )
    return Sendable(
        facts=note.facts,
        note_hash=note.hash,
        to=to or (),
        cc=cc,
        bcc=bcc,
        subject=subject,
        body=text,
        above=above_cutoff(note.body),
        attachments=_attachments(fm.get("attachments"), problems),
        reply_to_message_id=_header_text("reply_to_message_id", fm.get("reply_to_message_id"), problems),
        thread_id=_header_text("thread_id", fm.get("thread_id"), problems),
        confirm_domains=_domains(fm.get("confirm_domains")),
        problems=tuple(problems),
    )


def has_header_control(text: str) -> bool:
    return any(unicodedata.category(ch) in _HEADER_FORBIDDEN_CATEGORIES for ch in text)


def _recipients(field: str, value: Any, problems: list[str]) -> tuple[str, ...] | None:
    """`a@x.com`, `a@x.com, b@y.org` or a list of such strings; None (and a problem) for anything else."""
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if items is None or not all(isinstance(item, str) for item in items):
        problems.append(
            f"`{field}` must be an address or a list of addresses (text), not {type(value).__name__}; "
            f"fix it in the frontmatter, {AGAIN}."
        )
        return None
    if any(has_header_control(item) for item in items):
        problems.append(
            f"`{field}` contains a line break or another control character; put each address on one line "
            f"with nothing invisible in it, {AGAIN}."
        )
        return None
    return tuple(part.strip() for item in items for part in item.split(",") if part.strip())


def _subject(value: Any, problems: list[str]) -> str:
    if isinstance(value, (list, dict)):
        problems.append(f"`subject` must be one line of text, not a {type(value).__name__}; fix it, {AGAIN}.")
        return ""
    subject = "" if value is None else str(value)
    if has_header_control(subject):
        problems.append(
            f"`subject` contains a line break, a tab or another control character; write it on one line, {AGAIN}."
        )
        return ""
    if not subject.strip():
        problems.append(f"The frontmatter needs `subject:` (the email's subject line); add it, {AGAIN}.")
    return subject.strip()


def _attachments(value: Any, problems: list[str]) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if items is None or not all(isinstance(item, str) and item.strip() for item in items):
        problems.append(
            f"`attachments` must be a vault path or a list of vault paths (e.g. `- Files/report.pdf`), each "
            f"non-empty; fix it in the frontmatter, {AGAIN}."
        )
        return ()
    if any(has_header_control(item) for item in items):
        problems.append(f"An attachment path contains a line break or another control character; fix it, {AGAIN}.")
        return ()
    return tuple(items)


def _header_text(field: str, value: Any, problems: list[str]) -> str | None:
    if isinstance(value, (list, dict)):
        problems.append(f"`{field}` must be one line of text, not a {type(value).__name__}; fix it, {AGAIN}.")
        return None
    text = None if value is None else str(value).strip() or None
    if text is not None and has_header_control(text):
        problems.append(f"`{field}` contains a line break or another control character; fix it, {AGAIN}.")
        return None
    return text


def _domains(value: Any) -> tuple[str, ...]:
    """`confirm_domains:` — one domain or a list of them; anything else confirms nothing."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(
        str(item).strip().lstrip("@").lower()
        for item in items
        if isinstance(item, str) and item.strip() and not has_header_control(item)
    )


def message_changes(before: Note, properties: Mapping[str, Any]) -> list[str]:
    """The message's own properties (recipients, subject, attachments, reply header, thread, the email it
    answers, draft id) that `properties`, a new version of the note's frontmatter, would change: what a
    revision of the text must never touch."""
    old, new = sendable(before), sendable(Note(before.path, dict(properties), before.body, before.hash))
    pairs = {
        "to": (old.to, new.to),
        "cc": (old.cc, new.cc),
        "bcc": (old.bcc, new.bcc),
        "subject": (old.subject, new.subject),
        "attachments": (old.attachments, new.attachments),
        "reply_to_message_id": (old.reply_to_message_id, new.reply_to_message_id),
        "thread_id": (old.thread_id, new.thread_id),
        "source": (old.facts.source_key, new.facts.source_key),
        "draft_id": (old.facts.draft_id, new.facts.draft_id),
    }
    return [name for name, (was, now) in pairs.items() if was != now]
