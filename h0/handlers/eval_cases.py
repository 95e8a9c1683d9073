"""Which of the owner's replies `h0 eval` can draft again, each with the email it answered.

Two places hold the owner's replies, and both count:
- **notes in `Done/`**: a reply H0 sent (or an import's `--as-notes` copy), paired with its email by the
  note's `source:` or the "Replying to [[…]]" link H0 wrote;
- **history** (h0.state.history): the owner's sent mail an import or a first sync kept without a note.
  A reply answers the message just before it in its thread — the thread is the root of its
  `References` (In-Reply-To when there is none), so in a conversation this is the message its
  In-Reply-To names — when that message is someone else's. The email is its note when it has one,
  else it is made from what history kept of it (sender, recipients, subject, date, its words).

Whose reply it is, is the owner's identity's to say (h0.mail.owner: the provider's sent mail, an import's
sent folder or Takeout label, H0's own sends), never a `From:` header, a note's `status: sent` or history's
own column. A pair whose email or reply is private — by its marks, its folder, its thread, or written by
or to a private person — is left out and counted (`EvalPrivacy`: the disclosure gate through the vault index).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from loguru import logger

from h0.drafting.replytext import split_reply
from h0.errors import H0Error
from h0.mail.headers import format_address
from h0.mail.incoming.htmltext import inert_block
from h0.mail.owner import OwnerAuthority, note_message_key
from h0.state.history import HistoryMessage, MailHistory
from h0.vault import Vault
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.layout import DONE, NEEDS_ACTION
from h0.vault.model import note_facts
from h0.vault.note import Note
from h0.vault.sendable import CUTOFF, message_body
from h0.vault.values import source_path

MAX_HISTORY_REPLIES = 5_000  # the owner's newest kept messages looked at
_LINK = re.compile(r"\[\[([^\]|#]+)")
_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class Case:
    """One reply the owner sent, and the email it answered."""

    email: Note  # as triage reads an email note (one of the vault's, or made from history)
    sent_text: str  # what the owner wrote: quoted history and signature cut
    sent_at: float  # epoch seconds (0: unknown)
    label: str  # how a report names the reply: its note's path, or its date and subject
    sent_path: str | None = None  # its note in Done/ (None: a reply kept as history)
    key: str = ""  # its message key (h0.mail.owner.message_key)


def find_cases(
    vault: Vault, history: MailHistory | None, limit: int, owner: OwnerAuthority, private: EvalPrivacy
) -> tuple[list[Case], int]:
    """The newest `limit` replies the owner's identity vouches for, with the email each answered, newest
    first; and how many newer pairs were left out as private."""
    found: list[Case] = []
    seen: set[str] = set()
    left_out = 0
    for _, item in _newest_first(vault, history, owner):
        if len(found) >= limit:
            break
        try:
            case = (
                _from_history(vault, history, item)
                if isinstance(item, HistoryMessage)
                else _from_note(vault, str(item))
            )
        except H0Error as error:
            logger.debug("h0 eval: a reply skipped ({})", error.message)
            continue
        if case is None or (case.key and case.key in seen):
            continue
        seen.add(case.key)
        if _private(case, item if isinstance(item, HistoryMessage) else None, private):
            left_out += 1  # never drafted again: its words would reach the model
            continue
        if case.sent_text:
            found.append(case)
    return found, left_out


def sent_times(vault: Vault) -> dict[str, float]:
    """When each reply filed in `Done/` was sent, by the note's name (a lesson's link names it)."""
    listing = vault.list_notes(DONE, "status:sent", with_frontmatter=True)
    times: dict[str, float] = {}
    for entry in listing.notes:
        sent_at = note_facts(entry.path, entry.frontmatter or {}).sent_at
        if sent_at:
            times[entry.path.rsplit("/", 1)[-1].removesuffix(".md")] = sent_at
    return times


def _newest_first(
    vault: Vault, history: MailHistory | None, owner: OwnerAuthority
) -> Iterator[tuple[float, str | HistoryMessage]]:
    """The replies the owner's identity vouches for, newest first: a note's path in Done/, or a kept message."""
    listing = vault.list_notes(DONE, "status:sent", with_frontmatter=True)
    vouched = owner.owned_notes(
        [(n.path, note_message_key(note_facts(n.path, n.frontmatter or {}))) for n in listing.notes]
    )
    items: list[tuple[float, str | HistoryMessage]] = [
        (note_facts(n.path, n.frontmatter or {}).sent_at or 0.0, n.path) for n in listing.notes if n.path in vouched
    ]
    if history is not None:
        try:
            kept = history.sent(MAX_HISTORY_REPLIES)
            theirs = owner.owned([m.key for m in kept])
        except H0Error as error:
            logger.warning("h0 eval: the mail kept as history cannot be read ({})", error.message)
            kept, theirs = [], {}
        items += [(m.at, m) for m in kept if m.key in theirs]
    items.sort(key=lambda item: item[0], reverse=True)
    yield from items


def _from_note(vault: Vault, path: str) -> Case | None:
    note = vault.read_note(path)
    email = _answered(vault, note)
    if email is None:
        return None
    text = split_reply(message_body(note.body)).text  # the owner's words: quoted history cut
    return Case(email, text, note.facts.sent_at or 0.0, path, path, note_message_key(note.facts))


def _answered(vault: Vault, sent: Note) -> Note | None:
    """The email a sent reply answered: its `source:` (any spelling of the link), else the "Replying to
    [[…]]" link H0 wrote; looked for by name in Done/ and Needs_Action/ (an answered email moves)."""
    links = [sent.facts.source, *(source_path(f"[[{link}]]") for link in _LINK.findall(sent.body.partition(CUTOFF)[2]))]
    for link in links:
        name = (link or "").rsplit("/", 1)[-1].removesuffix(".md")
        if not name:
            continue
        for folder in (DONE, NEEDS_ACTION):
            path = f"{folder}/{name}.md"
            if vault.exists(path):
                email = vault.read_note(path)
                if email.facts.is_email or not email.facts.type_word:  # no `type:` at all: an email too
                    return email
    return None


