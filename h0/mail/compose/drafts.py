"""A draft note as a message: what of it is sent, whether it may be sent, and its identity.

A draft's body is the message, up to an optional cut-off line — everything from
`%% h0: not sent below %%` on is H0's note to the human (a link to the source email, the
triage reasoning) and never leaves. `%%…%%` is Obsidian's comment syntax, so that line is
hidden in reading view.

The human approves what Obsidian shows them, so what is sent must be exactly that: text
that renders as nothing in reading view above the cut-off (comments, invisible characters,
link reference definitions, hidden HTML, embeds…: h0.mail.deception.visible) and a template marker
nobody edited away are refused — never stripped, since stripping would send something
nobody read either. `parse_draft` is pure: it reads no
files; the attachments' bytes are hashed by `h0.mail.compose.attachments.load_attachments`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from h0.errors import InvalidRequest
from h0.mail.deception import visible
from h0.vault.copies import original_name
from h0.vault.values import flag, source_key, source_path

CUTOFF = "%% h0: not sent below %%"
# H0's line under the cut-off of a draft it wrote; once sent it says when and to whom instead.
NEXT_STEP = "Edit the text above, then move this note to Approved/ to send it, or to Rejected/ to drop it."
# H0's line (on a draft it wrote) saying how to have it rewritten; dropped once the draft is sent.
REVISE_HINT = (
    "_To have H0 rewrite this draft, add a line `h0: what to change` above the text "
    "(e.g. `h0: shorter, offer Friday instead`) and save._"
)

# The first line of a reply H0 wrote from a template ("[H0 draft — edit before approving]"):
# still there means nobody edited the reply. Any dash, any wording after "H0 draft".
TEMPLATE_MARKER = re.compile(r"^\[H0 draft\b[^\]]*\]$", re.IGNORECASE)
# A fact the drafter could not ground, named where it belongs ("[FILL: the meeting time]"):
# the draft is not sendable until each one is replaced (h0.drafting.grounding writes them).
PLACEHOLDER = re.compile(r"\[FILL:\s*([^\[\]\n]{1,120}?)\s*\]", re.IGNORECASE)

# Header values are one line: no C0/C1 control (TAB included), no Unicode line/paragraph separator.
_HEADER_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})
_AGAIN = "then approve again"


@dataclass(frozen=True, slots=True)
class Draft:
    """Everything a draft note says about the message it is, checked and normalised."""

    path: str
    note_hash: str
    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    subject: str
    body: str
    attachments: tuple[str, ...]
    reply_to_message_id: str | None
    thread_id: str | None
    source: str | None  # the vault path of the email note it answers (h0.vault.model.source_path)
    draft_id: str | None
    send_anyway: bool
    drafted_at: str | None
    # Domains the human confirmed in the note (`confirm_domains:`): a suspected typo or a
    # look-alike of a known domain that is really meant (h0.mail.deception.lookalike).
    confirm_domains: tuple[str, ...] = ()

    def identity(self, attachment_hashes: Sequence[str]) -> bytes:
        """Canonical bytes of what is sent: the recipients, the subject, the body, the email it answers (its
        reply header and `source:`) and the attachments with their bytes — never the note's file name, which a
        sync tool's copy changes (`note 2.md`, `note.sync-conflict-….md`): a copy is the same message, so it
        has the same key and is never a second send (docs/synced-vaults.md). Not `thread_id` either: the
        filing writes the provider's thread id on the sent note, and that note approved again is no new message.

        `attachment_hashes` are the sha256 hex digests of `attachments`, in the same order. A `send_anyway`
        draft is the owner saying "this is a message of its own even if another says the same": its own name
        counts too — its `draft_id`, else its file name with any sync tool's copy mark taken off, so that a
        copy of it is still the same message.
        """
        if len(attachment_hashes) != len(self.attachments):
            raise ValueError(f"{len(self.attachments)} attachments but {len(attachment_hashes)} hashes for {self.path}")
        files = [[path, digest] for path, digest in zip(self.attachments, attachment_hashes)]
        canonical: list[object] = [
            list(self.to),
            list(self.cc),
            list(self.bcc),
            self.subject,
            self.body,
            files,
            self.reply_to_message_id,
            source_key(self.source),
        ]
        if self.send_anyway:
            canonical.append(["send_anyway", self.own_name])
        return json.dumps(canonical, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @property
    def own_name(self) -> str:
        """What tells this draft from another with the same words: its draft_id, else its file name
        without a sync tool's copy mark (h0.vault.copies), case-folded."""
        return self.draft_id or original_name(self.path.rsplit("/", 1)[-1]).casefold()


def message_body(body: str) -> str:
    """The part of a draft body that is sent: the text above the cut-off, trimmed."""
    text = _above_cutoff(body)
    return text.strip("\r\n").rstrip() + "\n" if text.strip() else ""


