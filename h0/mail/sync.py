"""Incremental mail sync: what arrived since H0 last looked, for a few quota units, losing nothing.

The mailbox says what changed (Gmail: `users.history.list` from a durable `historyId`, 2 quota
units a call) instead of being searched on every poll (`messages.list`, 5 units, plus a read
of every message it returns). The cursor lives in H0's state database (`mail_sync`, one row
per backend and account), only ever moves forward, and moves past a message only once the
caller acknowledges it (`ack`): its note written and the message labelled
GMAIL_INGESTED_LABEL. A listing that has nothing to write moves it at once — so an idle poll is
one history call and nothing else.

Two handshakes keep a cursor honest. The token `list_new` hands out is MACed with the
installation's secret (a client cannot push the cursor past mail it never saw), and a slice
ends on a change boundary (one history record is never split between two slices).

Catch-up by query — GMAIL_QUERY minus the ingested label, newest first, at most
CATCH_UP_LIMIT messages an episode — when there is no cursor yet (first run), when Gmail no
longer keeps history that old (HTTP 404) or answers a history H0 cannot read (ids that are not
numbers, records without their message), every RECONCILE_EVERY_S as a reconciliation, and
soon after a message could not be written or read (with backoff). The profile's historyId is read
*before* the query, so what arrives during the catch-up is in the history after it. Only the
first catch-up reaches back before H0 started syncing this mailbox; later ones add
`after:<that time>`.

What GMAIL_QUERY means for new mail: new arrivals are matched against it as Gmail would.
Terms that are labels (`in:inbox`, `is:unread`, `is:read`, `is:starred`, `category:…`, with `-`)
are checked on the message's own labels, at no cost; `in:inbox` also narrows the history call
(`labelId=INBOX`). Any other term (`from:`, words, `OR`, …) is left to Gmail: one
`messages.list` for the query restricted to the new messages' dates (`after:`), 5 units, only
when there is new mail. Drafts never count; spam and trash only if the query asks for them.
The label on each ingested message stays the truth: whatever happens to the cursor, a message
carrying it is never returned again.

Sent mail, for follow-ups: the owner's messages from any client come back with each slice (`sent`),
read in the same round trips. Gmail: the history is then not narrowed to INBOX — it is the same
one call, and SENT messages are read in the same batch as the new mail. IMAP: the Sent folder is
a stream of its own (`sent_changes`, its UIDs from a cursor in `sent_sync`, one STATUS a poll
when nothing was sent). Either way the slice's token carries where the sent mail stands, so it is
acknowledged with the slice and a crash in between reads it again. A first sync and a catch-up by
query bring no sent mail: H0 follows it from the first history on.

A mailbox that keeps no label on a message (an IMAP server whose PERMANENTFLAGS have no `\\*`, so
the keyword is silently dropped): the backend says so (`Label.kept` False), and H0 keeps the mark
itself — in the state database's `ingested` table, by the provider's id (UIDVALIDITY-UID) and by
Message-ID — said once in the log. Everything else stays the same: the mark decides what was
ingested, a renumbered mailbox is matched by Message-ID, and `h0 doctor` says the mailbox itself
is not marked.

Messages are read and labelled in batch requests of at most the backend's `batch_limit` (50).
Gmail works a batch's parts in parallel and refuses the parts past its per-user concurrency
with 429 "Too many concurrent requests for user": those parts are retried after a pause, and
the number that got through becomes the batch size for CONCURRENCY_MEMORY_S — one batch in
flight at a time (h0.mail.gmail_batch) and that size are the cap on concurrent requests.
"""

from __future__ import annotations

import hmac
import math
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from loguru import logger

from h0.errors import AuthRequired, H0Error, InternalError, InvalidRequest, PermissionDenied, RateLimited
from h0.mail.backend import Added, Changes, ChangesUnreadable, CursorExpired, Fetched, Label, Mailbox, Position
from h0.mail.models import AckResult, SkippedEmail
from h0.mail.retry import RetryPolicy, is_retryable
from h0.retry import Backoff
from h0.state import StateDB

