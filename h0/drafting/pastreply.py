"""One message the owner sent, as drafting learns from it (`PastReply`), made from each of its sources: a note
of `Done/` (`sent_reply`), the provider's sent mail cached in H0's state folder (`read_sent_cache`,
`cached_reply`) and the owner's mail kept as history (`kept_reply`, h0.state.history). Each carries its thread
keys (h0.vault.disclosure.thread_keys), by which the gate tells a reply of a private conversation
(h0.drafting.past gives only the others). Every text is cut by the reply parser (quoted history and
signature out).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from h0.drafting.knowledgenotes import tokens
from h0.drafting.replytext import ReplyParts, split_reply
from h0.mail.incoming.htmltext import block_text
from h0.state.history import HistoryMessage
from h0.vault.dates import stamp_epoch
from h0.vault.disclosure import thread_keys
from h0.vault.draft_state import DraftState
from h0.vault.model import Kind, NoteFacts
from h0.vault.paths import NOTE_SUFFIX
from h0.vault.sendable import message_body
from h0.vault.values import addresses as parsed_addresses

MAX_TEXT_CHARS = 6_000
MAX_CACHED_SENT = 2_000


@dataclass(frozen=True, slots=True)
class PastReply:
    """One message the owner sent."""

    to: tuple[str, ...]  # lower-cased addresses (To and Cc)
    subject: str
    when: float  # epoch seconds (0 when unknown)
    text: str  # quoted history and signature cut; greeting and sign-off kept
    parts: ReplyParts
    path: str | None = None  # the note in Done/, for a sent draft
    source: str = "vault"  # "vault" (a sent draft in Done/) or "sent mail" (the provider's)
    threads: frozenset[str] = frozenset()  # its thread keys (h0.vault.disclosure.thread_keys)
    addressee: str = ""  # the first To: address — who the reply speaks to (never someone on Cc)

    @property
    def link(self) -> str:
        if self.path:
            return f"[[{self.path.rsplit('/', 1)[-1].removesuffix(NOTE_SUFFIX)}]]"
        day = time.strftime("%Y-%m-%d", time.gmtime(self.when)) if self.when else "undated"
        return f"your sent mail of {day}, “{self.subject[:60]}”"

    def words(self) -> set[str]:
        return set(tokens(f"{self.subject} {self.parts.body}"))


def addresses(*values: Any) -> tuple[str, ...]:
    """Lower-cased addresses from header-like values (strings or lists of them)."""
    return tuple(dict.fromkeys(a.lower() for value in values for a in parsed_addresses(value) if "@" in a))


def epoch(value: Any) -> float:
    """A frontmatter timestamp as epoch seconds (h0.vault.dates.stamp_epoch); 0 when absent or unreadable."""
    return stamp_epoch(value) or 0.0


def kept_reply(message: HistoryMessage) -> PastReply | None:
    to = tuple(addr for _, addr in message.recipients)
    if not to or not message.text.strip():
        return None
    parts = split_reply(message.text[:MAX_TEXT_CHARS])
    return PastReply(
        to,
        message.subject[:300],
        message.at,
        parts.text,
        parts,
        None,
        "sent mail",
        threads=thread_keys("", message.thread_fields()),
        addressee=to[0],  # history keeps To before Cc: the first is whom the reply spoke to
    )


def sent_reply(facts: NoteFacts, body: str, threads: frozenset[str]) -> PastReply | None:
    """A note of Done/ as a past reply: only one that was sent (`status: sent`) and is not an email.
    `threads`: its thread keys (h0.vault.disclosure.thread_keys)."""
    if facts.kind is Kind.EMAIL or facts.status.state is not DraftState.SENT:
        return None
    to = tuple(dict.fromkeys(a.lower() for a in (*facts.to, *facts.cc) if "@" in a))
    if not to:
        return None
    # An imported or synced sent message (`type: sent_email`) keeps its words in a code block, as ingest
    # writes every email; a sent draft is the note's text above the cut-off line.
    text = (block_text(body) if facts.kind is Kind.SENT_EMAIL else message_body(body))[:MAX_TEXT_CHARS]
    parts = split_reply(text)
    when = facts.sent_at or facts.drafted_at or facts.received or epoch(facts.date)
    addressee = next((a.lower() for a in facts.to if "@" in a), "")
    return PastReply(
        to,
        facts.subject[:300],
        when,
        parts.text,
        parts,
        facts.path,
        "vault",
        threads=threads,
        addressee=addressee,
    )


def read_sent_cache(path: Path) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()[-MAX_CACHED_SENT:]
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def cached_reply(record: dict[str, Any]) -> PastReply | None:
    to = addresses(record.get("to"), record.get("cc"))
    text = str(record.get("text") or "")
    if not to or not text.strip():
        return None
    parts = split_reply(text[:MAX_TEXT_CHARS])
    ids = {"thread_id": record.get("thread_id"), "message_id": record.get("id")}
    addressee = next(iter(addresses(record.get("to"))), "")
    return PastReply(
        to,
        str(record.get("subject") or "")[:300],
        float(record.get("when") or 0),
        parts.text,
        parts,
        None,
        "sent mail",
        threads=thread_keys("", ids),
        addressee=addressee,
    )
