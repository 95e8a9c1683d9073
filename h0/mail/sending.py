"""Sending exactly once: validate, look up the ledger, cap, audit, send, record.

The order is the point:
  1. validate everything (addresses, header injection, body, attachments) — bad input
     never reaches the ledger or the provider;
  2. an idempotency key already sent → return that result (`already_sent`), send nothing;
     a key whose last attempt has no outcome (a crash mid-send, or "outcome unknown") →
     ask the provider by Message-ID; found → record it and return `already_sent`;
  3. the hourly / daily caps, counted from the audit log (+ sends in flight here);
  4. the pre-send audit record (FR-008), written *before* the provider is called — if it
     cannot be written, nothing is sent;
  5. the send, retried only on retryable failures, each retry preceded by a Message-ID
     look-up so a send that did go through is never repeated;
  6. the outcome (`email_sent` / `send_failed`) in the same log.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from loguru import logger

from h0.errors import (
    Conflict,
    H0Error,
    InternalError,
    InvalidRequest,
    McpUnavailable,
    NotFound,
    NotSupported,
    RateLimited,
    SendFailed,
)
from h0.mail.addresses import parse_recipients, refuse_line_breaks
from h0.mail.backend import MailBackend, Sent
from h0.mail.ledger import DAY, FAILED, HOUR, PRE_SEND, SENT, Attempt, SendLedger, record_epoch
from h0.mail.mime import check_body, check_subject, compose, derive_message_id, load_attachments, new_message_id
from h0.mail.mime import normalize_message_id, reply_headers
from h0.mail.retry import RetryPolicy, is_retryable
from h0.vault.audit import iso, utcnow
from h0.vault.paths import PathResolver

BODY_PREVIEW_CHARS = 200
MAX_KEY_CHARS = 200
IN_FLIGHT_S = 120.0  # how long another live process's unanswered attempt is presumed still running
UNKNOWN_OUTCOME_MESSAGE = (
    "An earlier send with this idempotency_key may or may not have gone out, and the {backend} backend "
    "cannot check. Look in your Sent folder: if it is there, nothing more to do; if not, send again "
    "with a new idempotency_key."
)


@dataclass(slots=True)
class Receipt:
    message_id: str
    thread_id: str | None
    sent_at: str
    rfc822_message_id: str
    backend: str
    already_sent: bool = False
    hints: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Caps:
    per_hour: int
    per_day: int


def _address_list(addresses: Sequence[object]) -> str | None:
    return ", ".join(str(a) for a in addresses) or None


def _pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Sender:
    """The send path of the mail service; one per server process."""

    def __init__(self, backend: MailBackend, ledger: SendLedger, policy: RetryPolicy, caps: Caps, vault_root: os.PathLike[str]) -> None:
        self.backend = backend
        self.ledger = ledger
        self.policy = policy
        self.caps = caps
        self.resolver = PathResolver(vault_root)
        self._cap_lock = threading.Condition()
        self._in_flight = 0
        self._stopping = False
        self._key_locks: dict[str, threading.Lock] = {}
        self._key_locks_guard = threading.Lock()

    def send(
        self,
        *,
        to: str | Sequence[str],
        subject: str,
        body: str,
        cc: str | Sequence[str] | None = None,
        bcc: str | Sequence[str] | None = None,
        html_body: str | None = None,
        attachments: Sequence[str] | None = None,
        reply_to_message_id: str | None = None,
        thread_id: str | None = None,
        message_id: str | None = None,
        idempotency_key: str | None = None,
        allow_typo_domains: bool = False,
    ) -> Receipt:
        # 1. validation — nothing below runs on bad input
        for name, value in (("reply_to_message_id", reply_to_message_id), ("thread_id", thread_id),
                            ("idempotency_key", idempotency_key)):
            if value is not None:
                refuse_line_breaks(name, value)
        if idempotency_key is not None and not (0 < len(idempotency_key.strip()) <= MAX_KEY_CHARS):
            raise InvalidRequest(f"idempotency_key must be 1–{MAX_KEY_CHARS} characters.", field="idempotency_key")
        recipients = {
            "to": parse_recipients("to", to, allow_typo_domains=allow_typo_domains),
            "cc": parse_recipients("cc", cc, allow_typo_domains=allow_typo_domains),
            "bcc": parse_recipients("bcc", bcc, allow_typo_domains=allow_typo_domains),
        }
        if not recipients["to"]:
            raise InvalidRequest("At least one recipient is needed in 'to'.", field="to")
        subject = check_subject(subject)
        check_body(body)
        files = load_attachments(self.resolver, attachments or [])
        if message_id:
            rfc = normalize_message_id(message_id)
        elif idempotency_key:
            rfc = derive_message_id(idempotency_key)
        else:
            rfc = new_message_id()

        key_lock = self._lock_for(idempotency_key) if idempotency_key else threading.Lock()
        with key_lock:
            # 2. exactly once
            if idempotency_key:
                done = self._already_sent(idempotency_key)
                if done is not None:
                    return done
            hints: list[str] = []
            in_reply_to, references, thread_id = self._thread(reply_to_message_id, thread_id, subject, hints)
            message = compose(
                to=recipients["to"], cc=recipients["cc"], bcc=recipients["bcc"], subject=subject, body=body,
                html_body=html_body, attachments=files, message_id=rfc, in_reply_to=in_reply_to, references=references,
            )
            # 3 + 4. caps and the pre-send record, atomically for this process
            self._reserve(
                to=_address_list(recipients["to"]), cc=_address_list(recipients["cc"]), bcc=_address_list(recipients["bcc"]),
                subject=subject, body_preview=body[:BODY_PREVIEW_CHARS], reply_to_message_id=reply_to_message_id,
                thread_id=thread_id, idempotency_key=idempotency_key, rfc822_message_id=rfc,
                attachments=[f.filename for f in files] or None, backend=self.backend.name, pid=os.getpid(),
            )
            released = False
            try:
                sent = self._deliver(message, rfc, thread_id, idempotency_key)
                hints.extend(sent.warnings)
                with self._cap_lock:
                    # Record the send and free its in-flight slot in one step: in between, a
                    # reservation would count it twice (in the ledger and in flight).
                    receipt = self._record_sent(sent, rfc, idempotency_key, hints)
                    self._in_flight -= 1
                    released = True
                    self._cap_lock.notify_all()
                return receipt
            finally:
                # Only once the outcome is on record: the caps count it from there on, and a
                # shutdown waiting in drain() may then exit.
                if not released:
                    with self._cap_lock:
                        self._in_flight -= 1
                        self._cap_lock.notify_all()

    # -- exactly once --------------------------------------------------------------------

    def _lock_for(self, key: str) -> threading.Lock:
        with self._key_locks_guard:
            return self._key_locks.setdefault(key, threading.Lock())

    def _already_sent(self, key: str) -> Receipt | None:
        attempt = self.ledger.for_key(key)
        if attempt is None or attempt.state == "failed":
            return None
        if attempt.state == "sent":
            return self._receipt_from(attempt)
        pre = attempt.pre or {}
        started = pre.get("timestamp")
        if pre.get("pid") != os.getpid() and _pid_alive(pre.get("pid")) and self._age(started) < IN_FLIGHT_S:
            raise Conflict("A send with this idempotency_key is in progress in another H0 process.", idempotency_key=key)
        rfc = str(pre.get("rfc822_message_id") or (attempt.outcome or {}).get("rfc822_message_id"))
        try:
            found = self.backend.find_sent(rfc)
        except NotSupported:
            raise SendFailed(
                UNKNOWN_OUTCOME_MESSAGE.format(backend=self.backend.name),
                outcome="unknown", retryable=False, idempotency_key=key, rfc822_message_id=rfc,
            ) from None
        if found is None:
            logger.info("idempotency key {}: earlier attempt {} never reached {}; sending", key, rfc, self.backend.name)
            return None
        receipt = self._record_sent(found, rfc, key, ["recovered: an earlier attempt had sent it"], recovered=True)
        receipt.already_sent = True
        return receipt

    @staticmethod
    def _age(timestamp: object) -> float:
        stamp = record_epoch({"timestamp": timestamp})
        return time.time() - stamp if stamp is not None else float("inf")

    def _receipt_from(self, attempt: Attempt) -> Receipt:
        outcome = attempt.outcome or {}
        return Receipt(
            message_id=str(outcome.get("provider_message_id")),
            thread_id=outcome.get("thread_id"),
            sent_at=str(outcome.get("sent_at") or outcome.get("timestamp")),
            rfc822_message_id=str(outcome.get("rfc822_message_id")),
            backend=str(outcome.get("backend") or self.backend.name),
            already_sent=True,
        )

    # -- threading -----------------------------------------------------------------------

    def _thread(self, reply_to: str | None, thread_id: str | None, subject: str, hints: list[str]):
        """(In-Reply-To, References, threadId) for a reply; a failed look-up blocks the
        send only when there is no thread_id to fall back on."""
        if not reply_to:
            return None, None, thread_id
        try:
            original = self.backend.get_message(reply_to)
        except NotSupported:
            hints.append(f"the {self.backend.name} backend cannot read the original; sent without In-Reply-To")
            return None, None, thread_id
        except H0Error as err:
            if thread_id is None:
                if isinstance(err, NotFound):
                    raise NotFound(f"The message being replied to ({reply_to}) was not found.", reply_to_message_id=reply_to) from None
                raise
            hints.append(f"could not read the original ({err.code}); threaded by thread_id only")
            return None, None, thread_id
        parent = original.headers.get("Message-ID")
        if not parent:
            hints.append("the original has no Message-ID header; threaded by thread_id only")
        in_reply_to, references = reply_headers(str(parent) if parent else None, original.headers.get("References"))
        if not subject.lower().startswith("re:") and original.headers.get("Subject"):
            hints.append("the subject does not start with 'Re:'; some mail clients will not thread it")
        return in_reply_to, references, thread_id or original.thread_id

    # -- caps, delivery, outcome ---------------------------------------------------------

    def _reserve(self, **pre_send: object) -> None:
        now = time.time()
        with self._cap_lock:
            if self._stopping:
                raise McpUnavailable("The mail server is shutting down; nothing was sent. Try again.", retryable=True)
            for window, cap, label in ((HOUR, self.caps.per_hour, "hourly"), (DAY, self.caps.per_day, "daily")):
                recent = self.ledger.sends_within(window, now)
                if len(recent) + self._in_flight >= cap:
                    # A slot frees up when enough of the counted sends have left the window.
                    index = len(recent) + self._in_flight - cap
                    frees_at = recent[index] + window if 0 <= index < len(recent) else now + window
                    wait = max(1.0, round(frees_at - now, 1))
                    raise RateLimited(
                        f"The {label} send cap ({cap}) is reached; nothing was sent. Try again in {wait:.0f} s.",
                        retry_after=wait, cap=cap, window=label,
                    )
            self.ledger.write(PRE_SEND, "info", **pre_send)  # raises if the log cannot be written
            self._in_flight += 1

    def drain(self, timeout: float) -> bool:
        """Refuse new sends and wait for those in flight; True if none is left."""
        with self._cap_lock:
            self._stopping = True
            return self._cap_lock.wait_for(lambda: self._in_flight == 0, timeout)

    def _deliver(self, message, rfc: str, thread_id: str | None, key: str | None) -> Sent:
        def attempt(number: int) -> Sent:
            if number > 0:  # the previous try may have gone through after all
                try:
                    found = self.backend.find_sent(rfc)
                except NotSupported:
                    found = None
                if found is not None:
                    return found
            return self.backend.send(message, thread_id=thread_id)

        def on_retry(number: int, error: H0Error, wait: float) -> None:
            self.ledger.write("send_retry", "warning", rfc822_message_id=rfc, idempotency_key=key,
                              attempt=number, error=error.code, reason=error.message, wait_s=wait)

        try:
            return self.policy.run(attempt, what=f"send {rfc}", on_retry=on_retry)
        except H0Error as err:
            err.details.setdefault("rfc822_message_id", rfc)
            if key:
                err.details.setdefault("idempotency_key", key)
            self.ledger.write(
                FAILED, "error", rfc822_message_id=rfc, idempotency_key=key, backend=self.backend.name,
                error=err.code, reason=err.message, retryable=is_retryable(err),
                bounce=bool(err.details.get("bounce")), outcome=err.details.get("outcome", "failed"),
            )
            raise

    def _record_sent(self, sent: Sent, rfc: str, key: str | None, hints: list[str], *, recovered: bool = False) -> Receipt:
        sent_at = iso(utcnow())
        try:
            self.ledger.write(SENT, "info", rfc822_message_id=rfc, idempotency_key=key, provider_message_id=sent.message_id,
                              thread_id=sent.thread_id, sent_at=sent_at, backend=self.backend.name, recovered=recovered or None)
        except InternalError as err:
            # The mail is gone; failing now would only invite a resend. The pre-send record
            # plus a Message-ID look-up will still recognise it next time.
            logger.error("sent {} but could not record it: {}", rfc, err.message)
            hints.append(f"sent, but the audit log could not be written: {err.message}")
        return Receipt(sent.message_id, sent.thread_id, sent_at, rfc, self.backend.name, False, hints)
