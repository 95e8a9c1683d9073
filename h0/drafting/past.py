"""The owner's past replies: what they sent, to whom, in their own words.

Two sources, and the owner's identity (h0.mail.owner) vouches for every one. Notes in `Done/`
that hold the owner's words — the very note H0 filed when it sent a reply, or wrote when it
imported the owner's sent mail — re-listed when the folder changes; any other note there
(`status: sent` or `type: sent_email` written by an agent, a program or by hand) is not the
owner's writing and is never learned from. And the provider's sent mail the sync brought: its
text is kept in H0's state folder, outside the vault (h0.drafting.learning.remember_sent, fed
only what the owner's identity recorded), so assembling a context never waits on the network.
Every text is cut by the reply parser (quoted history and signature out) before it is learned
from or shown to a model (each source's messages as `PastReply`: h0.drafting.pastreply).

A private reply is never a past reply (h0.vault.disclosure): one marked private, and one of a
private thread — a thread key of its shared by a note private by itself anywhere in the vault (marked,
tagged, in a private folder: a reply filed there, the email it answered, the owner's note of the
conversation); the owner's sent mail kept as history and the provider's sent mail of such a thread
neither. Which keys private notes hold is asked when replies are given (h0.vault.private_threads: the
vault index, one look-up a call), so a note made private a moment ago counts at once, and the gate
answers for each reply (`Disclosure.keys_private`); when the vault cannot say, no reply is given.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from h0.drafting.folderfiles import FolderFiles
from h0.drafting.knowledgenotes import tokens
from h0.drafting.pastreply import MAX_CACHED_SENT, PastReply, cached_reply, kept_reply, read_sent_cache, sent_reply
from h0.errors import H0Error
from h0.mail.owner import OwnerAuthority, note_message_key
from h0.platform.fs import regular_file
from h0.state.history import MailHistory
from h0.vault import frontmatter
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.layout import DONE
from h0.vault.model import note_facts
from h0.vault.note import decode
from h0.vault.private_threads import PrivateThreads, ScannedThreads

MAX_READ_BYTES = 256 * 1024
SENT_CACHE_FILE = "sent_mail.jsonl"
RECHECK_S = 5.0
# A reply to another email is given only when it is about what the email is about: at least this many words
# shared, and a rarity-weighted cosine of at least SIMILAR_FLOOR. Measured on the labelled world
# (scripts/bench/bench_relevance.py --world): replies scoring under it were about something else.
MIN_SHARED = 2
SIMILAR_FLOOR = 0.3
TOPICAL_SHARE = 0.05  # a shared word rarer than this among the replies is one of the email's topic  # a note not (yet) vouched for is asked about again this much later (H0 files, then records)


# Each reply with its words and their weighted length; each word's weight (h0.drafting.past._vocabulary).
_Vocabulary = tuple[list[tuple[PastReply, set[str], float]], dict[str, float]]


class PastReplies:
    """The owner's sent replies, by recipient (thread-safe; refreshed on each call, cheaply)."""

    def __init__(
        self,
        root: Path,
        sent_cache: Path | None = None,
        disclosure: Disclosure | None = None,
        owner: OwnerAuthority | None = None,
        history: MailHistory | None = None,
        *,
        threads: PrivateThreads | None = None,
    ) -> None:
        self.root = Path(root)
        self.sent_cache = sent_cache
        self.disclosure = disclosure if disclosure is not None else Disclosure.for_vault(self.root)
        # Which thread keys private notes hold (the vault index's answer; without one, a walk of the vault).
        self.threads = threads if threads is not None else ScannedThreads(self.root, self.disclosure)
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
        self._cache_sig: tuple[int, int] | None = None
        self._provider: list[PastReply] = []
        self._by_address: dict[str, list[PastReply]] = {}
        self._all: list[PastReply] = []
        # Each reply with its words (tokenised once per refresh) and their weighted length, and each word's weight
        # (how rare it is among the replies): one value, replaced whole, so a reader never mixes two refreshes.
        self._worded: _Vocabulary = ([], {})

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
                replies = [
                    r
                    for name, (r, own_private) in self._notes.items()
                    if r is not None and name in self._vouched and not own_private
                ]
                replies += self._provider + self._from_history
                replies.sort(key=lambda r: r.when, reverse=True)
                by_address: dict[str, list[PastReply]] = {}
                for reply in replies:
                    for address in reply.to:
                        by_address.setdefault(address, []).append(reply)
                self._all, self._by_address = replies, by_address
                self._worded = _vocabulary(replies)

    def to_address(self, address: str, limit: int = 3) -> list[PastReply]:
        """The latest replies sent to this address, newest first."""
        self.refresh()
        return self._shown(self._by_address.get(address.strip().lower(), ()), limit)

    def addressed_to(self, address: str, limit: int = 3) -> list[PastReply]:
        """The latest replies that spoke to this address (it was their first To:), newest first: what the
        owner's greeting and sign-off to this person are learned from — never mail they were only Cc'd on."""
        key = address.strip().lower()
        self.refresh()
        return self._shown((r for r in self._by_address.get(key, ()) if r.addressee == key), limit)

    def all(self) -> list[PastReply]:
        self.refresh()
        return self._shown(self._all)

    def _shown(self, replies: Iterable[PastReply], limit: int | None = None) -> list[PastReply]:
        """Those of `replies`, in order (up to `limit`), of no private thread: the keys private notes hold asked
        of the vault a batch of replies at a time, the gate answering for each; none when the vault cannot say."""
        shown: list[PastReply] = []
        pending = iter(replies)
        while limit is None or len(shown) < limit:
            batch = list(itertools.islice(pending, 500 if limit is None else 4 * limit))
            if not batch:
                break
            found = self.threads.private_keys(frozenset().union(*(r.threads for r in batch)))
            if found is None:
                break  # fail closed: a reply whose thread may be private is never given
            shown += [r for r in batch if not self.disclosure.keys_private(r.threads, found)]
        return shown if limit is None else shown[:limit]

    def similar(self, text: str, limit: int = 2, exclude: Iterable[PastReply] = ()) -> list[tuple[PastReply, float]]:
        """Replies to other emails about what `text` is about (each with its score, best first): the words they
        share weighted by how rare each is among the owner's replies (a word the owner writes in every reply —
        "week", "send", "Woche" — says nothing), as a cosine from 0 to 1; only those scoring SIMILAR_FLOOR or more."""
        self.refresh()
        worded, rarity = self._worded
        if not worded:
            return []  # no reply to compare with: the email's words need not be found
        wanted = set(tokens(text[:20_000]))
        if not wanted:
            return []
        unseen = math.log(len(worded) + 1) + 1.0  # a word no reply holds: as rare as a word can be
        # A word of the topic: in at most TOPICAL_SHARE of the replies (or 2, with few of them).
        topical = _weight(len(worded), max(2, int(len(worded) * TOPICAL_SHARE)))
        norm = math.sqrt(sum(rarity.get(w, unseen) ** 2 for w in wanted))
        skip = {id(r) for r in exclude}
        scored = []
        for reply, words, length in worded:
            if id(reply) in skip:
                continue
            shared = wanted & words
            if len(shared) < MIN_SHARED or max(rarity[w] for w in shared) < topical:
                continue  # no word of the email's topic: the owner's everyday words alone say nothing
            score = sum(rarity[w] ** 2 for w in shared) / (norm * length)
            if score >= SIMILAR_FLOOR:
                scored.append((score, reply))
        scored.sort(key=lambda item: -item[0])
        scores = {id(reply): score for score, reply in scored}
        return [(reply, round(scores[id(reply)], 3)) for reply in self._shown((r for _, r in scored), limit)]

    # ------------------------------------------------------------------ Done/

    def _refresh_done(self) -> bool:
        """Read the notes of Done/ that appeared or changed, forget those that went; True when that changed
        a past reply or a private thread key (a burst files hundreds of emails there: none of them does)."""
        updated, gone = self._done.poll()
        changed = False
        for name in gone:
            changed = self._matters(name) or changed
            self._notes.pop(name, None)
            self._keys.pop(name, None)
            self._vouched.discard(name)
            self._unvouched.discard(name)
        for name in updated:
            before = self._matters(name)
            reply, private = self._read_sent(f"{DONE}/{name}")
            self._notes[name] = (reply, private)
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
        """Whether the note `name` of Done/, as last read, is a past reply."""
        return self._notes.get(name, (None, False))[0] is not None

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

    def _read_sent(self, rel: str) -> tuple[PastReply | None, bool]:
        """The note as a past reply (None: not one), and whether it is private itself (h0.vault.disclosure)."""
        try:
            with regular_file(self.root / rel) as handle:
                data = handle.read(MAX_READ_BYTES)
            text = decode(data, rel) if len(data) < MAX_READ_BYTES else data.decode("utf-8", "ignore")
            parts = frontmatter.split(text)
            fm, body = frontmatter.load(parts.yaml), parts.body
        except (OSError, H0Error, ValueError):
            return None, False
        facts = note_facts(rel, fm)
        self._keys[rel.removeprefix(f"{DONE}/")] = note_message_key(facts)
        return sent_reply(facts, body, thread_keys(rel, fm)), self.disclosure.own_private(rel, fm, body)

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
        self._provider = [r for r in (cached_reply(rec) for rec in read_sent_cache(self.sent_cache)) if r is not None]
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
        self._from_history = [r for r in (kept_reply(m) for m in kept) if r is not None]
        return True


def _vocabulary(replies: list[PastReply]) -> _Vocabulary:
    """Each reply with its words and their weighted length, and each word's weight among these replies."""
    worded = [(reply, reply.words()) for reply in replies]
    counts: dict[str, int] = {}
    for _, words in worded:
        for word in words:
            counts[word] = counts.get(word, 0) + 1
    rarity = {word: _weight(len(worded), count) for word, count in counts.items()}
    lengths = [math.sqrt(sum(rarity[w] ** 2 for w in words)) or 1.0 for _, words in worded]
    return [(reply, words, length) for (reply, words), length in zip(worded, lengths, strict=True)], rarity


def _weight(replies: int, holding: int) -> float:
    """A word's weight when `holding` of `replies` replies hold it: a smoothed inverse document frequency (a word
    in every reply weighs about 1, one in a single reply about ln(n) + 1)."""
    return math.log((replies + 1) / (holding + 1)) + 1.0
