"""One logged-in IMAP session for a backend: reopened once when the server drops it, the folders it
selects, and where the account keeps its sent mail."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError
from imapclient.imapclient import SENT as SENT_FLAG

from h0.errors import NotFound
from h0.mail.providers.imap_query import SENT
from h0.mail.providers.imap_wire import connect, map_error, parse_id

if TYPE_CHECKING:
    from h0.config import Settings

T = TypeVar("T")


class ImapConnection:
    """The session, behind one lock: IMAP is one conversation, so calls take turns."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.RLock()
        self._client: IMAPClient | None = None
        self.sent_folder: str | None = None  # found (or created) on first use

    def run(self, what: str, call: Callable[[IMAPClient], T], *, again: bool = True) -> T:
        """`call` with a logged-in client; a lost connection is reopened and tried once more."""
        with self._lock:
            for attempt in (0, 1):
                if self._client is None:
                    self._client = connect(self.settings)
                try:
                    return call(self._client)
                except Exception as exc:
                    mapped = map_error(exc, what)
                    if mapped is None:
                        raise
                    if mapped.details.pop("reconnect", False):
                        self.drop()
                        if again and attempt == 0:
                            continue
                    raise mapped from None
            raise AssertionError("unreachable")

    def drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):  # it is gone either way
                client.shutdown()

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            try:
                client.logout()
            except Exception:  # noqa: BLE001 — closing anyway
                with contextlib.suppress(Exception):
                    client.shutdown()

    def select(self, client: IMAPClient, folder: str) -> int:
        """SELECT `folder` afresh (so new mail is seen); its UIDVALIDITY."""
        try:
            status = client.select_folder(folder)
        except IMAPClientAbortError:
            raise
        except IMAPClientError:  # a NO
            raise NotFound(f"There is no folder {folder!r} on the IMAP server.", folder=folder) from None
        return int(status[b"UIDVALIDITY"])

    def folder(self, client: IMAPClient, name: str) -> str:
        if name != SENT:
            return name
        if self.sent_folder is None:
            found = client.find_special_folder(SENT_FLAG)
            if found is None:
                client.create_folder("Sent")
                found = "Sent"
            self.sent_folder = found
        return self.sent_folder

    def open(self, client: IMAPClient, msg_id: str) -> tuple[str, int]:
        folder, validity, uid = parse_id(msg_id)
        if self.select(client, folder) != validity:
            raise NotFound(f"Message {msg_id} is gone: the server renumbered {folder} since.", message_id=msg_id)
        return folder, uid