def _from_history(vault: Vault, history: MailHistory | None, reply: HistoryMessage) -> Case | None:
    if history is None:
        return None
    before = OwnerAuthority(history.state).vouched(history.thread(reply.thread, before=reply.at, limit=1))
    if not before or before[-1].outbound:
        return None  # it answers no one's email: the start of a conversation, or the owner writing again
    answered = before[-1]
    email = _email_note(vault, answered, reply)
    day = dt.datetime.fromtimestamp(reply.at, dt.UTC).strftime("%Y-%m-%d") if reply.at else "undated"
    label = reply.note or f"your sent mail of {day}, “{' '.join(reply.subject.split())[:60]}”"
    return Case(email, split_reply(reply.text).text, reply.at, label, reply.note, reply.key)


def _email_note(vault: Vault, message: HistoryMessage, reply: HistoryMessage) -> Note:
    """The email as triage reads a note: its own note when it has one, else made from what history kept."""
    if message.note and vault.exists(message.note):
        return vault.read_note(message.note)
    # History keeps the sender's address; the reply to them names them (its To: with display names).
    name = next((n for n, a in reply.recipients if a == message.sender), "")
    frontmatter = {
        "type": "email",
        "status": "pending",
        "message_id": message.provider_id or message.key,
        "rfc822_message_id": None if message.key.startswith("id:") else message.key,
        "thread_id": message.thread,
        "from": format_address(name, message.sender),
        "to": [a for _, a in message.recipients if a][:50],
        "subject": message.subject,
        "received": dt.datetime.fromtimestamp(message.at, dt.UTC).isoformat().replace("+00:00", "Z"),
        "labels": [],
    }
    path = f"{DONE}/EMAIL_{_SAFE_ID.sub('_', message.provider_id or message.key)}.md"
    return Note(path, frontmatter, inert_block(message.text), hash="")


def _private(case: Case, reply: HistoryMessage | None, private: EvalPrivacy) -> bool:
    """Whether the pair may not reach a model: the email or the reply private, or a private person's."""
    email = case.email
    if email.hash and private.note(email.path):
        return True  # a note of the vault: marked, tagged, in a private folder, of a private thread, a private person's
    if case.sent_path is not None and private.note(case.sent_path):
        return True
    keys = thread_keys(email.path, email.frontmatter) | (thread_keys("", reply.thread_fields()) if reply else set())
    people = [email.facts.sender, *email.facts.to, *email.facts.cc]
    if reply is not None:
        people += [reply.sender, *(a for _, a in reply.recipients)]
    return private.gate.message_private(keys, people, private.threads(keys))


@dataclass(frozen=True, slots=True)
class EvalPrivacy:
    """The disclosure gate as `h0 eval` asks it, through the vault index (h0.vault.index): `note(path)` — is this
    note of the vault private (its marks, folder, thread, a private person's); `threads(keys)` — which of these
    thread keys private notes hold (None: unknown, so private); `gate` — the gate, knowing the private people."""

    note: Callable[[str], bool]
    threads: Callable[[frozenset[str]], frozenset[str] | None]
    gate: Disclosure

    @classmethod
    def closed(cls, gate: Disclosure) -> EvalPrivacy:
        """When the index cannot be opened: everything is private (nothing is sent to a model)."""
        return cls(lambda _path: True, lambda _keys: None, gate)
