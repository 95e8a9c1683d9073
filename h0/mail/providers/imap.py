"""The IMAP backend: read, label and file mail over IMAP (imapclient); send over SMTP with a copy in Sent.

Ingest follows INBOX by UID. The cursor is one integer, `UIDVALIDITY << 32 | last UID`, kept by
h0.mail.incoming.sync in H0's state database like Gmail's historyId: `changes_since` lists the UIDs above
it, and a cursor from another UIDVALIDITY (the server renumbered INBOX) raises CursorExpired, so
the sync catches up by query (`-label:H0/ingested` → `UNKEYWORD H0-ingested`). The "ingested"
mark is an IMAP keyword on the message itself, so nothing local can drift and a renumbered
mailbox never yields a second note. Labels are keywords; `move_email` moves between folders
(MOVE): h0.mail.providers.imap_labels. The push channel, IDLE, is h0.mail.providers.imap_idle.

Sending is exactly-once with a write-ahead copy in the Sent folder: h0.mail.providers.imap_send.

One connection (h0.mail.providers.imap_connection), used under a lock (the mail server's tools run in
worker threads); a lost connection is reopened once at once, then left to the caller's retry policy.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any, TypeVar

from imapclient import IMAPClient

from h0.errors import H0Error, InvalidRequest, NotFound
from h0.mail.compose.addresses import checked_thread_id
from h0.mail.providers.backend import Added, Changes, CursorExpired, Fetched, Label, Mailbox, MailSender, Position, Sent
from h0.mail.providers.imap_connection import ImapConnection
from h0.mail.providers.imap_labels import ImapLabels
from h0.mail.providers.imap_query import SENT, ImapQuery, parse_query
from h0.mail.providers.imap_send import SentCopy
from h0.mail.providers.imap_wire import (
    INBOX,
    SNIPPET_MAX_BYTES,
    connect,
    fetched_from_raw,
    internal_ms,
    labels_for,
    message_id,
    parse_id,
)
from h0.mail.providers.smtp import SmtpBackend
from h0.platform.deadline import within

if TYPE_CHECKING:
    from h0.config import Settings

T = TypeVar("T")
BATCH = 200  # UIDs one FETCH or STORE carries
_FULL = [b"FLAGS", b"INTERNALDATE", b"BODY.PEEK[]"]
_LIST = [b"FLAGS", b"INTERNALDATE", b"RFC822.SIZE", b"BODY.PEEK[HEADER]"]
MAX_THREAD_ID_CHARS = 1000


def _cursor(validity: int, uid: int) -> int:
    return (validity << 32) | uid


class ImapBackend(MailSender, Mailbox):
    name = "imap"
    batch_limit = BATCH

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.user = settings.imap_user or ""
        self.host = settings.imap_host or ""
        self.smtp = SmtpBackend(settings)  # SMTP_* as for MAIL_BACKEND=smtp (its own login: hosts differ)
        self.smtp.sender = self.smtp.sender or (self.user if "@" in self.user else None)
        self.clock = clock
        self.connection = ImapConnection(settings)
        self.labels = ImapLabels(self.connection)
        self.sent_copy = SentCopy(self.connection, self.smtp, self._fetched)
        self.folders: list[str] = []  # the folders the last health check found

    def close(self) -> None:
        self.connection.close()

    def _fetched(self, folder: str, validity: int, uid: int, data: dict[bytes, Any], *, full: bool) -> Fetched:
        raw = data.get(b"BODY[]") or data.get(b"BODY[HEADER]") or b""
        return fetched_from_raw(
            message_id(folder, validity, uid),
            raw,
            folder=folder,
            flags=data.get(b"FLAGS"),
            internal_date=data.get(b"INTERNALDATE"),
            sent_folder=self.connection.sent_folder,
            full=full,
        )

    # -- sending: a write-ahead copy in Sent (h0.mail.providers.imap_send) ----------------------------

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        return self.sent_copy.send(message, thread_id=thread_id)

    def find_sent(self, rfc822_message_id: str) -> Sent | None:
        return self.sent_copy.find_sent(rfc822_message_id)

    # -- reading -------------------------------------------------------------------------

    def _search(self, client: IMAPClient, query: ImapQuery, max_results: int) -> tuple[str, int, list[int]]:
        folder = self.connection.folder(client, query.folder)
        validity = self.connection.select(client, folder)
        uids = sorted(client.search(query.search, query.charset), reverse=True)
        if query.after_s is not None or query.before_s is not None:
            kept: list[int] = []
            for start in range(0, len(uids), BATCH):
                chunk = uids[start : start + BATCH]
                dates = client.fetch(chunk, [b"INTERNALDATE"])
                kept += [u for u in chunk if u in dates and query.admits(_seconds(dates[u].get(b"INTERNALDATE")))]
                if len(kept) >= max_results:
                    break
            uids = kept
        return folder, validity, uids[:max_results]

    def message_ids(self, query: str, max_results: int) -> list[str]:
        parsed = parse_query(query, now_s=self.clock())
        folder, validity, uids = self.connection.run("a search", lambda c: self._search(c, parsed, max_results))
        return [message_id(folder, validity, uid) for uid in uids]

    def list_messages(self, query: str, max_results: int) -> list[Fetched]:
        parsed = parse_query(query, now_s=self.clock())

        def listing(client: IMAPClient) -> list[Fetched]:
            folder, validity, uids = self._search(client, parsed, max_results)
            if not uids:
                return []
            data = client.fetch(uids, _LIST)
            small = [u for u in uids if int(data.get(u, {}).get(b"RFC822.SIZE") or 0) <= SNIPPET_MAX_BYTES]
            bodies = client.fetch(small, [b"BODY.PEEK[]"]) if small else {}  # for the snippet
            for uid, body in bodies.items():
                if uid in data:
                    data[uid][b"BODY[]"] = body.get(b"BODY[]")
            return [self._fetched(folder, validity, u, data[u], full=False) for u in uids if u in data]

        return self.connection.run("a listing", listing)

    def get_message(self, message_id: str) -> Fetched:
        answer = self.fetch_many([message_id])[message_id]
        if isinstance(answer, H0Error):
            raise answer
        return answer

    def fetch_many(self, message_ids: list[str]) -> dict[str, Fetched | H0Error]:
        """One FETCH per folder for up to BATCH ids; a UID no longer there is answered not_found."""
        answers: dict[str, Fetched | H0Error] = {}
        by_folder: dict[tuple[str, int], list[tuple[str, int]]] = defaultdict(list)
        for msg_id in dict.fromkeys(message_ids):
            try:
                folder, validity, uid = parse_id(msg_id)
            except InvalidRequest as err:
                answers[msg_id] = err
                continue
            by_folder[(folder, validity)].append((msg_id, uid))

        def fetch(client: IMAPClient) -> None:
            for (folder, validity), wanted in by_folder.items():
                try:
                    current = self.connection.select(client, folder)
                except NotFound as err:
                    answers.update({m: err for m, _ in wanted})
                    continue
                if current != validity:
                    answers.update(
                        {
                            m: NotFound(f"Message {m} is gone: the server renumbered {folder} since.", message_id=m)
                            for m, _ in wanted
                        }
                    )
                    continue
                data = client.fetch([uid for _, uid in wanted], _FULL)
                for msg_id, uid in wanted:
                    if uid in data and data[uid].get(b"BODY[]") is not None:
                        try:
                            answers[msg_id] = self._fetched(folder, validity, uid, data[uid], full=True)
                        except H0Error as err:  # hostile MIME: this message only (h0.mail.incoming.mimebounds)
                            answers[msg_id] = err
                    else:
                        answers[msg_id] = NotFound(
                            f"Message {msg_id} is not on the IMAP server (deleted or moved).", message_id=msg_id
                        )

        try:
            self.connection.run("fetching messages", fetch)
        except H0Error as err:
            for msg_id in message_ids:
                answers.setdefault(msg_id, err)
        return answers

    def thread_messages(self, thread_id: str) -> list[Fetched]:
        """The messages of INBOX and Sent whose Message-ID, References or In-Reply-To name the root."""
        root = checked_thread_id(thread_id, MAX_THREAD_ID_CHARS)
        criteria = [
            "OR",
            "HEADER",
            "Message-ID",
            root,
            "OR",
            "HEADER",
            "References",
            root,
            "HEADER",
            "In-Reply-To",
            root,
        ]

        def gather(client: IMAPClient) -> list[Fetched]:
            found: list[Fetched] = []
            for name in (INBOX, SENT):
                folder = self.connection.folder(client, name)
                validity = self.connection.select(client, folder)
                uids = client.search(criteria)
                data = client.fetch(uids, _LIST) if uids else {}
                found += [self._fetched(folder, validity, u, d, full=False) for u, d in data.items()]
            return found

        return sorted(self.connection.run("a thread search", gather), key=lambda m: m.internal_date_ms or 0)

    # -- incremental sync ----------------------------------------------------------------

    def position(self) -> Position:
        """INBOX's UIDVALIDITY and last UID (UIDNEXT - 1), as one cursor."""

        def where(client: IMAPClient) -> int:
            status = client.select_folder(INBOX)
            return _cursor(int(status[b"UIDVALIDITY"]), max(0, int(status[b"UIDNEXT"]) - 1))

        return Position(f"{self.user}@{self.host}", self.connection.run("reading INBOX's position", where))

    def changes_since(self, cursor: int, *, label: str | None, limit: int) -> Changes:
        """INBOX's messages with a UID above the cursor's, oldest first, with their flags as labels.
        Only INBOX is followed (`label` narrows nothing more)."""
        validity, last = cursor >> 32, cursor & 0xFFFFFFFF

        def read(client: IMAPClient) -> Changes:
            status = client.select_folder(INBOX)
            current, uidnext = int(status[b"UIDVALIDITY"]), int(status[b"UIDNEXT"])
            if current != validity:
                raise CursorExpired(
                    f"INBOX's UIDVALIDITY changed ({validity} → {current}): the server renumbered it.",
                    cursor=str(cursor),
                )
            if uidnext - 1 <= last:
                return Changes([], _cursor(validity, max(last, uidnext - 1)), complete=True)
            return _listed_after(client, INBOX, validity, last, uidnext, limit, sent_folder=None)

        return self.connection.run("reading new mail", read)

    def sent_changes(self, cursor: int | None, *, limit: int) -> Changes:
        """The Sent folder's messages with a UID above the cursor's (its UIDVALIDITY << 32 | UID), oldest first.
        One STATUS when nothing was sent. No cursor, or one of another UIDVALIDITY: nothing, from now on.
        A copy still flagged `\\Draft` (H0's own send under way) is listed with the DRAFT label."""

        def read(client: IMAPClient) -> Changes:
            folder = self.connection.folder(client, SENT)
            status = client.folder_status(folder, [b"UIDVALIDITY", b"UIDNEXT"])
            validity, uidnext = int(status[b"UIDVALIDITY"]), int(status[b"UIDNEXT"])
            now = _cursor(validity, max(0, uidnext - 1))
            if cursor is None or cursor >> 32 != validity:
                return Changes([], now, complete=True)
            last = cursor & 0xFFFFFFFF
            if uidnext - 1 <= last:
                return Changes([], _cursor(validity, max(last, uidnext - 1)), complete=True)
            if self.connection.select(client, folder) != validity:
                return Changes([], now, complete=True)
            return _listed_after(client, folder, validity, last, uidnext, limit, sent_folder=folder)

        return self.connection.run("reading sent mail", read)

    # -- labels and folders (h0.mail.providers.imap_labels) ---------------------------------------

    def find_bounce(self, rfc822_message_id: str) -> int | None:
        return None  # delivery reports are not looked for in an IMAP mailbox (yet): none is known

    def ensure_label(self, name: str) -> Label:
        return self.labels.ensure_label(name)

    def modify_labels(self, message_id: str, add: list[str], remove: list[str]) -> list[str]:
        return self.labels.modify_labels(message_id, add, remove)

    def modify_many(self, message_ids: list[str], add: list[str], remove: list[str]) -> dict[str, list[str] | H0Error]:
        return self.labels.modify_many(message_ids, add, remove)

    def modify_all(self, message_ids: list[str], add: list[str], remove: list[str]) -> None:
        self.labels.modify_all(message_ids, add, remove)

    # -- health --------------------------------------------------------------------------

    def account(self, timeout: float) -> str | None:
        """Log in on a separate connection (at most `timeout` s) and list the folders."""

        def folders() -> list[str]:
            client = connect(self.settings, timeout=timeout)
            try:
                return [name for _, _, name in client.list_folders()]
            finally:
                client.logout()

        found = within(timeout, folders, "imap-health")
        if found is None:
            return None
        self.folders = found
        return self.smtp.account(timeout) or self.user

    def problems(self) -> list[str]:
        problems = []
        if not self.settings.imap_host:
            problems.append("IMAP_HOST is not set")
        oauth2 = self.settings.imap_auth == "oauth2"
        if not self.settings.imap_user or (self.settings.imap_pass is None and not oauth2):
            problems.append("set IMAP_USER and IMAP_PASS" + ("" if oauth2 else " (or IMAP_AUTH=oauth2)"))
        if oauth2:
            problems += self._oauth2_problems()
        problems += [p for p in self.smtp.problems() if p not in problems]
        return problems

    def _oauth2_problems(self) -> list[str]:
        """IMAP_AUTH=oauth2: the sign-in the token comes from, checked locally (h0.mail.providers.xoauth2)."""
        from h0.mail.providers.outlook_auth import IMAP_SCOPES, MicrosoftSignIn
        from h0.mail.providers.xoauth2 import provider_of

        if provider_of(self.settings) == "microsoft":
            return MicrosoftSignIn.from_settings(self.settings, IMAP_SCOPES).problems()
        from h0.mail.providers.auth import TokenStore

        return TokenStore(self.settings.gmail_token_path).problems()


def _listed_after(
    client: IMAPClient, folder: str, validity: int, last: int, uidnext: int, limit: int, *, sent_folder: str | None
) -> Changes:
    """The selected `folder`'s messages with a UID above `last`, oldest first, at most `limit`, with their flags as
    labels (`sent_folder`: the account's Sent folder when it is the one read); the cursor moves past them."""
    uids = sorted(u for u in client.search(["UID", f"{last + 1}:*"]) if u > last)  # n:* always has one
    taken = uids[:limit]
    flags = client.get_flags(taken) if taken else {}
    added = [
        Added(
            message_id(folder, validity, u),
            _cursor(validity, u),
            tuple(labels_for(folder, flags.get(u, ()), sent_folder)),
        )
        for u in taken
    ]
    if len(uids) > limit:
        return Changes(added, _cursor(validity, taken[-1]), complete=False)
    return Changes(added, _cursor(validity, max([last, uidnext - 1, *uids])), complete=True)


def _seconds(value: Any) -> float | None:
    ms = internal_ms(value)
    return ms / 1000 if ms is not None else None
