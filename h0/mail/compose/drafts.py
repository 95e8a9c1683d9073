"""A draft note as a message: whether it may be sent, and its identity.

What a draft sends is the note model's strict view (h0.vault.sendable: recipients, subject, the text
above the cut-off line, attachments, every problem named); this module adds the checks of its text
and the send's identity.

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
from collections.abc import Sequence

from h0.errors import InvalidRequest
from h0.mail.deception import visible
from h0.vault.copies import original_name
from h0.vault.model import NoteFacts
from h0.vault.note import Note
from h0.vault.sendable import AGAIN, CUTOFF, Sendable, sendable

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


def parse_draft(note: Note) -> Sendable:
    """The draft's strict view (h0.vault.sendable.sendable) with the checks of its text, or InvalidRequest
    listing every problem: `details.problems` holds one sentence per problem, each saying how to fix the note."""
    view = sendable(note)
    problems = [*view.problems]
    _check_body(view.above, problems)
    if problems:
        message = (
            problems[0]
            if len(problems) == 1
            else (
                f"This draft has {len(problems)} problems: " + " ".join(f"({i}) {p}" for i, p in enumerate(problems, 1))
            )
        )
        raise InvalidRequest(message, problems=problems, path=view.path)
    return view


def identity(draft: Sendable, attachment_hashes: Sequence[str]) -> bytes:
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
    if len(attachment_hashes) != len(draft.attachments):
        raise ValueError(f"{len(draft.attachments)} attachments but {len(attachment_hashes)} hashes for {draft.path}")
    files = [[path, digest] for path, digest in zip(draft.attachments, attachment_hashes)]
    canonical: list[object] = [
        list(draft.to),
        list(draft.cc),
        list(draft.bcc),
        draft.subject,
        draft.body,
        files,
        draft.reply_to_message_id,
        draft.facts.source_key,
    ]
    if draft.facts.send_anyway:
        canonical.append(["send_anyway", own_name(draft.facts)])
    return json.dumps(canonical, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def own_name(facts: NoteFacts) -> str:
    """What tells this draft from another with the same words: its draft_id, else its file name
    without a sync tool's copy mark (h0.vault.copies), case-folded."""
    return facts.draft_id or original_name(facts.path.rsplit("/", 1)[-1]).casefold()


def _check_body(above: str, problems: list[str]) -> None:
    """Text that renders as nothing (h0.mail.deception.visible) and template markers above the cut-off."""
    problems += visible.problems(visible.find_in_markdown(above), cutoff=CUTOFF)
    markers = [n for n, line in enumerate(above.split("\n"), 1) if TEMPLATE_MARKER.match(line.strip())]
    if markers:
        problems.append(
            f"This draft still has H0's template marker line ([H0 draft — …]) at {visible.lines(markers)}, so "
            f"nobody has edited it yet; edit the reply and delete that line, {AGAIN}."
        )
    fills = [m.group(1) for m in PLACEHOLDER.finditer(above)]
    if fills:
        named = "; ".join(f"[FILL: {what}]" for what in list(dict.fromkeys(fills))[:10])
        problems.append(
            f"This draft still has {len(fills)} placeholder(s) H0 could not fill from your notes: {named}. Replace "
            f"each with the real fact (or delete it), {AGAIN}."
        )