T = TypeVar("T")
CATCH_UP_LIMIT = 200  # messages one catch-up episode may bring in (the newest matching the query)
RECONCILE_EVERY_S = 6 * 3600.0  # a catch-up by query now and then: the label, not the cursor, is the truth
RETRY_AFTER_FAILURE_S = 30.0  # a message that could not be written: catch up after this, doubling, up to an hour
MAX_RETRY_AFTER_FAILURE_S = 3600.0
_CATCH_UP_BACKOFF = Backoff(RETRY_AFTER_FAILURE_S, 2.0, cap=MAX_RETRY_AFTER_FAILURE_S)
SINCE_MARGIN_S = 3600.0  # later catch-ups reach this far before the first sync (clock skew, delivery delay)
BULK_LABEL_FROM = 10  # from this many messages on, one batchModify (50 units) beats a modify each (5 units)
MAX_MATCH_LIST = 500  # one messages.list page when Gmail decides the query for new mail
CONCURRENCY_MEMORY_S = 300.0  # how long a batch size Gmail accepted without 429s is kept as the cap
_MAC_PURPOSE = "mail-sync-cursor"

# Query terms that are labels, checked on a message's label ids (the value: is the label wanted?).
_LABEL_TERMS: dict[str, tuple[str, bool]] = {
    "in:inbox": ("INBOX", True), "in:sent": ("SENT", True), "in:spam": ("SPAM", True), "in:trash": ("TRASH", True),
    "in:drafts": ("DRAFT", True), "in:draft": ("DRAFT", True), "in:starred": ("STARRED", True),
    "in:important": ("IMPORTANT", True), "in:chats": ("CHAT", True), "is:unread": ("UNREAD", True),
    "is:read": ("UNREAD", False), "is:starred": ("STARRED", True), "is:important": ("IMPORTANT", True),
    "category:primary": ("CATEGORY_PERSONAL", True), "category:social": ("CATEGORY_SOCIAL", True),
    "category:promotions": ("CATEGORY_PROMOTIONS", True), "category:updates": ("CATEGORY_UPDATES", True),
    "category:forums": ("CATEGORY_FORUMS", True),
}
_HIDDEN = {"SPAM", "TRASH"}


def ingest_query(query: str, ingested_label: str) -> str:
    """GMAIL_QUERY without what H0 already ingested."""
    quoted = f'"{ingested_label}"' if " " in ingested_label else ingested_label
    return f"{query} -label:{quoted}".strip()


class QueryFilter:
    """GMAIL_QUERY applied to one message's labels where that is possible (see the module docstring)."""

    def __init__(self, query: str) -> None:
        self.query = query
        try:
            words = shlex.split(query)
        except ValueError:
            words = query.split()
        structured = any(w.upper() in ("OR", "AND") or any(c in w for c in "{}()") for w in words)
        self.terms: list[tuple[str, bool]] | None = None if structured else []
        self.shows_hidden = "in:anywhere" in (w.lower() for w in words)
        for word in words:
            negated = word.startswith("-") and len(word) > 1
            term = _LABEL_TERMS.get((word[1:] if negated else word).lower())
            if term is not None and not negated and term[0] in _HIDDEN:
                self.shows_hidden = True
            if self.terms is None:
                continue
            if term is None:
                if word.lower() != "in:anywhere":
                    self.terms = None  # a term only Gmail can judge
                continue
            label, wanted = term
            self.terms.append((label, wanted != negated))
        self.history_label = "INBOX" if not structured and "in:inbox" in (w.lower() for w in words) else None

    def decide(self, labels: tuple[str, ...] | list[str] | None) -> bool | None:
        """True/False when the labels settle it, None when only Gmail can say."""
        if labels is None:
            return None
        present = set(labels)
        if "DRAFT" in present or (not self.shows_hidden and present & _HIDDEN):
            return False
        if self.terms is None:
            return None
        return all((label in present) == wanted for label, wanted in self.terms)


