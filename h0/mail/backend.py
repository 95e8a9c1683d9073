"""The mail backend contract: the one seam between H0 and a mail provider.

Modelled on httpx's transport: a backend takes a standard-library `EmailMessage` and
returns plain values (ids, strings, the small dataclasses below). Nothing above this
module ever sees a provider type — no Gmail resource dicts, no smtplib objects.
Failures are raised as `h0.errors` types; a failure that may succeed if tried again sets
`details["retryable"] = True`, and a send whose fate is unknown sets
`details["outcome"] = "unknown"` (never retryable: the caller checks `find_sent` first).

A backend that cannot do something raises `NotSupported` (the default for every optional
method here). Backends hold connections: use them as context managers or call `close()`.
A new backend is one module and one line in `BACKENDS`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import TYPE_CHECKING, ClassVar, Self

from h0.errors import H0Error, InternalError, NotFound, NotSupported
from h0.mail.models import TokenState

if TYPE_CHECKING:
    from h0.config import Settings

# name → "module:Class"; imported on demand so the outbox never loads the Google client.
BACKENDS: dict[str, str] = {
    "gmail": "h0.mail.gmail:GmailBackend",
    "smtp": "h0.mail.smtp:SmtpBackend",
    "outbox": "h0.mail.outbox:OutboxBackend",
    "imap": "h0.mail.imap:ImapBackend",
}


@dataclass(frozen=True, slots=True)
class Sent:
    """What a provider says about a message it accepted."""

    message_id: str  # the provider's id (Gmail id; the Message-ID for SMTP; the .eml name for the outbox)
    thread_id: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AttachmentInfo:
    filename: str
    mime_type: str
    size: int


@dataclass(slots=True)
class Fetched:
    """A stored message as the provider returns it; `headers` is a header-only EmailMessage."""

    id: str
    thread_id: str | None
    headers: EmailMessage
    labels: list[str] = field(default_factory=list)
    snippet: str = ""
    internal_date_ms: int | None = None
    text: str | None = None  # the text/plain body, decoded (full fetches only)
    html: str | None = None  # the text/html body, decoded (full fetches only)
    attachments: list[AttachmentInfo] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Label:
    id: str
    name: str
    created: bool = False
    # False when the provider will not keep this label on a message (an IMAP server whose
    # PERMANENTFLAGS have no \\* and do not list the keyword): H0 then keeps the mark itself.
    kept: bool = True


@dataclass(frozen=True, slots=True)
class Position:
    """Where a mailbox stands now: its account and its change cursor (Gmail: the profile's historyId)."""

    account: str
    cursor: int


@dataclass(frozen=True, slots=True)
class Added:
    """A message that arrived after a cursor, and the change that brought it (Gmail: a history record)."""

    message_id: str
    position: int  # the change's cursor value: a start at `position` lists only what came after it
    labels: tuple[str, ...] | None = None  # its labels when it arrived, if the provider says


@dataclass(frozen=True, slots=True)
class Changes:
    added: list[Added]  # oldest first, each message once
    cursor: int  # where the next listing starts: the mailbox's position, or the last change read if not complete
    complete: bool  # False when changes remain past `cursor` (the read stopped at `limit`)


class CursorExpired(NotFound):
    """The provider no longer keeps changes from that far back (Gmail: 404 on an old startHistoryId):
    the caller catches up another way."""


class ChangesUnreadable(InternalError):
    """The provider's list of changes is not what its API promises (an id that is not a number, a
    record without its message): nothing in it is trusted, and the caller catches up another way."""

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message, retryable=False, **details)


