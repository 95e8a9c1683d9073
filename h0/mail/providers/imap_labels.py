"""IMAP labels: a label is a keyword (or a system flag), and moving a message out of INBOX moves it
to the folder of that name. Whether the server keeps a keyword at all is asked once (PERMANENTFLAGS)."""

from __future__ import annotations

from collections import defaultdict

from imapclient import IMAPClient
from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

from h0.errors import H0Error, InternalError, InvalidRequest, NotFound
from h0.mail.providers.backend import Label, one_by_one
from h0.mail.providers.imap_connection import ImapConnection
from h0.mail.providers.imap_wire import FLAG_LABELS, INBOX, flag_names, keyword, labels_for, parse_id


class ImapLabels:
    """Labels on one IMAP account, through its connection."""

    def __init__(self, connection: ImapConnection) -> None:
        self.connection = connection
        self._folder_names: dict[str, str] = {}  # label id (keyword) → the name it was asked for
        self._kept: dict[str, bool] = {}  # keyword → whether INBOX's PERMANENTFLAGS allow it

    def ensure_label(self, name: str) -> Label:
        """A label is a keyword; nothing to create (a move creates its folder when it happens).
        `kept` says whether the server keeps it on a message (see `keeps_keyword`)."""
        if name.strip().upper() == INBOX:
            return Label(INBOX, INBOX)
        word = keyword(name)
        self._folder_names[word] = name.strip()
        return Label(word, name.strip(), kept=self.keeps_keyword(word))

    def keeps_keyword(self, word: str) -> bool:
        """Whether INBOX keeps this keyword on a message: its PERMANENTFLAGS hold `\\*` (any new
        keyword) or name it. Servers without either (many hosted Exchange-style ones) drop it silently."""
        if word not in self._kept:
            flags = self.connection.run(
                "reading INBOX's flags", lambda c: c.select_folder(INBOX).get(b"PERMANENTFLAGS", ())
            )
            allowed = {(f if isinstance(f, bytes) else str(f).encode()).lower() for f in flags or ()}
            self._kept[word] = b"\\*" in allowed or word.lower().encode() in allowed
        return self._kept[word]

    def modify_labels(self, message_id: str, add: list[str], remove: list[str]) -> list[str]:
        """Keywords and flags are stored; adding a label while removing INBOX moves the message to
        the folder of that name (created if missing) — `move_email`. Returns the labels afterwards
        (a moved message's are those in its new folder)."""

        def modify(client: IMAPClient) -> list[str]:
            folder, uid = self.connection.open(client, message_id)
            targets = [a for a in add if a not in ("INBOX", "UNREAD", "STARRED", "DRAFT")]
            if folder == INBOX and "INBOX" in remove and targets:
                return self._move(client, uid, self._folder_names.get(targets[0], targets[0]))
            if folder != INBOX and "INBOX" in add:
                return self._move(client, uid, INBOX)
            self._store(client, [uid], add, remove)
            return labels_for(folder, client.get_flags([uid]).get(uid, ()), self.connection.sent_folder)

        return self.connection.run("a label change", modify)

    def _store(self, client: IMAPClient, uids: list[int], add: list[str], remove: list[str]) -> None:
        plus, minus = _flags_for(add, remove)
        if plus:
            client.add_flags(uids, plus)
        if minus:
            client.remove_flags(uids, minus)
        wanted = [f for f in plus if not f.startswith(b"\\")]
        if wanted:
            after = client.get_flags(uids)
            missing = [w for w in wanted if any(w.lower() not in flag_names(after.get(u, ())) for u in after)]
            if missing:
                raise InternalError(
                    f"The IMAP server did not keep the keyword {missing[0].decode()!r} (its PERMANENTFLAGS have no \\*): "
                    "H0 needs keywords to mark ingested mail. `h0 doctor` shows what the server allows.",
                    retryable=False,
                    keyword=missing[0].decode(),
                )

    def _move(self, client: IMAPClient, uid: int, destination: str) -> list[str]:
        names = {name for _, _, name in client.list_folders()}
        if destination not in names:
            client.create_folder(destination)
        if client.has_capability("MOVE"):
            client.move([uid], destination)
        else:
            client.copy([uid], destination)
            client.delete_messages([uid])
            client.uid_expunge([uid]) if client.has_capability("UIDPLUS") else client.expunge()
        return ["SENT" if destination == self.connection.sent_folder else destination]

    def modify_many(self, message_ids: list[str], add: list[str], remove: list[str]) -> dict[str, list[str] | H0Error]:
        """One STORE per folder (the sync's ingested mark); moves go one by one."""
        if "INBOX" in remove or "INBOX" in add:
            return one_by_one(message_ids, lambda message_id: self.modify_labels(message_id, add, remove))
        answers: dict[str, list[str] | H0Error] = {}
        fetched = self.fetch_flags(message_ids)
        by_folder: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for msg_id, found in fetched.items():
            if isinstance(found, H0Error):
                answers[msg_id] = found
            else:
                by_folder[found[0]].append((msg_id, found[1]))

        def store(client: IMAPClient) -> None:
            for folder, wanted in by_folder.items():
                self.connection.select(client, folder)
                uids = [uid for _, uid in wanted]
                self._store(client, uids, add, remove)
                flags = client.get_flags(uids)
                for msg_id, uid in wanted:
                    answers[msg_id] = labels_for(folder, flags.get(uid, ()), self.connection.sent_folder)

        self.connection.run("a label change", store)
        return answers

    def modify_all(self, message_ids: list[str], add: list[str], remove: list[str]) -> None:
        failed = [a for a in self.modify_many(message_ids, add, remove).values() if isinstance(a, H0Error)]
        if failed:
            raise failed[0]

    def fetch_flags(self, message_ids: list[str]) -> dict[str, tuple[str, int] | H0Error]:
        """(folder, uid) of each id still valid, else its NotFound/InvalidRequest."""
        answers: dict[str, tuple[str, int] | H0Error] = {}
        parsed: dict[str, tuple[str, int, int]] = {}
        for msg_id in dict.fromkeys(message_ids):
            try:
                parsed[msg_id] = parse_id(msg_id)
            except InvalidRequest as err:
                answers[msg_id] = err

        def check(client: IMAPClient) -> None:
            validities: dict[str, int | None] = {}
            for msg_id, (folder, validity, uid) in parsed.items():
                if folder not in validities:
                    try:
                        validities[folder] = int(client.folder_status(folder, [b"UIDVALIDITY"])[b"UIDVALIDITY"])
                    except IMAPClientAbortError:
                        raise
                    except IMAPClientError:  # a NO: no such folder
                        validities[folder] = None
                if validities[folder] != validity:
                    answers[msg_id] = NotFound(
                        f"Message {msg_id} is gone (folder renumbered or removed).", message_id=msg_id
                    )
                else:
                    answers[msg_id] = (folder, uid)

        self.connection.run("checking messages", check)
        return answers


def _flags_for(add: list[str], remove: list[str]) -> tuple[list[bytes], list[bytes]]:
    """Label ids as IMAP flags to set and to clear (UNREAD is the absence of \\Seen)."""
    plus: list[bytes] = []
    minus: list[bytes] = []
    system = {label: (flag, when_set) for label, flag, when_set in FLAG_LABELS}
    for labels, adding in ((add, True), (remove, False)):
        for label in labels:
            if label == "INBOX":
                continue
            if label in system:
                flag, when_set = system[label]
                (plus if adding == when_set else minus).append(flag)
            else:
                (plus if adding else minus).append(keyword(label).encode())
    return plus, minus
