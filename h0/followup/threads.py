"""What a conversation owes and awaits, from its messages alone: the one rule both follow-ups use.

A thread is the messages H0 saw in it (h0.followup.ledger), received or sent by the owner from any
client, in order of when they were written. The owner's messages are those they sent (the
provider's sent mail, H0's own sends) and any from one of the owner's addresses (OWNER_EMAILS,
SMTP_FROM, SMTP_USER, IMAP_USER, and every address the owner's sent mail came from).

- **Owed**: messages received after the owner last wrote in the thread, from people — not
  auto-replies, not bounces, not mailing-list posts, not the owner. Whether each one needs an
  answer is the email note's word (triage: a draft waiting, urgent, needs_info): the follow-up
  pass reads it when the deadline passes.
- **Awaited**: the owner's last message, when it asks something (h0.followup.asks, or a note's
  `awaiting: true`; `awaiting: false` says never), was sent to at least one person who is neither
  the owner nor a mailing list, and nothing that counts as an answer came after it. An
  auto-reply or a bounce is never an answer, and an auto-reply the owner's mailbox sent never
  awaits one; a reply from anyone else in the thread (a colleague in Cc, a list post) is.

Times are when a message was written, never later than when H0 first saw it: a Date in the future
cannot postpone a deadline. Ties go to the order H0 saw the messages in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from h0.config import Settings

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
    automated: str | None = None  # auto_reply | bounce | list
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


def is_owners(message: Message, owner: frozenset[str]) -> bool:
    return message.outbound or message.sender in owner


def assess(
    messages: Iterable[Message],
    owner: frozenset[str],
    lists: frozenset[str] = frozenset(),
    override: bool | None = None,
    *,
    since: float | None = None,
) -> Assessment:
    """Owed and awaited for one thread (see the module docstring). `since`: also list the messages from
    others (people or lists, not robots) that H0 first saw after that moment — what wakes a snoozed note."""
    ordered = sorted(messages, key=lambda m: m.order)
    mine = [m for m in ordered if is_owners(m, owner) and m.automated not in NOT_ANSWERS]
    theirs = [m for m in ordered if not is_owners(m, owner) and m.automated not in NOT_ANSWERS]
    last = mine[-1] if mine else None
    after = [m for m in theirs if last is None or m.order > last.order]
    unanswered = tuple(m for m in after if m.automated != "list")
    answer = after[-1] if after else None
    awaited: Message | None = None
    waiting_on: tuple[tuple[str, str], ...] = ()
    if last is not None and answer is None:
        people = tuple((name, addr) for name, addr in last.recipients if addr not in owner and addr not in lists)
        asked = override if override is not None else bool(last.asks)
        if asked and people:
            awaited, waiting_on = last, people
    new = tuple(m for m in theirs if since is not None and m.seen_at > since)
    return Assessment(last, unanswered, answer, awaited, waiting_on, new)


def owner_addresses(settings: Settings, learned: Iterable[str] = ()) -> frozenset[str]:
    """The owner's addresses: OWNER_EMAILS (comma-separated), SMTP_FROM, SMTP_USER and IMAP_USER when they
    are addresses, and `learned` (the senders of the owner's sent mail), lower-case."""
    from email.utils import getaddresses

    values = [settings.owner_emails] + [
        value or "" for value in (settings.smtp_from, settings.smtp_user, settings.imap_user)
    ]
    found = {addr.strip().lower() for _, addr in getaddresses(values) if "@" in addr}
    found |= {a.strip().lower() for a in learned if a and "@" in a}
    return frozenset(found)


def display_names(people: Sequence[tuple[str, str]], limit: int = 3) -> str:
    """'Dana Rivera', 'Dana Rivera and Bob', 'Dana, Bob and 2 others' — who an answer is awaited from."""
    names = [(name.strip() or addr) for name, addr in people]
    if len(names) > limit:
        return f"{', '.join(names[: limit - 1])} and {len(names) - limit + 1} others"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