class MailBackend:
    """Base class; `send` is the only method every backend must implement."""

    name: ClassVar[str] = "?"
    can_read: ClassVar[bool] = False
    notice: ClassVar[str | None] = None  # said loudly at start-up (the outbox: "nothing is sent")

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        """Hand `message` to the provider once. Never retries on its own."""
        raise NotImplementedError

    def find_sent(self, rfc822_message_id: str) -> Sent | None:
        """The message with this Message-ID if the provider has sent it, else None.
        Raises NotSupported when the provider cannot tell (SMTP)."""
        raise NotSupported(f"The {self.name} backend cannot look up sent messages.")

    def list_messages(self, query: str, max_results: int) -> list[Fetched]:
        """Messages matching a Gmail-syntax query, newest first, headers and snippet only."""
        raise NotSupported(f"The {self.name} backend cannot read mail.")

    def get_message(self, message_id: str) -> Fetched:
        """One message with its decoded bodies and attachment metadata (never attachment bytes)."""
        raise NotSupported(f"The {self.name} backend cannot read mail.")

    def thread_messages(self, thread_id: str) -> list[Fetched]:
        """The messages of one thread, oldest first, with headers From/To/Subject/Message-ID/Date, labels and
        internal_date_ms (no bodies needed). Backends that cannot read raise NotSupported."""
        raise NotSupported(f"The {self.name} backend cannot read mail.")

    def ensure_label(self, name: str) -> Label:
        """The label called `name` (case-insensitive), created if missing."""
        raise NotSupported(f"The {self.name} backend has no labels.")

    def modify_labels(self, message_id: str, add: list[str], remove: list[str]) -> list[str]:
        """Add and remove label ids on a message; returns its label ids afterwards."""
        raise NotSupported(f"The {self.name} backend has no labels.")

    # -- incremental sync (optional) ---------------------------------------------------

    batch_limit: ClassVar[int] = 1  # how many calls one round trip may carry (fetch_many, modify_many)

    def position(self) -> Position:
        """The account and where its mailbox stands now."""
        raise NotSupported(f"The {self.name} backend cannot follow a mailbox's changes.")

    def changes_since(self, cursor: int, *, label: str | None, limit: int) -> Changes:
        """Messages added after `cursor` (only those with label id `label`, if given), reading until at
        least `limit` are found or none are left. Raises CursorExpired when `cursor` is too old."""
        raise NotSupported(f"The {self.name} backend cannot follow a mailbox's changes.")

    def sent_changes(self, cursor: int | None, *, limit: int) -> Changes:
        """The owner's sent messages after `cursor`, oldest first, where the provider keeps them apart from the
        changes `changes_since` follows (IMAP's Sent folder). `cursor` None, or one from before the folder was
        renumbered: nothing, and the cursor of now. Gmail: NotSupported (SENT is in its history)."""
        raise NotSupported(f"The {self.name} backend has no separate stream of sent mail.")

    def message_ids(self, query: str, max_results: int) -> list[str]:
        """Ids of the messages matching a Gmail-syntax query, newest first (nothing fetched)."""
        raise NotSupported(f"The {self.name} backend cannot read mail.")

    def fetch_many(self, message_ids: list[str]) -> dict[str, Fetched | H0Error]:
        """Full messages in one round trip where the provider allows (at most `batch_limit` ids): each id
        answered by its message or its own typed error (NotFound: deleted since)."""
        answers: dict[str, Fetched | H0Error] = {}
        for message_id in message_ids:
            try:
                answers[message_id] = self.get_message(message_id)
            except H0Error as error:
                answers[message_id] = error
        return answers

    def modify_many(self, message_ids: list[str], add: list[str], remove: list[str]) -> dict[str, list[str] | H0Error]:
        """modify_labels for many messages in one round trip where the provider allows (at most `batch_limit`)."""
        answers: dict[str, list[str] | H0Error] = {}
        for message_id in message_ids:
            try:
                answers[message_id] = self.modify_labels(message_id, add, remove)
            except H0Error as error:
                answers[message_id] = error
        return answers

    def modify_all(self, message_ids: list[str], add: list[str], remove: list[str]) -> None:
        """The same label change on many messages in one call (Gmail: messages.batchModify, ≤ 1000 ids,
        cheaper than one modify each from about ten messages on)."""
        raise NotSupported(f"The {self.name} backend cannot change many messages at once.")

    def find_bounce(self, rfc822_message_id: str) -> int | None:
        """Epoch ms of a delivery-failure report for this Message-ID, or None if none is known."""
        return None

    def account(self, timeout: float) -> str | None:
        """The sending address, asking the provider for at most `timeout` seconds."""
        return None

    def token_state(self) -> TokenState:
        """What the backend knows of its credentials, from local knowledge only (no network)."""
        return "n/a"

    def problems(self) -> list[str]:
        """Configuration problems a person should fix (local checks only)."""
        return []

    def close(self) -> None:
        """Release connections. Safe to call twice."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_backend(settings: Settings) -> MailBackend:
    """The backend MAIL_BACKEND names, built from settings (no network until first use)."""
    target = BACKENDS.get(settings.mail_backend)
    if target is None:
        raise NotSupported(f"Unknown MAIL_BACKEND {settings.mail_backend!r}; choose one of {', '.join(BACKENDS)}.")
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(settings)
