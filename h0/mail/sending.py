"""Sending exactly once: claim, audit, send, record — with state shared by every process.

A send arrives here already built and checked (`Outgoing`: from an approved note by
`h0.mail.approved`, or — only when the user opted in — from a caller's free content).
The order is the point:
  1. claim the send in H0's state database, in one `BEGIN IMMEDIATE` transaction: a key
     already sent with the same content → `already_sent` (nothing sent); the same key with
     other content → `conflict`; another live process sending it → `conflict`; an earlier
     attempt with no known outcome → ask the provider by Message-ID first; a reply to an
     email H0 already answered → `conflict` (held); a cap reached → `rate_limited`.
     Otherwise the send is recorded as pending, which the caps of every process count;
  2. the pre-send audit record in `Logs/` (fsynced) — if it cannot be written,
     nothing is sent;
  3. one attempt at the provider; when an earlier attempt of this very message failed, a
     Message-ID look-up first, so a send that did go through is never repeated;
  4. the outcome in the database and in the audit log.
A failure is answered at once as the provider's typed error — "try again at T" (`rate_limited`,
or `retryable` with the `retry_after` it named), "outcome unknown", or for good — and the work queue
of whoever asked decides when to try again (h0.pipeline.workqueue): nothing here sleeps or loops.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from loguru import logger

from h0.errors import H0Error, InternalError, McpUnavailable, NotSupported, RateLimited, Refusal, SendFailed, refuse
from h0.mail.copies import copy_of_sent, original_being_filed
from h0.mail.models import SendEmailResult
from h0.mail.providers.backend import MailSender, Sent
from h0.mail.providers.retry import is_retryable
from h0.state import Cap, StateDB
from h0.vault.audit import AuditLog, iso, utcnow
from h0.vault.note import Note

PRE_SEND = "pre_send_audit"
SENT = "email_sent"
FAILED = "send_failed"
HOUR = 3600.0
DAY = 86400.0
IN_FLIGHT_S = 120.0  # how long another live process's unanswered attempt is presumed still running
LOOK_AGAIN_S = 1.0  # a message this process is still sending: look again this much later
UNKNOWN_OUTCOME_MESSAGE = (
    "An earlier attempt to send this may or may not have gone out, and the {backend} backend cannot "
    "check. Look in your Sent folder: if it is there, nothing more to do; if not, send it again as a new draft."
)
UNKNOWN_NOT_FOUND_MESSAGE = (
    "An earlier attempt to send this may or may not have gone out: the server took it and never answered, and "
    "{backend} has no message with its Message-ID yet. It was not sent again. Look in your Sent folder: if it "
    "is there, nothing more to do; if not, send it again as a new draft."
)


Filed = Callable[["Outgoing", SendEmailResult], SendEmailResult]  # files what was sent; the result says where


@dataclass(frozen=True, slots=True)
class Caps:
    per_hour: int
    per_day: int

    def windows(self) -> tuple[Cap, Cap]:
        return Cap(HOUR, self.per_hour, "hourly"), Cap(DAY, self.per_day, "daily")


@dataclass(slots=True)
class Outgoing:
    """One message ready to go, and what it is bound to."""

    message: EmailMessage
    key: str  # the idempotency key as stored (nobody outside can mint it)
    content_hash: str  # what "already sent" is bound to
    thread_id: str | None
    audit: dict[str, object]  # to, cc, bcc, subject, body_preview, attachments… for the pre-send record
    envelope: dict[str, list[str]]  # every address it goes to, by field (to, cc, bcc), as composed
    note_path: str | None = None
    note_hash: str | None = None
    note: Note | None = None  # the approved note as read, the message built from it: what is filed after the send
    note_bytes: bytes | None = None  # that read's bytes: the filing writes over them without reading the note again
    reply_to: str | None = None  # the provider id of the email answered (one reply per email)
    source: str | None = None  # the email note answered, as compared (h0.vault.model.source_key)
    exclusive_reply: bool = False  # refuse if another message already answered the same email
    hints: list[str] = field(default_factory=list)
    note_name: str | None = None  # the note's name as a sync tool's copies share it (h0.vault.copies)
    # A note whose very bytes were sent before is a copy, whatever its key (not for `send_anyway`: the
    # owner's two notes with the same words are two messages)
    copies_by_bytes: bool = False

    @property
    def rfc822_message_id(self) -> str:
        return str(self.message["Message-ID"])


class Sender:
    """The send path of the mail service; one per server process."""

    def __init__(self, backend: MailSender, state: StateDB, audit: AuditLog, caps: Caps) -> None:
        self.backend = backend
        self.state = state
        self.audit = audit
        self.caps = caps
        self._drain = threading.Condition()
        self._in_flight = 0
        self._stopping = False
        self._key_locks: dict[str, threading.Lock] = {}
        self._key_locks_guard = threading.Lock()

    def send(self, out: Outgoing, file: Filed | None = None) -> SendEmailResult:
        """Send `out` exactly once, then `file` it (an approved note: h0.mail.filing), under its key's lock:
        a second call for a message this process is still sending (or filing) is answered at once, never
        made to wait — "still sending, look again" (a slow provider's send goes on past its caller's answer)."""
        lock = self._lock_for(out.key)
        if not lock.acquire(blocking=False):
            raise refuse(Refusal.STILL_SENDING, idempotency_key=out.key, path=out.note_path, retry_after=LOOK_AGAIN_S)
        try:
            result = self._send_once(out)
            return file(out, result) if file is not None else result
        finally:
            lock.release()

    def _send_once(self, out: Outgoing) -> SendEmailResult:
        earlier = self.state.send_for_message(out.rfc822_message_id)
        ask_first = earlier is not None and earlier.get("state") == "failed"  # it may have gone after all
        for _ in range(3):
            claimed, done = self._claim(out)
            if done is not None:
                return done
            if claimed:
                return self._send_claimed(out, ask_first=ask_first)
        raise InternalError("Could not settle an earlier attempt of this send; nothing was sent.")

    # -- 1. the claim --------------------------------------------------------------------

    def _lock_for(self, key: str) -> threading.Lock:
        with self._key_locks_guard:
            if len(self._key_locks) > 10_000:
                self._key_locks = {k: v for k, v in self._key_locks.items() if v.locked()}
            return self._key_locks.setdefault(key, threading.Lock())

    def _claim(self, out: Outgoing) -> tuple[bool, SendEmailResult | None]:
        """(True, None): claimed, go ahead. (False, None): claim again. (False, result): already sent."""
        with self._drain:
            if self._stopping:
                raise McpUnavailable("The mail server is shutting down; nothing was sent. Try again.", retryable=True)
        rfc = out.rfc822_message_id
        claim = self.state.claim_send(
            key=out.key,
            rfc822_message_id=rfc,
            content_hash=out.content_hash,
            caps=self.caps.windows(),
            in_flight_s=IN_FLIGHT_S,
            note_path=out.note_path,
            note_hash=out.note_hash,
            reply_to=out.reply_to,
            source=out.source,
            exclusive_reply=out.exclusive_reply,
            copies_by_bytes=out.copies_by_bytes,
            note_name=out.note_name,
            recipients=str(out.audit.get("to") or ""),
            subject=str(out.audit.get("subject") or ""),
            backend=self.backend.name,
        )
        if claim.status == "claimed":
            return True, None
        row = claim.row or {}
        if claim.status == "already_sent":
            return False, self._result_from_ledger(row, out)
        if claim.status == "copy":  # the daemon files it in Done/ as a copy (h0.handlers.send)
            raise copy_of_sent(row, path=out.note_path, to=out.audit.get("to"), subject=out.audit.get("subject"))
        if claim.status == "filing":  # its original went moments ago and is being filed: look again
            raise original_being_filed(row, out.note_path)
        if claim.status == "conflict":
            raise refuse(Refusal.KEY_CONTENT_MISMATCH, idempotency_key=out.key)
        if claim.status == "in_progress":
            raise refuse(Refusal.IN_PROGRESS, idempotency_key=out.key, retry_after=5.0)
        if claim.status == "answered":
            raise refuse(
                Refusal.ALREADY_ANSWERED,
                {"answered": row.get("note_path") or row.get("rfc822_message_id")},
                answered_by=row.get("note_path"),
                answered_at=row.get("sent_at"),
            )
        if claim.status == "rate_limited":
            cap = claim.cap
            setting = "RATE_LIMIT_PER_HOUR" if cap and cap.label == "hourly" else "RATE_LIMIT_PER_DAY"
            raise RateLimited(
                f"The {cap.label if cap else ''} send cap ({cap.limit if cap else '?'}, {setting}) is reached; "
                f"nothing was sent. Sending resumes in {claim.retry_after:.0f} s.",
                retry_after=claim.retry_after,
                cap=cap.limit if cap else None,
                window=cap.label if cap else None,
                setting=setting,
            )
        # unresolved: an earlier attempt never recorded its outcome (a crash), or its outcome is unknown
        try:  # a failure to ask (the network) is raised as it is: this look is retried, nothing was sent
            found, asked = self.backend.find_sent(rfc), True
        except NotSupported:
            found, asked = None, False
        if found is None and (not asked or row.get("state") == "unknown"):
            # Nobody can say, or the provider does not have it *yet* (a search may lag a send that the
            # server took and never answered): never sent blindly again.
            raise SendFailed(
                UNKNOWN_OUTCOME_MESSAGE.format(backend=self.backend.name)
                if not asked
                else UNKNOWN_NOT_FOUND_MESSAGE.format(backend=self.backend.name),
                outcome="unknown",
                retryable=False,
                provider_checked=asked,
                idempotency_key=out.key,
                rfc822_message_id=rfc,
                to=out.audit.get("to"),
                subject=out.audit.get("subject"),
            )
        if found is None:  # a crashed attempt the provider never saw
            logger.info("{}: an earlier attempt never reached {}; sending", rfc, self.backend.name)
            self.state.mark_failed(rfc, error="send_failed", reason="never reached the provider")
            return False, None
        recovered = self._record_sent(found, out, ["recovered: an earlier attempt had sent it"], recovered=True)
        return False, recovered.model_copy(update={"already_sent": True})

    def _result_from_ledger(self, row: dict[str, Any], out: Outgoing) -> SendEmailResult:
        """The send recorded before, of this very content (the claim compared it): its envelope is this one's."""
        return SendEmailResult(
            message_id=str(row.get("provider_message_id")),
            thread_id=row.get("thread_id"),
            sent_at=str(row.get("sent_at")),
            rfc822_message_id=str(row.get("rfc822_message_id")),
            backend=str(row.get("backend") or self.backend.name),
            idempotency_key=out.key,
            already_sent=True,
            recipients=out.envelope,
            note_hash=out.note_hash,
        )

    # -- 2–4. audit, send, record ----------------------------------------------------------

    def _send_claimed(self, out: Outgoing, *, ask_first: bool) -> SendEmailResult:
        rfc = out.rfc822_message_id
        with self._drain:
            self._in_flight += 1
        try:
            try:
                self.audit.write(
                    PRE_SEND,
                    "info",
                    durable=True,
                    rfc822_message_id=rfc,
                    idempotency_key=out.key,
                    backend=self.backend.name,
                    note_path=out.note_path,
                    note_hash=out.note_hash,
                    **out.audit,
                )
            except H0Error as err:
                self.state.mark_failed(rfc, error=err.code, reason=f"pre-send audit record: {err.message}")
                raise
            sent = self._deliver(out, ask_first=ask_first)
            return self._record_sent(sent, out, out.hints)
        finally:
            with self._drain:
                self._in_flight -= 1
                self._drain.notify_all()

    def drain(self, timeout: float) -> bool:
        """Refuse new sends and wait for those in flight; True if none is left."""
        with self._drain:
            self._stopping = True
            return self._drain.wait_for(lambda: self._in_flight == 0, timeout)

    def _deliver(self, out: Outgoing, *, ask_first: bool) -> Sent:
        """One attempt at the provider (after asking it first whether an earlier failed attempt went after all)."""
        rfc = out.rfc822_message_id
        try:
            found = self._find_sent(rfc) if ask_first else None
            return found or self.backend.send(out.message, thread_id=out.thread_id)
        except H0Error as err:
            if err.details.get("outcome") == "unknown":
                found, asked = self._provider_says(rfc)
                if found is not None:
                    return found  # the provider has it: sent, whatever the connection said
                err.details.setdefault("provider_checked", asked)
            err.details.setdefault("rfc822_message_id", rfc)
            err.details.setdefault("idempotency_key", out.key)
            err.details.setdefault("to", out.audit.get("to"))  # the daemon, which did not read the note, says it
            err.details.setdefault("subject", out.audit.get("subject"))
            unknown = err.details.get("outcome") == "unknown"
            bounce = bool(err.details.get("bounce"))
            self.state.mark_failed(rfc, error=err.code, reason=err.message, unknown=unknown, bounce=bounce)
            try:
                self.audit.write(
                    FAILED,
                    # an unknown outcome is the filing's to say, once, with what to do (h0.handlers.send)
                    "warning" if unknown else "error",
                    rfc822_message_id=rfc,
                    idempotency_key=out.key,
                    backend=self.backend.name,
                    error=err.code,
                    reason=err.message,
                    retryable=is_retryable(err),
                    bounce=bounce,
                    outcome=err.details.get("outcome", "failed"),
                    note_path=out.note_path,
                )
            except H0Error as log_err:
                logger.error("could not write the audit record of a failed send {}: {}", rfc, log_err.message)
            raise

    def _find_sent(self, rfc: str) -> Sent | None:
        try:
            return self.backend.find_sent(rfc)
        except NotSupported:
            return None

    def _provider_says(self, rfc: str) -> tuple[Sent | None, bool]:
        """After a send whose answer never came: the provider's own word where it can be asked (Gmail by
        `rfc822msgid:`), and whether it could be. Not found is not "not sent" (a search may lag the send):
        such a send stays of unknown outcome and is never sent again by itself."""
        try:
            return self.backend.find_sent(rfc), True
        except NotSupported:
            return None, False
        except H0Error as err:
            logger.warning("{}: could not ask {} whether it was sent: {}", rfc, self.backend.name, err.message)
            return None, False

    def _record_sent(self, sent: Sent, out: Outgoing, hints: list[str], *, recovered: bool = False) -> SendEmailResult:
        rfc = out.rfc822_message_id
        sent_at = iso(utcnow())
        try:
            self.state.mark_sent(
                rfc,
                provider_message_id=sent.message_id,
                thread_id=sent.thread_id,
                sent_at=sent_at,
                backend=self.backend.name,
                now=time.time(),
            )
        except InternalError as err:
            # The mail is gone; failing now would only invite a resend. The pending row plus
            # a Message-ID look-up will still recognise it next time.
            logger.error("sent {} but could not record it: {}", rfc, err.message)
            hints.append(f"sent, but the state database could not be written: {err.message}")
        try:
            # The one record of a send, written where it happened, whoever asked for it (the daemon or
            # any MCP client): every report reads it. The envelope is the message's own headers.
            self.audit.write(
                SENT,
                "info",
                rfc822_message_id=rfc,
                idempotency_key=out.key,
                provider_message_id=sent.message_id,
                thread_id=sent.thread_id,
                sent_at=sent_at,
                backend=self.backend.name,
                path=out.note_path,
                note_hash=out.note_hash,
                to=out.audit.get("to"),
                subject=out.audit.get("subject"),
                recipients=out.envelope,
                recovered=recovered or None,
            )
        except InternalError as err:
            logger.error("sent {} but could not write the audit log: {}", rfc, err.message)
            hints.append(f"sent, but the audit log could not be written: {err.message}")
        return SendEmailResult(
            message_id=sent.message_id,
            thread_id=sent.thread_id,
            sent_at=sent_at,
            rfc822_message_id=rfc,
            backend=self.backend.name,
            already_sent=False,
            idempotency_key=out.key,
            hints=list(hints),
            recipients=out.envelope,
            note_hash=out.note_hash,
        )
