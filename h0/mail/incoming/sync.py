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

Sent mail, for follow-ups: the owner's messages from any client come back with each slice (`sent`),
read in the same round trips. Gmail: the history is then not narrowed to INBOX — it is the same
one call, and SENT messages are read in the same batch as the new mail. IMAP: the Sent folder is
a stream of its own (`sent_changes`, its UIDs from a cursor in `sent_sync`, one STATUS a poll
when nothing was sent). Either way the slice's token carries where the sent mail stands, so it is
acknowledged with the slice and a crash in between reads it again. A first sync and a catch-up by
query bring no sent mail: H0 follows it from the first history on.

Which new mail GMAIL_QUERY selects: h0.mail.incoming.sync_query. Reading and labelling in batches:
h0.mail.incoming.sync_batches. The ingested mark, on the server or (where it keeps none) in H0: h0.mail.incoming.sync_marks.
"""

from __future__ import annotations

import hmac
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from loguru import logger

from h0.errors import AuthRequired, H0Error, InvalidRequest, RateLimited
from h0.mail.incoming.sync_batches import Batches
from h0.mail.incoming.sync_marks import IngestedMarks
from h0.mail.incoming.sync_query import QueryFilter, ingest_query
from h0.mail.models import AckResult, SkippedEmail
from h0.mail.owner import Evidence, OwnerAuthority, is_sent_labels
from h0.mail.providers.backend import Added, Changes, ChangesUnreadable, CursorExpired, Fetched, Mailbox, Position
from h0.retry import Backoff
from h0.state import StateDB

T = TypeVar("T")
CATCH_UP_LIMIT = 200  # messages one catch-up episode may bring in (the newest matching the query)
RECONCILE_EVERY_S = 6 * 3600.0  # a catch-up by query now and then: the label, not the cursor, is the truth
RETRY_AFTER_FAILURE_S = 30.0  # a message that could not be written: catch up after this, doubling, up to an hour
MAX_RETRY_AFTER_FAILURE_S = 3600.0
_CATCH_UP_BACKOFF = Backoff(RETRY_AFTER_FAILURE_S, 2.0, cap=MAX_RETRY_AFTER_FAILURE_S)
SINCE_MARGIN_S = 3600.0  # later catch-ups reach this far before the first sync (clock skew, delivery delay)
MAX_MATCH_LIST = 500  # one messages.list page when Gmail decides the query for new mail
_MAC_PURPOSE = "mail-sync-cursor"


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

    def __init__(
        self,
        backend: Mailbox,
        state: StateDB,
        *,
        query: str,
        ingested_label: str,
        clock: Callable[[], float] = time.time,
        follow_sent: bool = True,
    ) -> None:
        self.backend = backend
        self.follow_sent = follow_sent
        self._sent_in_history = False  # the mailbox keeps no separate stream of sent mail (Gmail)
        self.state = state
        self.owner = OwnerAuthority(state)
        self.filter = QueryFilter(query)
        self.label_name = ingested_label
        self.catch_up_query = ingest_query(query, ingested_label)
        self.clock = clock
        self._lock = threading.RLock()
        self._account: str | None = None
        # Deferred to self.clock, which a test may replace after construction.
        self.batches = Batches(backend.batch_limit, clock=lambda: self.clock())
        self.marks = IngestedMarks(backend, state, ingested_label, self.batches)

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
                    return self._catch_up(
                        source, row, max_results, fresh, "resuming" if row.get("catch_up") else "first sync"
                    )
                if due is not None and due <= self.clock():
                    return self._catch_up(source, row, max_results, fresh, "reconciliation")
                cursor = int(row["cursor"])
                try:
                    # Following sent mail too: the history is not narrowed to INBOX (the same one call).
                    label = None if self.follow_sent else self.filter.history_label
                    changes = self.backend.changes_since(cursor, label=label, limit=max_results + 1)
                except CursorExpired as expired:
                    logger.warning("mail sync: {} — catching up by query", expired.message)
                    return self._catch_up(source, row, max_results, fresh, "history expired")
                except ChangesUnreadable as unreadable:
                    # Not one of its ids is trusted; the query and the label still are.
                    logger.warning("mail sync: {} — catching up by query", unreadable.message)
                    return self._catch_up(source, row, max_results, fresh, "history unreadable")
                return self._history_slice(source, changes, max_results)
            except AuthRequired as refused:
                self._account = None
                self._record_refusal(refused)
                raise

    def _history_slice(self, source: str, changes: Changes, max_results: int) -> Slice:
        wanted = {a.message_id for a in changes.added if self.filter.decide(a.labels) is not False}
        candidates = [
            a for a in changes.added if a.message_id in wanted or (self.follow_sent and is_sent_labels(a.labels))
        ]
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
        sent = self._owners(source, fetched, {a.message_id for a in own[0]} if own else set())
        if not emails and not sent:
            self._advance(source, cursor)  # nothing to write: nothing to wait for
            if own:
                self.state.set_sent_cursor(source, own[1])
        values = [cursor, own[1]] if own else [cursor]
        return Slice(emails, self._token(source, "h", *values), more or bool(own and own[2]), "history", skipped, sent)

    def _owners(self, source: str, fetched: list[Fetched], from_sent_folder: set[str]) -> list[Fetched]:
        """The owner's sent mail among what was read — what the Sent folder's stream gave, or (Gmail) what
        carries the SENT label — recorded with the owner's identity (h0.mail.owner) as it is seen."""
        if not self.follow_sent:
            return []
        folder = [f for f in fetched if f.id in from_sent_folder]
        labelled = [f for f in fetched if self._sent_in_history and is_sent_labels(f.labels)]
        self.owner.record_sent_mail(folder, Evidence.SENT_FOLDER, source)
        self.owner.record_sent_mail(labelled, Evidence.SENT_LABEL, source)
        return folder + [f for f in labelled if f.id not in from_sent_folder]

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
            changes = self.backend.sent_changes(stored, limit=limit)
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
            position = fresh or self.backend.position()
            since = row.get("since")
            episode = {
                "cursor": str(position.cursor),
                "served": 0,
                "after": int(since - SINCE_MARGIN_S) if since else None,
            }
            changes: dict[str, Any] = {"catch_up": episode}
            if since is None:
                changes["since"] = self.clock()
            self.state.update_mail_sync(source, **changes)
            logger.info(
                "mail sync: catching up by query ({}): at most {} messages, then history from {}",
                why,
                CATCH_UP_LIMIT,
                position.cursor,
            )
        want = max(0, min(max_results, CATCH_UP_LIMIT - int(episode["served"])))
        query = self.catch_up_query + (f" after:{episode['after']}" if episode.get("after") else "")
        ids: list[str] = []
        if want:
            self.marks.label()  # whether the mailbox keeps the mark decides how to list
        if want and self.marks.here:
            # The query cannot leave out what H0 marked (the mark is not on the server): list the
            # newest, then leave out what the state database says was ingested, before reading any.
            listed = self.backend.message_ids(query, CATCH_UP_LIMIT)
            known = self.state.ingested_among(source, listed)
            ids = [i for i in listed if i not in known][:want]
        elif want:
            ids = self.backend.message_ids(query, want)
        fetched, skipped = self._fetch(ids)
        label = self.marks.label() if fetched else None
        unlabelled = [f for f in fetched if label is None or label.id not in f.labels]
        emails = sorted(self.marks.not_marked(source, unlabelled), key=lambda f: f.internal_date_ms or 0)
        served = int(episode["served"]) + len(ids)
        final = len(ids) < want or served >= CATCH_UP_LIMIT
        if not emails:
            self._settle_catch_up(source, int(episode["cursor"]), served, final, failed=False)
        return Slice(
            emails, self._token(source, "c", episode["cursor"], served, int(final)), not final, "catch_up", skipped
        )

    def _wanted(self, source: str, fetched: list[Fetched]) -> list[Fetched]:
        """The fetched messages GMAIL_QUERY selects that H0 has not ingested yet."""
        if not fetched:
            return []
        label = self.marks.label()
        fresh = self.marks.not_marked(source, [f for f in fetched if label.id not in f.labels])
        verdicts = {f.id: self.filter.decide(f.labels) for f in fresh}
        undecided = [f for f in fresh if verdicts[f.id] is None]
        if undecided:  # Gmail judges the query, for the new messages' time span only
            oldest_s = min((f.internal_date_ms or 0) for f in undecided) // 1000
            query = f"{self.catch_up_query} after:{max(0, oldest_s - 1)}"
            matching = set(self.backend.message_ids(query, MAX_MATCH_LIST))
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
            labelled, gone = self.marks.mark(message_ids, lambda: source) if message_ids else (0, [])
            if kind == "h":
                self._advance(source, values[0])
                if len(values) == 2:
                    self.state.set_sent_cursor(source, values[1])
            else:
                self._settle_catch_up(source, values[0], values[1], bool(values[2]), failed=bool(failed_ids))
            if failed_ids:
                self._catch_up_soon(source, len(failed_ids), "could not be ingested")
            row = self.state.mail_sync(source) or {}
            return AckResult(
                cursor=row.get("cursor"), labelled=labelled, gone=gone, mode="history" if kind == "h" else "catch_up"
            )

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
            return self.marks.mark(message_ids, lambda: self._source()[0])

    # -- plumbing ------------------------------------------------------------------------

    def _source(self) -> tuple[str, Position | None]:
        fresh = None
        if self._account is None:
            fresh = self.backend.position()
            self._account = fresh.account
            # The account the provider signed H0 in as, for `h0 status` and the dashboard (no network of theirs).
            self.owner.record_mailbox(self.backend.name, fresh.account)
        return f"{self.backend.name}:{self._account}", fresh

    def _record_refusal(self, refused: AuthRequired) -> None:
        reason = str(refused.details.get("reason") or refused.message)
        try:
            self.owner.record_refusal(self.backend.name, reason)
        except H0Error as exc:  # the refusal is what the caller must hear, not the record's trouble
            logger.warning("mail sync: the sign-in's refusal was not recorded ({})", exc)

    def _fetch(self, message_ids: list[str]) -> tuple[list[Fetched], list[SkippedEmail]]:
        done, skipped = self.batches.run(message_ids, self.backend.fetch_many)
        self.marks.remember(done.values())
        gone: list[SkippedEmail] = []
        for message_id, error in skipped.items():
            reason: Literal["deleted", "unreadable"] = "deleted" if error.code == "not_found" else "unreadable"
            logger.warning("mail sync: message {} skipped ({}): {}", message_id, reason, error.message)
            gone.append(SkippedEmail(id=message_id, reason=reason))
        return [done[i] for i in message_ids if i in done], gone

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
