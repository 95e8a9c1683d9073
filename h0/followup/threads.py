"""What a conversation owes and awaits, from its messages alone: the one rule both follow-ups use.

A thread is the messages H0 saw in it (h0.followup.ledger), received or sent by the owner from any
client, in order of when they were written. The owner's messages are those the owner's identity
(h0.mail.owner) says the owner wrote — the provider's sent mail, an import's sent mail, H0's own
sends — never one merely From an address of the owner's: the follow-up pass sets `outbound` from it.

- **Owed**: messages received after the owner last wrote in the thread, from people — not
  machine-made mail (auto-replies, bounces, lists, notifications: h0.mail.incoming.automated), not
  the owner, and not a message From one of the owner's addresses that the evidence does not make the
  owner's (a forged From). Whether each one needs an answer is `reply_needed`: triage's word on the
  email note and the email's own words (does it ask the owner something?); the follow-up pass asks
  it when the deadline passes.
- **Awaited**: the owner's last message, when it asks something (h0.followup.asks, or a note's
  `awaiting: true`; `awaiting: false` says never), was sent to at least one person who is neither
  the owner nor a mailing list, and nothing that counts as an answer came after it. An
  auto-reply or a bounce is never an answer, and an auto-reply the owner's mailbox sent never
  awaits one. An **answer** comes from someone the owner wrote to in the thread (To or Cc of the
  owner's messages: a colleague in Cc counts, a list the owner wrote to counts) and is dated after
  the owner's message: a stranger who writes into the thread, or a message dated before the
  owner's, never closes a follow-up. And nobody is awaited who wrote to the owner since, in any
  thread (`heard`: the pass looks it up in the ledger): the owner has heard from them, and a nudge
  about the old question would cross their new message.

Times are when a message was written, never later than when H0 first saw it: a Date in the future
cannot postpone a deadline. Ties go to the order H0 saw the messages in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

NOT_ANSWERS = frozenset({"auto_reply", "bounce"})


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a thread, as the ledger keeps it."""

    key: str  # its Message-ID, else "id:" + the provider's id
    thread: str
    outbound: bool  # the owner sent it (the provider's sent mail, or H0)
    sender: str  # the From address, lower-case
    recipients: tuple[tuple[str, str], ...]  # (display name, lower-case address) of To and Cc
    subject: str
    at: float
    seen_at: float = 0.0
    provider_id: str | None = None
    automated: str | None = None  # auto_reply | bounce | list | notification (h0.mail.incoming.automated)
    list_address: str | None = None
    asks: bool | None = None  # the owner's message asks something (None: not judged)
    ask: str | None = None
    note: str | None = None  # the note H0 wrote for it, when it was received

    @property
    def order(self) -> tuple[float, float, str]:
        return (self.at, self.seen_at, self.key)


@dataclass(frozen=True, slots=True)
class Assessment:
    owner_last: Message | None = None  # the owner's latest message (auto-replies aside)
    unanswered: tuple[Message, ...] = ()  # received from people after it: each may owe a reply
    answer: Message | None = None  # the latest message after it that counts as an answer
    awaited: Message | None = None  # the owner's message still waiting for an answer
    waiting_on: tuple[tuple[str, str], ...] = ()  # its recipients who are people (not the owner, not a list)
    new_from_others: tuple[Message, ...] = field(default=())  # filled by `since` (see assess)
    heard_from: tuple[str, float] | None = None  # (address, when): a person waited on wrote since, in any thread


def is_owners(message: Message) -> bool:
    """The owner wrote it: `outbound`, as the owner's identity (h0.mail.owner) says — never its From address."""
    return message.outbound


def assess(
    messages: Iterable[Message],
    owner: frozenset[str],
    lists: frozenset[str] = frozenset(),
    override: bool | None = None,
    *,
    since: float | None = None,
    heard: Mapping[str, float] | None = None,
) -> Assessment:
    """Owed and awaited for one thread (see the module docstring). `since`: also list the messages from
    others (people or lists, not robots) that H0 first saw after that moment — what wakes a snoozed note.
    `heard`: when each person last wrote to the owner, in any thread (h0.followup.ledger.last_heard)."""
    ordered = sorted(messages, key=lambda m: m.order)
    mine = [m for m in ordered if is_owners(m) and m.automated not in NOT_ANSWERS]
    theirs = [m for m in ordered if not is_owners(m) and m.automated not in NOT_ANSWERS]
    last = mine[-1] if mine else None
    after = [m for m in theirs if last is None or m.order > last.order]
    # From one of the owner's addresses but not the owner's by the evidence: not a stranger asking the owner
    # either (a forged From) — never owed, never an answer.
    others = [m for m in after if m.sender not in owner]
    unanswered = tuple(m for m in others if m.automated != "list")
    written_to = {addr for m in mine for _, addr in m.recipients}
    answers = [m for m in others if m.sender in written_to or (m.list_address or "") in written_to]
    answer = answers[-1] if answers else None
    awaited: Message | None = None
    waiting_on: tuple[tuple[str, str], ...] = ()
    heard_from: tuple[str, float] | None = None
    if last is not None and answer is None:
        people = tuple((name, addr) for name, addr in last.recipients if addr not in owner and addr not in lists)
        asked = override if override is not None else bool(last.asks)
        later = sorted((at, addr) for _, addr in people if (at := (heard or {}).get(addr, 0.0)) > last.at)
        if later:
            heard_from = (later[-1][1], later[-1][0])
        elif asked and people:
            awaited, waiting_on = last, people
    new = tuple(m for m in theirs if since is not None and m.seen_at > since)
    return Assessment(last, unanswered, answer, awaited, waiting_on, new, heard_from)


def reply_needed(decision: str, asks: bool | None) -> bool:
    """Does an email (from a person, not yet answered) need a reply from the owner? Triage's `decision:` on its
    note ("" while it is not triaged yet) and its own words: a reply drafted (`draft_reply`, `urgent`) is needed;
    one left for the owner to look at (`needs_info`) or not triaged yet needs one when it asks the owner
    something (h0.followup.asks; an email never judged counts as asking); archived, delegated: no."""
    if decision in ("draft_reply", "urgent"):
        return True
    return decision in ("", "pending", "needs_info") and asks is not False


def display_names(people: Sequence[tuple[str, str]], limit: int = 3) -> str:
    """'Dana Rivera', 'Dana Rivera and Bob', 'Dana, Bob and 2 others' — who an answer is awaited from."""
    names = [(name.strip() or addr) for name, addr in people]
    if len(names) > limit:
        return f"{', '.join(names[: limit - 1])} and {len(names) - limit + 1} others"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
