"""What a draft note's own `status:` says about sending it: the one answer every part of H0 uses.

A note's word counts, whoever asks — the daemon, `h0 sweep`, the mail server's
`send_approved_draft`, the reports. Only a note whose status says it awaits sending is ever
sent: no status (a note a person wrote by hand), `pending_approval` (H0's drafts), `approved`,
`draft`, and `held` / `not_sent` (a draft H0 gave back with a reason: fixed and moved to
Approved/ again, it is a new approval). `rejected` is filed in Done/, never sent. `sent` and
`withdrawn` are never sent either; any other word (an email note's `pending`, a typo) is not
a promise to send, so it is refused with the fix, rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class DraftState(Enum):
    AWAITS_SENDING = "awaits_sending"
    REJECTED = "rejected"
    SENT = "sent"
    WITHDRAWN = "withdrawn"
    UNKNOWN = "unknown"  # a status word that does not say "send me"


# Words that mean "this draft awaits sending" (compared lower-cased, trimmed).
SENDABLE = frozenset({"", "pending_approval", "approved", "draft", "held", "not_sent"})
_TERMINAL = {"rejected": DraftState.REJECTED, "sent": DraftState.SENT, "withdrawn": DraftState.WITHDRAWN}
MAX_WORD = 60  # a status longer than this is shown cut


@dataclass(frozen=True, slots=True)
class Status:
    state: DraftState
    word: str  # the status as written (lower-cased, trimmed; "" when absent)

    @property
    def sendable(self) -> bool:
        return self.state is DraftState.AWAITS_SENDING


def status_word(frontmatter: Mapping[str, Any]) -> str:
    value = frontmatter.get("status")
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return "(a list)" if isinstance(value, list) else "(a mapping)"
    return str(value).strip().lower()


def draft_status(frontmatter: Mapping[str, Any]) -> Status:
    """The state a note's frontmatter gives it as a draft."""
    word = status_word(frontmatter)
    if word in SENDABLE:
        return Status(DraftState.AWAITS_SENDING, word)
    return Status(_TERMINAL.get(word, DraftState.UNKNOWN), word)


def refusal_words(status: Status, frontmatter: Mapping[str, Any]) -> dict[str, str]:
    """The facts the human's wording of a status refusal names (h0.errors.WORDING): when it was sent,
    why it was withdrawn, the status as written."""
    when = frontmatter.get("sent_at")
    why = str(frontmatter.get("withdrawn_reason") or "").strip()[:300]
    return {
        "since": f" on {str(when)[:40]}" if when else "",
        "because": f" ({why})" if why else "",
        "shown": status.word[:MAX_WORD],
    }