@dataclass
class Slice:
    """One answer of `list_new`: messages to write, oldest first, and the token that acknowledges them."""

    emails: list[Fetched]
    cursor: str
    more: bool
    mode: Literal["history", "catch_up"]
    skipped: list[SkippedEmail] = field(default_factory=list)  # could not be read
    sent: list[Fetched] = field(default_factory=list)  # the owner's sent mail in the same changes (follow-ups)


class MailSync:
    """The sync of one backend's mailbox into H0. Thread-safe; one per mail server process."""

    def __init__(self, backend: Mailbox, state: StateDB, policy: RetryPolicy, *, query: str, ingested_label: str,
                 clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep,
                 follow_sent: bool = True) -> None:
        self.backend = backend
        self.follow_sent = follow_sent
        self._sent_in_history = False  # the mailbox keeps no separate stream of sent mail (Gmail)
        self.state = state
        self.policy = policy
        self.filter = QueryFilter(query)
        self.label_name = ingested_label
        self.catch_up_query = ingest_query(query, ingested_label)
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.RLock()
        self._account: str | None = None
        self._label: Label | None = None
        self._learned: tuple[int, float] = (0, 0.0)  # (batch size, until when) after a 429 on concurrency
        self._marks_here = False  # the mailbox keeps no label: the `ingested` table holds the marks
        self._rfc822: dict[str, str | None] = {}  # provider id → Message-ID of what was fetched (local marks)

    # -- listing -------------------------------------------------------------------------

    def list_new(self, max_results: int) -> Slice:
        """The next messages to ingest, at most about `max_results` (a history record is never split)."""
        with self._lock:
            try:
                source, fresh = self._source()
                self._start_sent_stream(source)
                row = self.state.mail_sync(source) or {}
                due = row.get("catch_up_due")
                if row.get("catch_up") or row.get("cursor") is None:
                    return self._catch_up(source, row, max_results, fresh, "resuming" if row.get("catch_up") else "first sync")
                if due is not None and due <= self.clock():
                    return self._catch_up(source, row, max_results, fresh, "reconciliation")
                cursor = int(row["cursor"])
                try:
                    # Following sent mail too: the history is not narrowed to INBOX (the same one call).
                    label = None if self.follow_sent else self.filter.history_label
                    changes = self._retry("history", lambda: self.backend.changes_since(
                        cursor, label=label, limit=max_results + 1))
                except CursorExpired as expired:
                    logger.warning("mail sync: {} — catching up by query", expired.message)
                    return self._catch_up(source, row, max_results, fresh, "history expired")
                except ChangesUnreadable as unreadable:
                    # Not one of its ids is trusted; the query and the label still are.
                    logger.warning("mail sync: {} — catching up by query", unreadable.message)
                    return self._catch_up(source, row, max_results, fresh, "history unreadable")
                return self._history_slice(source, changes, max_results)
            except AuthRequired:
                self._account = None
                raise

    def _history_slice(self, source: str, changes: Changes, max_results: int) -> Slice:
        wanted = {a.message_id for a in changes.added if self.filter.decide(a.labels) is not False}
        candidates = [a for a in changes.added
                      if a.message_id in wanted or (self.follow_sent and _sent_labels(a.labels))]
        cursor, more = changes.cursor, not changes.complete
        if len(candidates) > max_results:
            cut = max_results
            while cut < len(candidates) and candidates[cut].position == candidates[cut - 1].position:
                cut += 1  # the rest of this record too: a cursor cannot point inside a record
            if cut < len(candidates):
                cursor, more = candidates[cut - 1].position, True
            candidates = candidates[:cut]
        own = self._sent_stream(source, max_results)
        ids = [a.message_id for a in candidates] + [a.message_id for a in (own[0] if own else [])]
        fetched, skipped = self._fetch(ids)
        self._retry_unreadable(source, skipped)
        emails = self._wanted(source, [f for f in fetched if f.id in wanted])
        sent = [f for f in fetched if _sent_labels(f.labels)] if self.follow_sent else []
        if not emails and not sent:
            self._advance(source, cursor)  # nothing to write: nothing to wait for
            if own:
                self.state.set_sent_cursor(source, own[1])
        values = [cursor, own[1]] if own else [cursor]
        return Slice(emails, self._token(source, "h", *values), more or bool(own and own[2]), "history", skipped, sent)

    def _start_sent_stream(self, source: str) -> None:
        """At the first sync: the sent mail is followed from now on (a catch-up reads none)."""
        if self.follow_sent and not self._sent_in_history and self.state.sent_cursor(source) is None:
            self._sent_stream(source, 1)

    def _sent_stream(self, source: str, limit: int) -> tuple[list[Added], int, bool] | None:
        """The owner's sent mail where the mailbox keeps it apart from the changes followed (IMAP's Sent
        folder): (what was added, the cursor after it, more waiting), or None (nothing new, or a backend
        whose sent mail is in the history itself: Gmail). A Sent folder H0 cannot read costs the
        follow-ups a look, never the ingest."""
        if not self.follow_sent or self._sent_in_history:
            return None
        stored = self.state.sent_cursor(source)
        try:
            changes = self._retry("sent mail", lambda: self.backend.sent_changes(stored, limit=limit))
        except (AuthRequired, RateLimited):
            raise
        except H0Error as error:
            logger.warning("mail sync: the sent mail could not be read this time ({})", error.message)
            return None
        if changes is None:
            self._sent_in_history = True
            return None
        if not changes.added:
            if changes.cursor != stored:
                self.state.set_sent_cursor(source, changes.cursor)  # from now on (a first look, or renumbered)
            return None
        return changes.added, changes.cursor, not changes.complete

    def _catch_up(self, source: str, row: dict[str, Any], max_results: int, fresh: Position | None, why: str) -> Slice:
        episode = row.get("catch_up")
        if not episode:
            # The profile first: whatever arrives while the query runs is in the history after it.
            position = fresh or self._retry("profile", self.backend.position)
            since = row.get("since")
            episode = {"cursor": str(position.cursor), "served": 0,
                       "after": int(since - SINCE_MARGIN_S) if since else None}
            changes: dict[str, Any] = {"catch_up": episode}
            if since is None:
                changes["since"] = self.clock()
            self.state.update_mail_sync(source, **changes)
            logger.info("mail sync: catching up by query ({}): at most {} messages, then history from {}",
                        why, CATCH_UP_LIMIT, position.cursor)
        want = max(0, min(max_results, CATCH_UP_LIMIT - int(episode["served"])))
        query = self.catch_up_query + (f" after:{episode['after']}" if episode.get("after") else "")
        ids: list[str] = []
        if want:
            self._ingested()  # whether the mailbox keeps the mark decides how to list
        if want and self._marks_here:
            # The query cannot leave out what H0 marked (the mark is not on the server): list the
            # newest, then leave out what the state database says was ingested, before reading any.
            listed = self._retry("catch-up", lambda: self.backend.message_ids(query, CATCH_UP_LIMIT))
            known = self.state.ingested_among(source, listed)
            ids = [i for i in listed if i not in known][:want]
        elif want:
            ids = self._retry("catch-up", lambda: self.backend.message_ids(query, want))
        fetched, skipped = self._fetch(ids)
        label = self._ingested() if fetched else None
        unlabelled = [f for f in fetched if label is None or label.id not in f.labels]
        emails = sorted(self._not_marked_here(source, unlabelled), key=lambda f: f.internal_date_ms or 0)
        served = int(episode["served"]) + len(ids)
        final = len(ids) < want or served >= CATCH_UP_LIMIT
        if not emails:
            self._settle_catch_up(source, int(episode["cursor"]), served, final, failed=False)
        return Slice(emails, self._token(source, "c", episode["cursor"], served, int(final)), not final, "catch_up", skipped)

    def _wanted(self, source: str, fetched: list[Fetched]) -> list[Fetched]:
        """The fetched messages GMAIL_QUERY selects that H0 has not ingested yet."""
        if not fetched:
            return []
        label = self._ingested()
        fresh = self._not_marked_here(source, [f for f in fetched if label.id not in f.labels])
        verdicts = {f.id: self.filter.decide(f.labels) for f in fresh}
        undecided = [f for f in fresh if verdicts[f.id] is None]
        if undecided:  # Gmail judges the query, for the new messages' time span only
            oldest_s = min((f.internal_date_ms or 0) for f in undecided) // 1000
            query = f"{self.catch_up_query} after:{max(0, oldest_s - 1)}"
            matching = set(self._retry("query match", lambda: self.backend.message_ids(query, MAX_MATCH_LIST)))
            verdicts.update({f.id: f.id in matching for f in undecided})
        return [f for f in fresh if verdicts[f.id]]

    # -- acknowledging -------------------------------------------------------------------

    def ack(self, token: str, message_ids: list[str], failed_ids: list[str]) -> AckResult:
        """The caller wrote notes for `message_ids`: label them ingested, then move the cursor past the slice.

        `failed_ids` could not be written: they stay unlabelled, the cursor still moves (one bad
        message never holds up the mail behind it), and a catch-up by query is brought forward to
        pick them up again — with backoff while they keep failing.
        """
        with self._lock:
            source, _ = self._source()
            kind, values = self._untoken(source, token)
            labelled, gone = self._label_ingested(message_ids) if message_ids else (0, [])
            if kind == "h":
                self._advance(source, values[0])
                if len(values) == 2:
                    self.state.set_sent_cursor(source, values[1])
            else:
                self._settle_catch_up(source, values[0], values[1], bool(values[2]), failed=bool(failed_ids))
            if failed_ids:
                self._catch_up_soon(source, len(failed_ids), "could not be ingested")
            row = self.state.mail_sync(source) or {}
            return AckResult(cursor=row.get("cursor"), labelled=labelled, gone=gone,
                             mode="history" if kind == "h" else "catch_up")

    def _catch_up_soon(self, source: str, count: int, why: str) -> None:
        """Bring the next catch-up by query forward (with backoff while messages keep failing)."""
        row = self.state.mail_sync(source) or {}
        failures = int(row.get("failures") or 0) + 1
        wait = _CATCH_UP_BACKOFF.delay(failures - 1)
        due = min(row.get("catch_up_due") or math.inf, self.clock() + wait)
        self.state.update_mail_sync(source, failures=failures, catch_up_due=due)
        logger.warning("mail sync: {} message(s) {}; catching up again in {:.0f} s", count, why, due - self.clock())

    def _retry_unreadable(self, source: str, skipped: list[SkippedEmail]) -> None:
        """A new message Gmail would not give H0 (not a deleted one) is looked for again by query."""
        unreadable = [s for s in skipped if s.reason == "unreadable"]
        if unreadable:
            self._catch_up_soon(source, len(unreadable), "could not be read")

    def _advance(self, source: str, cursor: int) -> None:
        row = self.state.mail_sync(source)
        if row is None or row.get("cursor") is None or cursor > int(row["cursor"]):
            self.state.update_mail_sync(source, cursor=cursor)

    def _settle_catch_up(self, source: str, cursor: int, served: int, final: bool, *, failed: bool) -> None:
        row = self.state.mail_sync(source) or {}
        episode = row.get("catch_up")
        if not episode or int(episode["cursor"]) != cursor:
            return  # a token from an episode that is over
        if final:
            changes: dict[str, Any] = {"catch_up": None, "catch_up_due": self.clock() + RECONCILE_EVERY_S}
            if not failed:
                changes["failures"] = 0
            self.state.update_mail_sync(source, cursor=cursor, **changes)
            logger.info("mail sync: caught up; following history from {}", max(cursor, int(row.get("cursor") or 0)))
        elif served > int(episode["served"]):
            self.state.update_mail_sync(source, catch_up={**episode, "served": served})

    def mark_ingested(self, message_ids: list[str]) -> tuple[int, list[str]]:
        """Mark these messages ingested (the label, or H0's own record where the mailbox keeps none)."""
        with self._lock:
            return self._label_ingested(message_ids)

    def _label_ingested(self, message_ids: list[str]) -> tuple[int, list[str]]:
        label = self._ingested()
        ids = list(dict.fromkeys(message_ids))
        if not self._marks_here:
            try:
                return self._label_on_server(label, ids)
            except InternalError as error:
                if "keyword" not in error.details:
                    raise
                self._keep_marks_here(f"the server did not keep the keyword {error.details['keyword']}")
        source, _ = self._source()
        self.state.record_ingested(source, [(i, self._rfc822.get(i)) for i in ids])
        return len(ids), []

    def _label_on_server(self, label: Label, ids: list[str]) -> tuple[int, list[str]]:
        if len(ids) >= BULK_LABEL_FROM:
            try:
                self._retry("label", lambda: self.backend.modify_all(ids, [label.id], []))
                return len(ids), []
            except (AuthRequired, PermissionDenied, RateLimited):
                raise
            except H0Error as error:  # e.g. one id deleted meanwhile: label them one by one
                if "keyword" in error.details:
                    raise
                logger.info("mail sync: batchModify refused ({}); labelling one by one", error.message)
        done, skipped = self._in_batches(ids, lambda chunk: self.backend.modify_many(chunk, [label.id], []))
        return len(done), sorted(skipped)

    # -- plumbing ------------------------------------------------------------------------

    def _source(self) -> tuple[str, Position | None]:
        fresh = None
        if self._account is None:
            fresh = self._retry("profile", self.backend.position)
            self._account = fresh.account
        return f"{self.backend.name}:{self._account}", fresh

    def _ingested(self) -> Label:
        if self._label is None:
            label = self._retry("label", lambda: self.backend.ensure_label(self.label_name))
            if not label.kept:
                self._keep_marks_here(f"its PERMANENTFLAGS have no \\* and do not list {label.id}")
            self._label = label
        return self._label

    @property
    def marks_here(self) -> bool:
        """True when the mailbox keeps no label, so H0's state database holds what was ingested."""
        return self._marks_here

    def _keep_marks_here(self, why: str) -> None:
        if not self._marks_here:
            logger.warning("mail sync: the mailbox keeps no custom keywords ({}), so it is not marked: H0 records "
                           "what it ingested in its own state database instead (by UID and Message-ID) and "
                           "ingests normally", why)
        self._marks_here = True

    def _not_marked_here(self, source: str, fetched: list[Fetched]) -> list[Fetched]:
        """`fetched` minus what the state database records as ingested (only where it keeps the marks).
        A message known by its Message-ID under another id (the mailbox was renumbered) is recorded
        under the new id too, so it is not read again."""
        if not self._marks_here or not fetched:
            return fetched
        rfc = {f.id: _rfc822(f) for f in fetched}
        known = self.state.ingested_among(source, list(rfc), [v for v in rfc.values() if v])
        again = [(i, v) for i, v in rfc.items() if i not in known and v in known]
        if again:
            self.state.record_ingested(source, again)
        return [f for f in fetched if f.id not in known and (rfc[f.id] is None or rfc[f.id] not in known)]

    def _retry(self, what: str, call: Callable[[], T]) -> T:
        return self.policy.run(lambda _: call(), what=f"mail sync ({what})", sleep=self.sleep)

    def _fetch(self, message_ids: list[str]) -> tuple[list[Fetched], list[SkippedEmail]]:
        done, skipped = self._in_batches(message_ids, self.backend.fetch_many)
        if len(self._rfc822) > 10_000:
            self._rfc822.clear()
        self._rfc822.update({i: _rfc822(f) for i, f in done.items()})
        gone: list[SkippedEmail] = []
        for message_id, error in skipped.items():
            reason: Literal["deleted", "unreadable"] = "deleted" if error.code == "not_found" else "unreadable"
            logger.warning("mail sync: message {} skipped ({}): {}", message_id, reason, error.message)
            gone.append(SkippedEmail(id=message_id, reason=reason))
        return [done[i] for i in message_ids if i in done], gone

    def _in_batches(self, ids: list[str], call: Callable[[list[str]], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, H0Error]]:
        """`call` over `ids` in batches of at most the backend's limit, retrying the parts Gmail
        rate-limits (429 "too many concurrent requests", 403 rateLimitExceeded, 5xx) until they pass.
        A round where some parts got through resets the patience and shrinks the batch to what got
        through; rounds with no progress count against MAX_RETRIES. Returns (answers, skipped):
        skipped are ids answered not_found/invalid (deleted since, or not a message id)."""
        pending = list(dict.fromkeys(ids))
        size = self._batch_size()
        done: dict[str, Any] = {}
        skipped: dict[str, H0Error] = {}
        stalls = 0
        while pending:
            chunk = pending[:size]
            try:
                answers = call(chunk)
            except H0Error as error:
                if not is_retryable(error):
                    raise
                stalls += 1
                self._pause(error, stalls, len(chunk))
                size = max(1, size // 2)
                continue
            retry: list[str] = []
            last: H0Error | None = None
            for key in chunk:
                answer = answers.get(key, InternalError("no answer for this call", retryable=True))
                if not isinstance(answer, H0Error):
                    done[key] = answer
                elif is_retryable(answer):
                    retry.append(key)
                    last = answer
                elif isinstance(answer, (AuthRequired, PermissionDenied)):
                    raise answer
                else:
                    skipped[key] = answer
            pending = retry + pending[len(chunk):]
            if last is not None:
                through = len(chunk) - len(retry)
                if through and isinstance(last, RateLimited):
                    self._learn_batch_size(through)
                stalls = 0 if through else stalls + 1
                self._pause(last, stalls, len(retry))
                size = max(1, through or size // 2)
        return done, skipped

    def _batch_size(self) -> int:
        """Calls per batch: the backend's limit, or fewer while Gmail recently refused parts past that many."""
        limit = max(1, self.backend.batch_limit)
        size, until = self._learned
        return max(1, min(limit, size)) if until > self.clock() else limit

    def _learn_batch_size(self, size: int) -> None:
        """Gmail answered 429 "too many concurrent requests" past `size` parts: send no more at once for a while,
        rather than have every batch refused in part (and waited on) again."""
        self._learned = (size, self.clock() + CONCURRENCY_MEMORY_S)

    def _pause(self, error: H0Error, stalls: int, parts: int) -> None:
        wait = self.policy.wait_before(stalls, error)
        if wait is None:
            raise error
        logger.warning("mail sync: {} call(s) refused ({}: {}); again in {:.2f} s", parts, error.code, error.message, wait)
        self.sleep(wait)

    def _token(self, source: str, kind: str, *values: object) -> str:
        payload = ".".join([kind, *map(str, values)])
        return f"{payload}.{self.state.mac(_MAC_PURPOSE, f'{source}|{payload}')[:32]}"

    def _untoken(self, source: str, token: str) -> tuple[str, list[int]]:
        token = str(token)
        if not token.isascii() or len(token) > 200:
            raise InvalidRequest("cursor is not one list_new_emails gave for this mailbox.", field="cursor")
        payload, _, mac = token.rpartition(".")
        kind, *values = payload.split(".")
        expected = self.state.mac(_MAC_PURPOSE, f"{source}|{payload}")[:32]
        valid = (kind == "h" and len(values) in (1, 2)) or (kind == "c" and len(values) == 3)
        if not valid or not all(v.isdigit() for v in values) or not hmac.compare_digest(mac, expected):
            raise InvalidRequest("cursor is not one list_new_emails gave for this mailbox.", field="cursor")
        return kind, [int(v) for v in values]


def _rfc822(fetched: Fetched) -> str | None:
    return str(fetched.headers.get("Message-ID") or "").strip() or None


def _sent_labels(labels: tuple[str, ...] | list[str] | None) -> bool:
    """A message the owner sent (not a draft)."""
    return labels is not None and "SENT" in labels and "DRAFT" not in labels
