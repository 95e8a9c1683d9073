"""Sending over IMAP's SMTP with a write-ahead copy in the Sent folder, so that a send is exactly-once.

The message is APPENDed to the Sent folder flagged `\\Draft` ("being sent"), handed to SMTP, then
un-flagged (`mark_sent`). `find_sent` searches Sent for the deterministic Message-ID: no copy → SMTP
never saw it (send); a copy without `\\Draft` → sent; a copy still flagged `\\Draft` → H0 stopped
between APPEND and the end of the send, so the outcome is unknown and nothing is re-sent (the human
checks, and deletes that copy to allow a new attempt). A definite SMTP refusal deletes the copy again.
"""

from __future__ import annotations

from collections.abc import Callable
from email.message import EmailMessage
from typing import Any

from imapclient import IMAPClient

from h0.errors import H0Error, SendFailed
from h0.mail.compose.addresses import refuse_line_breaks
from h0.mail.compose.mime import raw_bytes
from h0.mail.providers.backend import Fetched, Sent
from h0.mail.providers.imap_connection import ImapConnection
from h0.mail.providers.imap_query import SENT
from h0.mail.providers.imap_wire import appended_uid, flag_names, message_id, thread_root
from h0.mail.providers.smtp import SmtpBackend

PENDING = b"\\Draft"  # on the Sent copy while the SMTP send is under way
# (folder, UIDVALIDITY, UID, FETCH data, full?) → the message as H0 reads it (the backend's reader)
Reader = Callable[..., Fetched]


class SentCopy:
    """The IMAP backend's sending: one connection for the Sent folder, SMTP for the send itself."""

    def __init__(self, connection: ImapConnection, smtp: SmtpBackend, fetched: Reader) -> None:
        self.connection = connection
        self.smtp = smtp
        self.fetched = fetched

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        if "From" not in message and self.smtp.sender:
            message["From"] = self.smtp.sender
        rfc = str(message["Message-ID"] or "")
        raw = raw_bytes(message)

        def append(client: IMAPClient) -> tuple[str, int, int]:
            folder = self.connection.folder(client, SENT)
            answer = client.append(folder, raw, flags=(b"\\Seen", PENDING))
            validity = self.connection.select(client, folder)
            uids = client.search(["HEADER", "Message-ID", rfc]) if rfc else []
            uid = appended_uid(answer) or (max(uids) if uids else 0)
            return folder, validity, uid

        try:
            folder, validity, uid = self.connection.run("the copy to Sent", append, again=False)
        except H0Error as err:
            raise SendFailed(
                f"Could not put the copy in the Sent folder, so nothing was sent: {err.message}",
                retryable=bool(err.details.get("retryable")),
                outcome="not_sent",
            ) from None
        try:
            sent = self.smtp.send(message, thread_id=thread_id)
        except SendFailed as err:
            if err.details.get("outcome") == "not_sent":
                self.quietly(lambda c: self.delete(c, folder, validity, uid))
            raise
        warnings = list(sent.warnings)
        if not self.quietly(lambda c: self.mark_sent(c, folder, validity, uid)):
            warnings.append("sent, but the copy in Sent is still flagged as a draft")
        return Sent(
            message_id(folder, validity, uid) if uid else rfc, thread_id or thread_root(message), tuple(warnings)
        )

    def mark_sent(self, client: IMAPClient, folder: str, validity: int, uid: int) -> None:
        if uid and self.connection.select(client, folder) == validity:
            client.remove_flags([uid], [PENDING])

    def delete(self, client: IMAPClient, folder: str, validity: int, uid: int) -> None:
        if uid and self.connection.select(client, folder) == validity:
            client.delete_messages([uid])
            client.uid_expunge([uid]) if client.has_capability("UIDPLUS") else client.expunge()

    def quietly(self, call: Callable[[IMAPClient], None]) -> bool:
        try:
            self.connection.run("tidying the Sent copy", call)
            return True
        except H0Error:
            return False

    def find_sent(self, rfc822_message_id: str) -> Sent | None:
        rfc = rfc822_message_id.strip()
        refuse_line_breaks("rfc822_message_id", rfc)

        def look(client: IMAPClient) -> tuple[str, int, dict[int, dict[bytes, Any]]]:
            folder = self.connection.folder(client, SENT)
            validity = self.connection.select(client, folder)
            uids = client.search(["HEADER", "Message-ID", rfc])
            return folder, validity, client.fetch(uids, [b"FLAGS", b"BODY.PEEK[HEADER]"]) if uids else {}

        folder, validity, found = self.connection.run("the search of Sent", look)
        if not found:
            return None
        done = [uid for uid, data in found.items() if PENDING.lower() not in flag_names(data.get(b"FLAGS", ()))]
        if not done:
            raise SendFailed(
                f"H0 stopped while sending {rfc}: the copy in the Sent folder ({folder}) is still flagged as a draft, "
                "so the SMTP server may or may not have accepted it. It was not re-sent. Check with a recipient; "
                "to send it again, delete that copy from Sent first.",
                retryable=False,
                outcome="unknown",
                rfc822_message_id=rfc,
            )
        uid = min(done)
        fetched = self.fetched(folder, validity, uid, found[uid], full=False)
        return Sent(fetched.id, fetched.thread_id)
