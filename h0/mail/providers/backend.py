"""The mail backend contract: the one seam between H0 and a mail provider.

Modelled on httpx's transport: a backend takes a standard-library `EmailMessage` and
returns plain values (ids, strings, the small dataclasses below). Nothing above this
module ever sees a provider type — no Gmail resource dicts, no smtplib objects.
Failures are raised as `h0.errors` types; a failure that may succeed if tried again sets
`details["retryable"] = True`, and a send whose fate is unknown sets
`details["outcome"] = "unknown"` (never retryable: the caller checks `find_sent` first).

Two small protocols, split by role: `MailSender` (send, and say whether a message was sent:
every backend) and `Mailbox` (read, label, follow changes: Gmail, IMAP and Outlook). A caller asks
whether there is a mailbox by type, with `mailbox_of`, never by trying and catching.
Backends hold connections: use them as context managers or call `close()`. A new backend is
one module and one line in `BACKENDS`, and `open_backend` is the one place a backend is chosen.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import TYPE_CHECKING, ClassVar, Protocol, Self, TypeVar, runtime_checkable

from h0.errors import H0Error, InternalError, NotFound, NotSupported
from h0.mail.models import TokenState

if TYPE_CHECKING:
    from h0.config import Settings

T = TypeVar("T")

# name → "module:Class"; imported on demand so the outbox never loads the Google client.
BACKENDS: dict[str, str] = {
    "gmail": "h0.mail.providers.gmail:GmailBackend",
    "smtp": "h0.mail.providers.smtp:SmtpBackend",
    "outbox": "h0.mail.providers.outbox:OutboxBackend",
    "imap": "h0.mail.providers.imap:ImapBackend",
    "outlook": "h0.mail.providers.outlook:OutlookBackend",
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


class MailSender(Protocol):
    """What every backend does: hand a message to the provider, and say whether it already did.

    SMTP and the outbox are this alone; Gmail and IMAP are a `Mailbox` too. The methods with a
    body answer for a backend that has nothing more to say (no token, no local problems); a
    backend class subclasses this protocol to inherit them, and `close()`'s context manager.
    """

    name: ClassVar[str]
    notice: ClassVar[str | None] = None  # said loudly at start-up (the outbox: "nothing is sent")

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        """Hand `message` to the provider once. Never retries on its own."""
        ...

    def find_sent(self, rfc822_message_id: str) -> Sent | None:
        """The message with this Message-ID if the provider has sent it, else None.
        Raises NotSupported when the provider cannot tell (SMTP): the outcome of an unanswered
        send then stays unknown, and is never guessed by sending again."""
        ...

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
        return  # a body, not `...`: the default for a backend that holds no connection

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@runtime_checkable
class Mailbox(Protocol):
    """A mailbox the provider keeps: read it, label it, follow its changes (Gmail, IMAP).

    Whether a backend has one is asked by type, once: `mailbox_of(backend)`. Every method
    answers in full or raises a typed `H0Error`, with the module's contract on retries.
    """

    name: ClassVar[str]
    batch_limit: ClassVar[int]  # how many calls one round trip may carry (fetch_many, modify_many)

    # -- reading -------------------------------------------------------------------------

    def list_messages(self, query: str, max_results: int) -> list[Fetched]:
        """Messages matching a Gmail-syntax query, newest first, headers and snippet only."""
        ...

    def message_ids(self, query: str, max_results: int) -> list[str]:
        """Ids of the messages matching a Gmail-syntax query, newest first (nothing fetched)."""
        ...

    def get_message(self, message_id: str) -> Fetched:
        """One message with its decoded bodies and attachment metadata (never attachment bytes)."""
        ...

    def fetch_many(self, message_ids: list[str]) -> dict[str, Fetched | H0Error]:
        """Full messages in one round trip where the provider allows (at most `batch_limit` ids): each id
        answered by its message or its own typed error (NotFound: deleted since)."""
        ...

    def thread_messages(self, thread_id: str) -> list[Fetched]:
        """The messages of one thread, oldest first, with headers From/To/Subject/Message-ID/Date, labels and
        internal_date_ms (no bodies needed)."""
        ...

    def find_bounce(self, rfc822_message_id: str) -> int | None:
        """Epoch ms of a delivery-failure report for this Message-ID, or None if none is known."""
        ...

    # -- labels --------------------------------------------------------------------------

    def ensure_label(self, name: str) -> Label:
        """The label called `name` (case-insensitive), created if missing."""
        ...

    def modify_labels(self, message_id: str, add: list[str], remove: list[str]) -> list[str]:
        """Add and remove label ids on a message; returns its label ids afterwards."""
        ...

    def modify_many(self, message_ids: list[str], add: list[str], remove: list[str]) -> dict[str, list[str] | H0Error]:
        """modify_labels for many messages in one round trip where the provider allows (at most `batch_limit`)."""
        ...

    def modify_all(self, message_ids: list[str], add: list[str], remove: list[str]) -> None:
        """The same label change on many messages in one call (Gmail: messages.batchModify, ≤ 1000 ids,
        cheaper than one modify each from about ten messages on)."""
        ...

    # -- changes -------------------------------------------------------------------------

    def position(self) -> Position:
        """The account and where its mailbox stands now."""
        ...

    def changes_since(self, cursor: int, *, label: str | None, limit: int) -> Changes:
        """Messages added after `cursor` (only those with label id `label`, if given), reading until at
        least `limit` are found or none are left. Raises CursorExpired when `cursor` is too old."""
        ...

    def sent_changes(self, cursor: int | None, *, limit: int) -> Changes | None:
        """The owner's sent messages after `cursor`, oldest first, where the provider keeps them apart from the
        changes `changes_since` follows (IMAP's Sent folder). `cursor` None, or one from before the folder was
        renumbered: nothing, and the cursor of now. None where the sent mail is in those changes already
        (Gmail: SENT is in its history)."""
        ...


def one_by_one(ids: list[str], call: Callable[[str], T]) -> dict[str, T | H0Error]:
    """`call` on each id in turn, each answered by its result or its own typed error: a batch method
    (`fetch_many`, `modify_many`) where the provider has no batch for it."""
    answers: dict[str, T | H0Error] = {}
    for one in ids:
        try:
            answers[one] = call(one)
        except H0Error as error:
            answers[one] = error
    return answers


def mailbox_of(backend: MailSender) -> Mailbox | None:
    """The backend's mailbox, or None for a backend that only sends (SMTP, the outbox)."""
    return backend if isinstance(backend, Mailbox) else None


def open_backend(settings: Settings) -> MailSender:
    """The backend MAIL_BACKEND names, built from settings (no network until first use)."""
    target = BACKENDS.get(settings.mail_backend)
    if target is None:
        raise NotSupported(f"Unknown MAIL_BACKEND {settings.mail_backend!r}; choose one of {', '.join(BACKENDS)}.")
    module_name, _, class_name = target.partition(":")
    build: Callable[[Settings], MailSender] = getattr(importlib.import_module(module_name), class_name)
    return build(settings)
