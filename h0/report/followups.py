"""What the reports show of follow-ups: replies owed, replies awaited, snoozed and woken notes.

One collector, `collect_followups`, for `h0 status`, the dashboard and the daily briefing (each
renders its own section). It reads the vault only — Needs_Action/ and Drafts/, listed with their
frontmatter (cached by mtime and size) — so what it says is what the notes say: an email note
with `follow_up: reply_owed`, a follow-up note with `follow_up: reply_awaited`, a note whose
`snooze_until` is still ahead (hidden: the other sections leave it out too), one woken in the
last day (`snooze_woke_at`). Ages are whole working days (h0.followup.workdays). A private note (the
caller's `private`: the disclosure gate as the vault index answers for it, h0.report.privacy) is counted in
its section (`owed_private`, …), never listed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from h0.errors import H0Error
from h0.followup.snooze import is_hidden
from h0.followup.workdays import working_days_between
from h0.vault import Vault
from h0.vault.audit import epoch_timestamp
from h0.vault.layout import DRAFTS, NEEDS_ACTION
from h0.vault.model import note_facts

SHOWN = 10
BACK_WITHIN_S = 86400.0


@dataclass(frozen=True, slots=True)
class OwedReply:
    path: str
    sender: str
    subject: str
    since: str  # ISO 8601 UTC: when the email arrived
    working_days: int


@dataclass(frozen=True, slots=True)
class AwaitedReply:
    path: str
    waiting_on: str
    subject: str
    since: str  # when the owner asked
    working_days: int
    draft: str | None


@dataclass(frozen=True, slots=True)
class BackFromSnooze:
    path: str
    subject: str
    at: str
    reason: str


@dataclass
class FollowupStatus:
    owed: list[OwedReply] = field(default_factory=list)
    owed_total: int = 0
    awaited: list[AwaitedReply] = field(default_factory=list)
    awaited_total: int = 0
    snoozed_total: int = 0
    back: list[BackFromSnooze] = field(default_factory=list)
    # How many of each section's notes are private: counted in its total, never listed.
    owed_private: int = 0
    awaited_private: int = 0
    back_private: int = 0
    hidden: frozenset[str] = frozenset()  # paths snoozed right now (the other sections leave them out)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["hidden"] = sorted(self.hidden)
        return data


# The keys a note must hold to be snoozed, back from a snooze, or owed or awaited (the follow-up pass's own
# `follow_up`): a fresh `h0 status` reads only such notes' frontmatter, not every email's.
MENTIONED = ("snooze_", "follow_up")


def collect_followups(
    vault: Vault,
    now: float,
    *,
    private: Callable[[str], bool],
    shown: int = SHOWN,
) -> FollowupStatus:
    """Replies owed and awaited (oldest first), snoozed notes, notes back from a snooze (see the module docstring).
    `private(path)`: whether a note may not be named (then it is only counted)."""
    status = FollowupStatus()
    notes: list[tuple[str, dict[str, Any]]] = []
    for folder, recursive in ((NEEDS_ACTION, True), (DRAFTS, False)):
        try:
            listing = vault.list_notes(folder, recursive=recursive, with_frontmatter=True, mentioning=MENTIONED)
        except H0Error:
            continue
        notes += [(n.path, n.frontmatter or {}) for n in listing.notes]
    hidden: set[str] = set()
    owed: list[OwedReply] = []
    awaited: list[AwaitedReply] = []
    back: list[BackFromSnooze] = []
    for path, fm in notes:
        facts = note_facts(path, fm)
        if is_hidden(facts, now):
            hidden.add(path)
            continue
        secret = private(path)
        woke = facts.snooze.woke_at
        if woke is not None and now - BACK_WITHIN_S <= woke <= now + 60 and secret:
            status.back_private += 1
        elif woke is not None and now - BACK_WITHIN_S <= woke <= now + 60:
            back.append(
                BackFromSnooze(
                    path,
                    facts.subject,
                    facts.snooze.woke_at_written,
                    facts.snooze.woke_reason,
                )
            )
        if not path.startswith(f"{NEEDS_ACTION}/") or not facts.follow_up:
            continue  # most notes: the follow-up pass marked none
        if secret and facts.follow_up == "reply_owed":
            status.owed_private += 1
        elif secret and facts.follow_up == "reply_awaited" and facts.status.word == "awaiting_reply":
            status.awaited_private += 1
        elif facts.follow_up == "reply_owed":
            since = facts.follow_up_marks.reply_owed_since or facts.received or now
            owed.append(
                OwedReply(
                    path, facts.sender_text, facts.subject, epoch_timestamp(since), working_days_between(since, now)
                )
            )
        elif facts.follow_up == "reply_awaited" and facts.status.word == "awaiting_reply":
            since = facts.follow_up_marks.asked_at or now
            awaited.append(
                AwaitedReply(
                    path,
                    facts.follow_up_marks.awaiting_from,
                    facts.subject,
                    epoch_timestamp(since),
                    working_days_between(since, now),
                    facts.follow_up_marks.draft or None,
                )
            )
    owed.sort(key=lambda item: (item.since, item.path))
    awaited.sort(key=lambda item: (item.since, item.path))
    back.sort(key=lambda item: (item.at, item.path), reverse=True)
    status.owed, status.owed_total = owed[:shown], len(owed) + status.owed_private
    status.awaited, status.awaited_total = awaited[:shown], len(awaited) + status.awaited_private
    status.snoozed_total, status.hidden = len(hidden), frozenset(hidden)
    status.back = back[:shown]
    return status


def age(days: int) -> str:
    """'today', '1 working day', '3 working days'."""
    return "today" if days <= 0 else f"{days} working day{'s' if days != 1 else ''}"