def parse_draft(path: str, frontmatter: Mapping[str, Any], body: str, note_hash: str) -> Draft:
    """Turn a draft note into a `Draft`, or raise InvalidRequest listing every problem.

    `details.problems` holds one sentence per problem, each saying how to fix the note.
    """
    problems: list[str] = []
    to = _addresses("to", frontmatter.get("to"), problems)
    cc = _addresses("cc", frontmatter.get("cc"), problems) or ()
    bcc = _addresses("bcc", frontmatter.get("bcc"), problems) or ()
    if to == ():
        problems.append(f"The frontmatter needs `to:` with the recipient's address; add it, {_AGAIN}.")
    subject = _subject(frontmatter.get("subject"), problems)
    above = _above_cutoff(body)
    text = message_body(body)
    _check_body(above, problems)
    if not text.strip():
        problems.append(
            f"The message is empty: write it in the body of the note, above `{CUTOFF}` if that line is there, {_AGAIN}."
        )
    attachments = _attachments(frontmatter.get("attachments"), problems)
    reply_to = _header_text("reply_to_message_id", frontmatter.get("reply_to_message_id"), problems)
    thread_id = _header_text("thread_id", frontmatter.get("thread_id"), problems)
    if problems:
        message = (
            problems[0]
            if len(problems) == 1
            else (
                f"This draft has {len(problems)} problems: " + " ".join(f"({i}) {p}" for i, p in enumerate(problems, 1))
            )
        )
        raise InvalidRequest(message, problems=problems, path=path)
    return Draft(
        path=path,
        note_hash=note_hash,
        to=to or (),
        cc=cc,
        bcc=bcc,
        subject=subject,
        body=text,
        attachments=attachments,
        reply_to_message_id=reply_to,
        thread_id=thread_id,
        source=source_path(frontmatter.get("source")),
        draft_id=_text(frontmatter.get("draft_id")),
        send_anyway=flag(frontmatter.get("send_anyway")),
        drafted_at=_text(frontmatter.get("drafted_at")),
        confirm_domains=_domains(frontmatter.get("confirm_domains")),
    )


def _above_cutoff(body: str) -> str:
    cut = body.find(CUTOFF)
    return body if cut == -1 else body[:cut]


def _check_body(above: str, problems: list[str]) -> None:
    """Text that renders as nothing (h0.mail.deception.visible) and template markers above the cut-off."""
    problems += visible.problems(visible.find_in_markdown(above), cutoff=CUTOFF)
    markers = [n for n, line in enumerate(above.split("\n"), 1) if TEMPLATE_MARKER.match(line.strip())]
    if markers:
        problems.append(
            f"This draft still has H0's template marker line ([H0 draft — …]) at {visible.lines(markers)}, so "
            f"nobody has edited it yet; edit the reply and delete that line, {_AGAIN}."
        )
    fills = [m.group(1) for m in PLACEHOLDER.finditer(above)]
    if fills:
        named = "; ".join(f"[FILL: {what}]" for what in list(dict.fromkeys(fills))[:10])
        problems.append(
            f"This draft still has {len(fills)} placeholder(s) H0 could not fill from your notes: {named}. Replace "
            f"each with the real fact (or delete it), {_AGAIN}."
        )


def _has_header_control(text: str) -> bool:
    return any(unicodedata.category(ch) in _HEADER_FORBIDDEN_CATEGORIES for ch in text)


def _addresses(field: str, value: Any, problems: list[str]) -> tuple[str, ...] | None:
    """`a@x.com`, `a@x.com, b@y.org` or a list of such strings; None (and a problem) for anything else."""
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if items is None or not all(isinstance(item, str) for item in items):
        problems.append(
            f"`{field}` must be an address or a list of addresses (text), not {type(value).__name__}; "
            f"fix it in the frontmatter, {_AGAIN}."
        )
        return None
    if any(_has_header_control(item) for item in items):
        problems.append(
            f"`{field}` contains a line break or another control character; put each address on one line "
            f"with nothing invisible in it, {_AGAIN}."
        )
        return None
    return tuple(part.strip() for item in items for part in item.split(",") if part.strip())


def _subject(value: Any, problems: list[str]) -> str:
    if isinstance(value, (list, dict)):
        problems.append(f"`subject` must be one line of text, not a {type(value).__name__}; fix it, {_AGAIN}.")
        return ""
    subject = "" if value is None else str(value)
    if _has_header_control(subject):
        problems.append(
            f"`subject` contains a line break, a tab or another control character; write it on one line, {_AGAIN}."
        )
        return ""
    if not subject.strip():
        problems.append(f"The frontmatter needs `subject:` (the email's subject line); add it, {_AGAIN}.")
    return subject.strip()


def _attachments(value: Any, problems: list[str]) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if items is None or not all(isinstance(item, str) and item.strip() for item in items):
        problems.append(
            f"`attachments` must be a vault path or a list of vault paths (e.g. `- Files/report.pdf`), each "
            f"non-empty; fix it in the frontmatter, {_AGAIN}."
        )
        return ()
    if any(_has_header_control(item) for item in items):
        problems.append(f"An attachment path contains a line break or another control character; fix it, {_AGAIN}.")
        return ()
    return tuple(items)


def _header_text(field: str, value: Any, problems: list[str]) -> str | None:
    text = _text(value)
    if text is not None and _has_header_control(text):
        problems.append(f"`{field}` contains a line break or another control character; fix it, {_AGAIN}.")
        return None
    return text


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _domains(value: Any) -> tuple[str, ...]:
    """`confirm_domains:` — one domain or a list of them; anything else confirms nothing."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(
        str(item).strip().lstrip("@").lower()
        for item in items
        if isinstance(item, str) and item.strip() and not _has_header_control(item)
    )
