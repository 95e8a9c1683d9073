"""Drafts as messages: what of a draft note is sent, how it is checked, and its identity.

A draft's body is the message, up to an optional cut-off line — everything from
`%% h0: not sent below %%` on is H0's note to the human (a link to the source email, the
triage reasoning) and never leaves. `%%…%%` is Obsidian's comment syntax, so the line is
hidden in reading view.

The idempotency key is a hash of exactly what would be sent; the deterministic
Message-ID derives from it, so a crash between "sent" and "filed" is recognised on the
next pass instead of sending twice. Re-approving an unchanged draft is the same send; an
edited draft is a new one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from h0.handlers.context import NoteView

CUTOFF = "%% h0: not sent below %%"


@dataclass(frozen=True, slots=True)
class DraftMessage:
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    body: str
    attachments: list[str]
    reply_to_message_id: str | None
    thread_id: str | None
    key: str

    def message_id(self, domain: str) -> str:
        return f"<h0.{self.key}@{domain}>"

    def send_arguments(self, domain: str) -> dict[str, Any]:
        args: dict[str, Any] = {
            "to": self.to,
            "subject": self.subject,
            "body": self.body,
            "message_id": self.message_id(domain),
            "idempotency_key": self.key,
        }
        for name in ("cc", "bcc", "attachments"):
            if getattr(self, name):
                args[name] = getattr(self, name)
        if self.reply_to_message_id:
            args["reply_to_message_id"] = self.reply_to_message_id
        if self.thread_id:
            args["thread_id"] = self.thread_id
        return args


def message_body(body: str) -> str:
    """The part of a draft body that is sent."""
    cut = body.find(CUTOFF)
    text = body if cut == -1 else body[:cut]
    return text.strip("\r\n").rstrip() + "\n" if text.strip() else ""


def _addresses(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    return [str(value)]


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def read_draft(note: NoteView) -> tuple[DraftMessage | None, list[str]]:
    """Turn a draft note into a message, or list what is missing."""
    fm = note.frontmatter
    problems: list[str] = []
    to = _addresses(fm.get("to"))
    subject = fm.get("subject")
    body = message_body(note.body)
    if not to:
        problems.append("frontmatter needs `to` (the recipient)")
    if subject is None or (isinstance(subject, str) and not subject.strip()):
        problems.append("frontmatter needs `subject`")
    if not body.strip():
        problems.append("the body (the message to send) is empty")
    attachments = fm.get("attachments") or []
    if isinstance(attachments, str):
        attachments = [attachments]
    if not isinstance(attachments, list):
        problems.append("`attachments` must be a list of vault paths")
        attachments = []
    if problems:
        return None, problems
    cc, bcc = _addresses(fm.get("cc")), _addresses(fm.get("bcc"))
    reply_to = _text(fm.get("reply_to_message_id"))
    thread = _text(fm.get("thread_id"))
    identity = json.dumps(
        [_text(fm.get("draft_id")) or note.path.rsplit("/", 1)[-1], to, cc, bcc, str(subject), body,
         [str(a) for a in attachments], reply_to],
        ensure_ascii=False,
    )
    key = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]
    return DraftMessage(to, cc, bcc, str(subject), body, [str(a) for a in attachments], reply_to, thread, key), []
