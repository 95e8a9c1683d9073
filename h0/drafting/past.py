"""The owner's past replies: what they sent, to whom, in their own words.

Two sources, and the owner's identity (h0.mail.owner) vouches for every one. Notes in `Done/`
that hold the owner's words — the very note H0 filed when it sent a reply, or wrote when it
imported the owner's sent mail — re-listed when the folder changes; any other note there
(`status: sent` or `type: sent_email` written by an agent, a program or by hand) is not the
owner's writing and is never learned from. And the provider's sent mail the sync brought: its
text is kept in H0's state folder, outside the vault (h0.drafting.learning.remember_sent, fed
only what the owner's identity recorded), so assembling a context never waits on the network.
Every text is cut by the reply parser (quoted history and signature out) before it is learned
from or shown to a model.

A private reply is never a past reply (h0.vault.disclosure): one marked private, and one of a
private thread (a private email or reply in Done/ with the same thread key); a provider's sent
message of such a thread neither.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from email.utils import getaddresses
from pathlib import Path
from typing import Any

from h0.drafting.folderfiles import FolderFiles
from h0.drafting.knowledgenotes import tokens
from h0.drafting.replytext import ReplyParts, split_reply
from h0.errors import H0Error
from h0.mail.compose.drafts import message_body
from h0.mail.incoming.htmltext import block_text
from h0.mail.owner import OwnerAuthority, note_message_key
from h0.state.history import HistoryMessage, MailHistory
from h0.vault import frontmatter
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.draft_state import DraftState
from h0.vault.layout import DONE
from h0.vault.model import Kind, note_facts, note_kind, note_status
from h0.vault.note import content_hash, decode
from h0.vault.own_writes import OwnWrites
from h0.vault.paths import NOTE_SUFFIX

MAX_READ_BYTES = 256 * 1024
MAX_TEXT_CHARS = 6_000
SENT_CACHE_FILE = "sent_mail.jsonl"
MAX_CACHED_SENT = 2_000
RECHECK_S = 5.0  # a note not (yet) vouched for is asked about again this much later (H0 files, then records)


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
    texts: list[str] = []
    for value in values:
        if isinstance(value, (list, tuple)):
            texts += [str(v) for v in value if v]
        elif value:
            texts.append(str(value))
    return tuple(dict.fromkeys(a.lower() for _, a in getaddresses(texts) if "@" in a))


def epoch(value: Any) -> float:
    """A frontmatter timestamp (a YAML datetime or ISO 8601 text) as epoch seconds; 0 when absent or unreadable."""
    if isinstance(value, dt.datetime):
        stamp = value
    else:
        try:
            stamp = dt.datetime.fromisoformat(str(value or "").strip())  # 3.11 reads a trailing Z
        except ValueError:
            return 0.0
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.UTC)
    return stamp.timestamp()


class PastReplies:
    """The owner's sent replies, by recipient (thread-safe; refreshed on each call, cheaply)."""

    def __init__(
        self,
        root: Path,
        sent_cache: Path | None = None,
        disclosure: Disclosure | None = None,
        owner: OwnerAuthority | None = None,
        history: MailHistory | None = None,
    ) -> None:
        self.root = Path(root)
        self.sent_cache = sent_cache
        self.disclosure = disclosure if disclosure is not None else Disclosure.for_vault(self.root)
        self.owner = owner  # None: no note of Done/ can be vouched for (only the provider's sent mail counts)
        self._keys: dict[str, str] = {}  # name -> the message key the note names
        self._vouched: set[str] = set()  # names of the notes the owner's identity says hold the owner's words
        self._unvouched: set[str] = set()  # sent-looking, not vouched for yet: asked without a look at all of Done/
        self._asked_at = -math.inf
        self.history = history  # the owner's mail kept as history (h0 import, a first sync)
        self._history_sig: tuple[int, float] | None = None
        self._from_history: list[PastReply] = []
        self._lock = threading.Lock()
        self._done = FolderFiles(self.root / DONE)  # `watched` set by the owner (h0.drafting.service)
        self._notes: dict[str, tuple[PastReply | None, bool]] = {}  # name -> (reply, whether it is private itself)
        self._private_keys: dict[str, frozenset[str]] = {}  # name -> the thread keys a private note holds
        self._cache_sig: tuple[int, int] | None = None
        self._provider: list[PastReply] = []
        self._by_address: dict[str, list[PastReply]] = {}
        self._all: list[PastReply] = []
        self._worded: list[tuple[PastReply, set[str]]] = []  # each reply with its words, tokenised once per refresh
        self.written: OwnWrites | None = None  # what H0 wrote or parsed lately (the daemon's): Done/'s notes unparsed

    def changed(self, path: str | None) -> None:
        """A watcher's report: this note (absolute path) changed, appeared or went; None: any may have."""
        self._done.changed(path)

    def watched_by(self, watched: Callable[[], bool]) -> None:
        """`watched()` is True while a watcher of this process reports every note's change (`changed`)."""
        self._done.watched = watched

    def refresh(self) -> None:
        with self._lock:
            changed = self._refresh_done()
            changed = self._vouch() or changed
            changed = self._refresh_cache() or changed
            changed = self._refresh_history() or changed
            if changed:
                private: set[str] = set()
                for keys in self._private_keys.values():
                    private |= keys
                replies = [
                    r
                    for name, (r, own_private) in self._notes.items()
                    if r is not None and name in self._vouched and not own_private and not r.threads & private
                ]
                replies += [r for r in self._provider + self._from_history if not r.threads & private]
                replies.sort(key=lambda r: r.when, reverse=True)
                by_address: dict[str, list[PastReply]] = {}
                for reply in replies:
                    for address in reply.to:
                        by_address.setdefault(address, []).append(reply)
                self._all, self._by_address = replies, by_address
                self._worded = [(reply, reply.words()) for reply in replies]

    def to_address(self, address: str, limit: int = 3) -> list[PastReply]:
        """The latest replies sent to this address, newest first."""
        self.refresh()
        return list(self._by_address.get(address.strip().lower(), ())[:limit])

    def addressed_to(self, address: str, limit: int = 3) -> list[PastReply]:
        """The latest replies that spoke to this address (it was their first To:), newest first: what the
        owner's greeting and sign-off to this person are learned from — never mail they were only Cc'd on."""
        key = address.strip().lower()
        return [r for r in self.to_address(key, 10_000) if r.addressee == key][:limit]

    def all(self) -> list[PastReply]:
        self.refresh()
        return list(self._all)

    def similar(self, text: str, limit: int = 2, exclude: Iterable[PastReply] = ()) -> list[tuple[PastReply, float]]:
        """Replies to other emails that share the most words with `text` (each with its score, best first)."""
        self.refresh()
        if not self._worded:
            return []  # no reply to compare with: the email's words need not be found
        wanted = set(tokens(text[:20_000]))
        if not wanted:
            return []
        skip = {id(r) for r in exclude}
        scored = []
        for reply, words in self._worded:
            if id(reply) in skip:
                continue
            shared = len(wanted & words)
            if shared >= 3:
                scored.append((shared / math.sqrt(len(wanted) * len(words)), reply))
        scored.sort(key=lambda item: -item[0])
        return [(reply, round(score, 3)) for score, reply in scored[:limit] if score >= 0.12]

    # ------------------------------------------------------------------ Done/

    def _refresh_done(self) -> bool:
        """Read the notes of Done/ that appeared or changed, forget those that went; True when that changed
        a past reply or a private thread key (a burst files hundreds of emails there: none of them does)."""
        updated, gone = self._done.poll()
        changed = False
        for name in gone:
            changed = self._matters(name) or changed
            self._notes.pop(name, None)
            self._private_keys.pop(name, None)
            self._keys.pop(name, None)
            self._vouched.discard(name)
            self._unvouched.discard(name)
        for name in updated:
            before = self._matters(name)
            reply, private, keys = self._read_sent(f"{DONE}/{name}")
            self._notes[name] = (reply, private)
            self._private_keys[name] = keys
            self._vouched.discard(name)  # changed since it was vouched for: asked again
            if reply is not None:
                self._unvouched.add(name)
            else:
                self._unvouched.discard(name)
            changed = before or self._matters(name) or changed
        if changed:
            self._asked_at = -math.inf
        return changed

    def _matters(self, name: str) -> bool:
        """Whether the note `name` of Done/, as last read, is a past reply or makes a thread private."""
        reply, private = self._notes.get(name, (None, False))
        return reply is not None or private or bool(self._private_keys.get(name))

    def _vouch(self) -> bool:
        """Ask the owner's identity about the sent-looking notes not vouched for yet (on a change, or every
        RECHECK_S: H0 records where it filed a send just after filing it). True when one became the owner's."""
        if self.owner is None or time.monotonic() - self._asked_at < RECHECK_S:
            return False
        waiting = [(f"{DONE}/{n}", self._keys.get(n, "")) for n in sorted(self._unvouched)]
        if not waiting:
            return False
        self._asked_at = time.monotonic()
        try:
            found = self.owner.owned_notes(waiting)
        except H0Error:
            return False
        names = {path.removeprefix(f"{DONE}/") for path in found}
        self._vouched |= names
        self._unvouched -= names
        return bool(names)

    def _read_sent(self, rel: str) -> tuple[PastReply | None, bool, frozenset[str]]:
        """The note as a past reply (None: not one), whether it is private itself, and the thread keys it
        makes private (h0.vault.disclosure)."""
        try:
            with open(self.root / rel, "rb") as handle:
                data = handle.read(MAX_READ_BYTES)
            # An email H0 filed here (or parsed here lately) is known by its bytes' hash: not parsed again.
            known = (
                self.written.known(rel, content_hash(data))
                if self.written is not None and len(data) < MAX_READ_BYTES
                else None
            )
            if known is not None:
                fm, body = known.frontmatter, known.body
            else:
                text = decode(data, rel) if len(data) < MAX_READ_BYTES else data.decode("utf-8", "ignore")
                parts = frontmatter.split(text)
                fm, body = frontmatter.load(parts.yaml), parts.body
        except (OSError, H0Error, ValueError):
            return None, False, frozenset()
        self._keys[rel.removeprefix(f"{DONE}/")] = note_message_key(fm)
        private = self.disclosure.own_private(rel, fm, body)
        return sent_reply(rel, fm, body), private, thread_keys(rel, fm) if private else frozenset()

    # ------------------------------------------------------------------ provider sent mail

    def _refresh_cache(self) -> bool:
        if self.sent_cache is None:
            return False
        try:
            st = os.stat(self.sent_cache)
            signature = (st.st_mtime_ns, st.st_size)
        except OSError:
            signature = None
        if signature == self._cache_sig:
            return False
        self._cache_sig = signature
        self._provider = [r for r in (_cached_reply(rec) for rec in read_sent_cache(self.sent_cache)) if r is not None]
        return True

    # ------------------------------------------------------------------ history (h0.state.history)

    def _refresh_history(self) -> bool:
        if self.history is None:
            return False
        try:
            signature = self.history.sent_signature()
        except H0Error:
            return False
        if signature == self._history_sig:
            return False
        self._history_sig = signature
        try:
            kept = self.history.sent(MAX_CACHED_SENT)
        except H0Error:
            return False
        self._from_history = [r for r in (_kept_reply(m) for m in kept) if r is not None]
        return True


def _kept_reply(message: HistoryMessage) -> PastReply | None:
    to = tuple(addr for _, addr in message.recipients)
    if not to or not message.text.strip():
        return None
    parts = split_reply(message.text[:MAX_TEXT_CHARS])
    ids = {"thread_id": message.thread, "message_id": message.provider_id or message.key}
    return PastReply(
        to,
        message.subject[:300],
        message.at,
        parts.text,
        parts,
        None,
        "sent mail",
        threads=thread_keys("", ids),
        addressee=to[0],  # history keeps To before Cc: the first is whom the reply spoke to
    )


def sent_reply(rel: str, fm: dict[str, Any], body: str) -> PastReply | None:
    """A note of Done/ as a past reply: only one that was sent (`status: sent`) and is not an email."""
    # The two cheap readers first (a burst files hundreds of emails in Done/), the whole model for the few sent.
    if note_kind(fm) is Kind.EMAIL or note_status(fm).state is not DraftState.SENT:
        return None
    facts = note_facts(rel, fm)
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
        rel,
        "vault",
        threads=thread_keys(rel, fm),
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


def _cached_reply(record: dict[str, Any]) -> PastReply | None:
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
