"""IMAP's wire, translated: a logged-in imapclient connection, its failures as typed H0 errors,
and a fetched RFC 5322 message as a plain `Fetched`. Everything imapclient-shaped stays here
and in imap.py / imap_idle.py.

Message ids are `<UIDVALIDITY>-<UID>` for INBOX and `<folder>/<UIDVALIDITY>-<UID>` elsewhere: a
UID means nothing without its folder's UIDVALIDITY, so an id from before the server renumbered
a folder is answered not_found instead of naming another message. Labels are Gmail-shaped so
the query filter and the notes read the same for every backend: `INBOX` (or the folder's name,
`SENT` for the Sent folder), `UNREAD` (no `\\Seen`), `STARRED` (`\\Flagged`), `DRAFT`, and each
keyword as it is.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email
import imaplib
import re
import socket
import ssl
from collections.abc import Iterable
from email import policy
from email.message import EmailMessage, Message
from email.parser import HeaderParser
from typing import TYPE_CHECKING, Any

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError, LoginError

from h0.errors import AuthRequired, H0Error, InternalError, InvalidRequest, ParseError
from h0.mail.headers import clean_header_text, clean_inbound_header
from h0.mail.incoming.htmltext import html_to_text
from h0.mail.incoming.mimebounds import check_raw
from h0.mail.providers.backend import AttachmentInfo, Fetched

if TYPE_CHECKING:
    from h0.config import Settings

INBOX = "INBOX"
_HEADER_NAME = re.compile(r"[!-9;-~]+")  # RFC 5322 ftext: printable ASCII but ':'
_ID = re.compile(r"(?:(?P<folder>.+)/)?(?P<validity>[0-9]{1,10})-(?P<uid>[0-9]{1,10})")
_KEYWORD_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]")
SNIPPET_CHARS = 200
SNIPPET_MAX_BYTES = 1_000_000  # larger messages are listed without a snippet (no download)
ROOT_REFERENCE = re.compile(r"<[^<>\s]{1,900}>")

# Gmail-shaped labels for IMAP's system flags: (label, flag, the label means the flag is set)
FLAG_LABELS = (("UNREAD", b"\\Seen", False), ("STARRED", b"\\Flagged", True), ("DRAFT", b"\\Draft", True))


def keyword(label_name: str) -> str:
    """The IMAP keyword for a label name: characters an IMAP atom may not hold, and '/', become '-'
    (so GMAIL_INGESTED_LABEL's `H0/ingested` is the keyword `H0-ingested`)."""
    word = _KEYWORD_UNSAFE.sub("-", label_name.strip()).strip("-") or "H0-label"
    return word[:100]


def message_id(folder: str, validity: int, uid: int) -> str:
    return f"{validity}-{uid}" if folder == INBOX else f"{folder}/{validity}-{uid}"


def parse_id(value: str) -> tuple[str, int, int]:
    """(folder, UIDVALIDITY, UID) of a message id; InvalidRequest for anything else."""
    match = _ID.fullmatch(str(value).strip())
    if not match or any(c in value for c in "\r\n\0"):
        raise InvalidRequest(
            "message_id is not an IMAP message id ('<uidvalidity>-<uid>', or '<folder>/<uidvalidity>-<uid>').",
            field="message_id",
        )
    return match.group("folder") or INBOX, int(match.group("validity")), int(match.group("uid"))


# -- the connection ---------------------------------------------------------------------------


def connect(
    settings: Settings, *, host: str | None = None, port: int | None = None, timeout: float | None = None
) -> IMAPClient:
    """A logged-in client for IMAP_* (ssl: implicit TLS, starttls, or none: plain, loopback only
    in practice). Certificates are verified against the system store."""
    host = host or settings.imap_host
    if not host:
        raise AuthRequired("IMAP is not configured: IMAP_HOST is not set (see .env.example).", setting="IMAP_HOST")
    secure = settings.imap_secure
    port = port or settings.imap_port or (993 if secure == "ssl" else 143)
    user = settings.imap_user
    password = settings.imap_pass.get_secret_value() if settings.imap_pass else None
    oauth2 = settings.imap_auth == "oauth2"
    if not user or (password is None and not oauth2):
        raise AuthRequired(
            "IMAP is not configured: set IMAP_USER and IMAP_PASS, or IMAP_AUTH=oauth2 (see .env.example).",
            setting="IMAP_USER",
        )
    context = ssl.create_default_context()
    try:
        client = IMAPClient(
            host, port, ssl=secure == "ssl", ssl_context=context, timeout=timeout or settings.imap_timeout_seconds
        )
        client.normalise_times = False  # INTERNALDATE with its zone, not as naive local time
        if secure == "starttls":
            client.starttls(context)
    except ssl.SSLError as exc:
        raise InternalError(f"TLS with {host}:{port} failed: {exc}", retryable=False) from None
    except (OSError, IMAPClientError) as exc:
        raise InternalError(f"Could not reach the IMAP server {host}:{port}: {exc}", retryable=True) from None
    if oauth2:
        return _oauth2_login(client, settings, user, f"{host}:{port}")
    try:
        client.login(user, password)
    except LoginError:
        _quietly_close(client)
        raise AuthRequired(
            f"The IMAP server {host} refused the login for {user}: check IMAP_USER / IMAP_PASS "
            "(many providers need an app password).",
            setting="IMAP_PASS",
        ) from None
    except (OSError, IMAPClientError) as exc:
        _quietly_close(client)
        raise InternalError(f"The IMAP server {host}:{port} failed during login: {exc}", retryable=True) from None
    return client


def _oauth2_login(client: IMAPClient, settings: Settings, user: str, where: str) -> IMAPClient:
    """XOAUTH2 with the owner's sign-in (h0.mail.providers.xoauth2): once more with a refreshed token if refused."""
    from h0.mail.providers.xoauth2 import access_token, refused

    for attempt in (0, 1):
        try:
            token = access_token(settings, force_refresh=attempt > 0)
        except H0Error:
            _quietly_close(client)
            raise
        try:
            client.oauth2_login(user, token)
            return client
        except LoginError:
            continue
        except (OSError, IMAPClientError) as exc:
            _quietly_close(client)
            raise InternalError(f"The IMAP server {where} failed during login: {exc}", retryable=True) from None
    _quietly_close(client)
    raise refused(settings, "IMAP", user)


def _quietly_close(client: IMAPClient) -> None:
    with contextlib.suppress(Exception):  # the connection is being thrown away
        client.shutdown()


def map_error(exc: BaseException, what: str) -> H0Error | None:
    """A typed error for an imapclient/socket failure, or None if `exc` is not one."""
    if isinstance(exc, H0Error):
        return exc
    if isinstance(exc, (IMAPClientAbortError, imaplib.IMAP4.abort, OSError, socket.timeout)):
        return InternalError(f"The IMAP connection was lost during {what}: {exc}", retryable=True, reconnect=True)
    if isinstance(exc, (IMAPClientError, imaplib.IMAP4.error)):
        return InternalError(f"The IMAP server refused {what}: {exc}", retryable=False)
    return None


# -- messages ---------------------------------------------------------------------------------


def _text(value: Any) -> str:
    """A raw header value as text: 8-bit bytes read as UTF-8 (what servers and senders mostly mean)."""
    text = str(value) if not isinstance(value, bytes) else value.decode("utf-8", "replace")
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def headers_message(raw_headers: bytes) -> EmailMessage:
    """A header-only EmailMessage of the cleaned values (as gmail_wire does for Gmail's pairs)."""
    lines = []
    text = raw_headers.decode("utf-8", "replace")  # 8-bit header bytes: UTF-8 is what senders mostly mean
    for field in re.split(r"\r?\n(?![ \t])", text):
        name, colon, value = field.partition(":")
        if colon and _HEADER_NAME.fullmatch(name):
            unfolded = re.sub(r"\r?\n[ \t]", " ", value).strip()
            lines.append(f"{name}: {clean_inbound_header(name, unfolded)}\n")
    return HeaderParser(_class=ParsedOnce, policy=policy.default).parsestr("".join(lines) + "\n")


class ParsedOnce(EmailMessage):
    """Headers whose values are parsed once: `policy.default` parses a header (and builds a class for it)
    on every read, and a message's From, To and Date are read a dozen times on its way into H0."""

    def get(self, name: str, failobj: Any = None) -> Any:
        cache: dict[str, Any] = self.__dict__.setdefault("_parsed", {})
        key = name.lower()
        if key not in cache:
            cache[key] = super().get(name)
        value = cache[key]
        return failobj if value is None else value

    def __setitem__(self, name: str, val: Any) -> None:
        self.__dict__.pop("_parsed", None)
        super().__setitem__(name, val)

    def __delitem__(self, name: str) -> None:
        self.__dict__.pop("_parsed", None)
        super().__delitem__(name)


def _decoded(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        payload = str(part.get_payload() or "").encode("utf-8", "surrogateescape")
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, "replace")
    except (LookupError, ValueError):
        return payload.decode("utf-8", "replace")


def labels_for(folder: str, flags: Any, sent_folder: str | None) -> list[str]:
    flags = {f if isinstance(f, bytes) else str(f).encode() for f in flags or ()}
    lowered = {f.lower() for f in flags}
    labels = ["SENT" if folder == sent_folder else folder]
    for label, flag, when_set in FLAG_LABELS:
        if (flag.lower() in lowered) == when_set:
            labels.append(label)
    labels += sorted(f.decode("utf-8", "replace") for f in flags if not f.startswith(b"\\"))
    return labels


def thread_root(headers: Message) -> str | None:
    """The conversation's first Message-ID (References' first, else In-Reply-To, else its own):
    IMAP has no thread ids that survive a move, so H0 names a thread by its root message."""
    for name in ("References", "In-Reply-To", "Message-ID"):
        found = ROOT_REFERENCE.search(str(headers.get(name) or ""))
        if found:
            return found.group(0)
    return None


def internal_ms(value: Any) -> int | None:
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return int(stamp.timestamp() * 1000)
    return None


def fetched_from_raw(
    msg_id: str, raw: bytes, *, folder: str, flags: Any, internal_date: Any, sent_folder: str | None, full: bool
) -> Fetched:
    """A fetched message as `Fetched`: cleaned headers, labels, and (full) the first text/plain and
    text/html bodies and attachment metadata. Malformed MIME is read as far as it goes; hostile MIME
    (h0.mail.incoming.mimebounds) is a ParseError for this message alone."""
    check_raw(raw)
    head, _, _ = raw.partition(b"\r\n\r\n") if b"\r\n\r\n" in raw else raw.partition(b"\n\n")
    headers = headers_message(head + b"\r\n\r\n")
    fetched = Fetched(
        id=msg_id,
        thread_id=thread_root(headers),
        headers=headers,
        labels=labels_for(folder, flags, sent_folder),
        internal_date_ms=internal_ms(internal_date),
    )
    if not raw:
        return fetched
    try:
        message = email.message_from_bytes(raw, policy=policy.compat32)
        parts = list(message.walk())
    except RecursionError:  # nesting check_raw did not count (a boundary the parser infers)
        raise ParseError("its MIME parts nest too deeply: not read", reason="mime_too_deep") from None
    text = html = None
    for part in parts:
        if part.is_multipart():
            continue
        mime = part.get_content_type().lower()
        disposition = str(part.get("Content-Disposition", "")).lower()
        filename = part.get_filename()
        if filename or disposition.startswith("attachment"):
            payload = part.get_payload(decode=True)
            size = len(payload) if isinstance(payload, bytes) else 0
            fetched.attachments.append(
                AttachmentInfo(clean_header_text(_text(filename or "")) or "(unnamed)", mime, size)
            )
        elif mime == "text/plain" and text is None:
            text = _decoded(part)
        elif mime == "text/html" and html is None:
            html = _decoded(part)
    if full:
        fetched.text, fetched.html = text, html
    snippet = text if text is not None else html_to_text(html or "")
    fetched.snippet = clean_header_text(" ".join(snippet.split())[:SNIPPET_CHARS])
    return fetched


def flag_names(flags: Iterable[Any]) -> set[bytes]:
    """A message's flags as lower-case bytes, however the server spelled them."""
    return {(f if isinstance(f, bytes) else str(f).encode()).lower() for f in flags or ()}


def appended_uid(answer: Any) -> int | None:
    """The UID from an APPENDUID response code (RFC 4315), if the server gave one."""
    text = answer.decode("ascii", "replace") if isinstance(answer, bytes) else str(answer or "")
    if "APPENDUID" not in text.upper():
        return None
    try:
        return int(text.upper().split("APPENDUID", 1)[1].split("]")[0].split()[1])
    except (IndexError, ValueError):
        return None
