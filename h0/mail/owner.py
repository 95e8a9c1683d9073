"""Did the owner write this message? The one authority H0 asks, answered from evidence recorded when it was seen.

What counts (an `Evidence`), each recorded in H0's state database at the moment H0 observes it:
- the provider's sent mail: a message Gmail labels SENT (Gmail sets that label; no sender can) or one
  read from the IMAP Sent folder's own stream (h0.mail.incoming.sync records both as it reads them);
- an import's sent mail: a message in an mbox or folder named Sent, or one Google Takeout labels Sent
  (exactly one `X-Gmail-Labels` header), that carries no trace of arriving from outside
  (`import_evidence`);
- H0's own sends: the send ledger (`sends`, state sent) — recorded by the send itself, read here.

What never counts, because a stranger (or an agent) can make it: a `From:` header alone, any note in the
vault (`type: sent_email`, `status: sent`, labels in frontmatter — an agent writes those through MCP as
easily as H0 does), and an imported message whose Received, Authentication-Results or ARC headers say a
server took it in from elsewhere. A message with several From addresses (or several From headers) is
never the owner's.

The mailbox H0 signs in to is the owner's too: the mail sync records the account the provider's own profile names
when it signs in (Gmail's users.getProfile, Graph's /me, IMAP's user at host) and the provider's refusals
(`record_mailbox`, `record_refusal`); `h0 status` and the dashboard ask `mailbox` and make no network call.

Everything that asks "did the owner write it?" asks `OwnerAuthority`: voice learning and past replies
(h0.drafting.past), follow-ups — owed, awaited, answered (h0.handlers.followup.follow_up) — and the stale-draft
hold (h0.handlers.thread). `owner_addresses` is the other question, "where does the owner receive
mail?", used only for addressing (who to leave out of a reply-all, who is not awaited): an address
never makes a message the owner's. `recipients` is "whom did the owner write to?": who counts as known
when H0 judges whether an email imitates someone (h0.mail.deception.known) — never whoever merely wrote in.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from email.message import Message as HeaderMessage
from enum import StrEnum
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from h0.mail.headers import header_addresses
from h0.state import StateDB
from h0.vault.model import NoteFacts
from h0.vault.values import addresses, named_addresses

if TYPE_CHECKING:
    from h0.config import Settings
    from h0.mail.providers.backend import Fetched


class _Told(Protocol):
    """A message as a recorder keeps it (a dataclass): its key and whether it was told the owner wrote it."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def key(self) -> str: ...

    @property
    def outbound(self) -> bool: ...


Told = TypeVar("Told", bound=_Told)
MAX_KEY = 1_000
MAX_ADDRESS = 320
# Folder and file names that hold the owner's sent mail in exports (Thunderbird, Apple Mail, Outlook, Takeout).
SENT_FOLDERS = frozenset({"sent", "sent mail", "sent items", "sent messages", "[gmail]/sent mail"})
# Headers a receiving server adds when it takes a message in from elsewhere: the owner's sent copy has none.
INBOUND_HEADERS = ("authentication-results", "arc-authentication-results", "arc-seal", "received-spf", "delivered-to")
# A Received line for the owner's own submission (an authenticated client, webmail, a local program).
_SUBMISSION = re.compile(r"\bwith\s+(?:e?smtpsa|esmtpa|asmtp|lmtpsa|https?|local)\b", re.IGNORECASE)
_MBOX_PLACE = re.compile(r" #\d+$")  # h0.mail.incoming.importer names a mailbox's message "file.mbox #3"


class Evidence(StrEnum):
    SENT_LABEL = "sent_label"  # Gmail's SENT label, read by the sync
    SENT_FOLDER = "sent_folder"  # the IMAP Sent folder's stream, read by the sync
    IMPORT_SENT = "import_sent"  # an import's sent folder or Takeout label, with no trace of arrival
    H0_SEND = "h0_send"  # H0 sent it (the send ledger)


@dataclass(frozen=True, slots=True)
class Observed:
    """One message seen to be the owner's, as the authority records it."""

    key: str
    evidence: Evidence
    source: str
    sender: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The mailbox H0 signs in to for one backend, as the mail sync last found it (`OwnerAuthority.mailbox`)."""

    backend: str
    account: str | None  # the provider's profile's name for it; None when it gave none H0 can show plainly
    confirmed_at: float | None  # epoch seconds: the sync last signed in
    refused_at: float | None  # epoch seconds: the provider last refused the sign-in
    refusal: str | None

    @property
    def refused(self) -> bool:
        """The provider's last word on the sign-in was a refusal."""
        return self.refused_at is not None and (self.confirmed_at is None or self.refused_at >= self.confirmed_at)


def plain_account(value: object) -> str | None:
    """An account name a provider gave, kept only when it is one plain word of printable characters (an address,
    `user@host`): a profile that answers with line breaks, markup or a screenful of text names no account."""
    text = str(value or "").strip()
    if not text or len(text) > MAX_ADDRESS or any(not ch.isprintable() or ch.isspace() for ch in text):
        return None
    return text


def message_key(rfc822: Any, provider_id: Any) -> str:
    """How H0 names a message everywhere it keeps one: its Message-ID, else "id:" + the provider's id."""
    text = " ".join(str(rfc822 or "").split())
    return text[:MAX_KEY] if text else f"id:{str(provider_id or '')[:MAX_KEY]}"


def note_message_key(facts: NoteFacts) -> str:
    """The key of the message a note names (an email note, a sent reply, an imported sent message)."""
    return message_key(facts.rfc822_message_id, facts.message_id or facts.gmail_message_id)


def is_sent_labels(labels: Iterable[str] | None) -> bool:
    """The provider's own word that the owner sent it: the SENT label (a draft is not sent)."""
    found = set(labels or ())
    return "SENT" in found and "DRAFT" not in found


def single_sender(headers: HeaderMessage) -> str | None:
    """The message's one From address, lower-case; None when it has none, or several (never the owner's)."""
    values = headers.get_all("From") or []
    if len(values) != 1:
        return None
    found = [addr for _, addr in header_addresses(str(values[0]))]
    if len(found) != 1 or "@" not in found[0]:
        return None
    return found[0].strip().lower()[:MAX_ADDRESS]


def came_from_outside(headers: HeaderMessage) -> str | None:
    """Why this message was taken in by a server from elsewhere (None: no such trace): a header only a
    receiving server adds, or a Received line that relayed it from another host rather than taking the
    owner's own (authenticated) submission."""
    names = {name.lower() for name in headers}
    for name in INBOUND_HEADERS:
        if name in names:
            return f"it carries {name.title()}, which a receiving server adds"
    for value in headers.get_all("Received") or []:
        text = " ".join(str(value).split())
        if text.lower().startswith("from ") and not _SUBMISSION.search(text):
            return "a Received line says a server took it in from another host"
    return None


def import_evidence(source: str, headers: HeaderMessage) -> Evidence | None:
    """An imported message is the owner's when its export says it was sent (a Sent mailbox or folder, or a
    Takeout `X-Gmail-Labels` with Sent), it has one From address, and nothing says it arrived from outside.
    The mbox envelope line ("From … date") is written by whichever program exported it: never evidence."""
    if single_sender(headers) is None or came_from_outside(headers) is not None:
        return None
    return Evidence.IMPORT_SENT if _sent_place(source) or _takeout_sent(headers) else None


def _sent_place(source: str) -> bool:
    path = PurePath(_MBOX_PLACE.sub("", source))
    names = [path.stem, *path.parent.parts[-2:]]
    return any(name.strip().lower() in SENT_FOLDERS for name in names)


def _takeout_sent(headers: HeaderMessage) -> bool:
    values = headers.get_all("X-Gmail-Labels") or []
    if len(values) != 1:
        return False  # Takeout writes one; a second came with the message, from whoever wrote it
    return any(label.strip().lower() == "sent" for label in str(values[0]).split(","))


def own_address(settings: Settings, address: str) -> bool:
    """Whether `address` is one of the owner's (`owner_addresses`): for addressing only (a reply to it would
    go to the owner) — never evidence that the owner wrote a message, which anyone's From can claim."""
    return address.strip().lower() in owner_addresses(settings)


def owner_addresses(settings: Settings, learned: Iterable[str] = ()) -> frozenset[str]:
    """Where the owner receives mail — for addressing only (never for authorship): OWNER_EMAILS (comma-separated),
    SMTP_FROM, SMTP_USER and IMAP_USER when they are addresses, and `learned` (OwnerAuthority.senders), lower-case."""
    values = [settings.owner_emails] + [
        value or "" for value in (settings.smtp_from, settings.smtp_user, settings.imap_user)
    ]
    found = {addr.strip().lower() for addr in addresses(values) if "@" in addr}
    found |= {a.strip().lower() for a in learned if a and "@" in a}
    return frozenset(found)


class OwnerAuthority:
    """The record of what the owner wrote, in one vault's state database (thread-safe like the StateDB)."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    @classmethod
    def for_settings(cls, settings: Settings) -> OwnerAuthority:
        return cls(StateDB.for_vault(settings.vault_path, settings.h0_state_dir))

    # -- recording, when the evidence is seen ----------------------------------------------------

    def record(self, observed: Iterable[Observed], now: float | None = None) -> int:
        """Record messages seen to be the owner's (one transaction). The first evidence stays; a note
        written for the message later is added. Returns how many were given."""
        rows = [
            (o.key[:MAX_KEY], str(o.evidence), o.source[:MAX_KEY], o.sender[:MAX_ADDRESS], o.note)
            for o in observed
            if o.key
        ]
        if not rows:
            return 0
        at = time.time() if now is None else now
        with self.state.writing() as db:
            db.executemany(
                "INSERT INTO owner_messages VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET note = coalesce(excluded.note, note)",
                [(*row, at) for row in rows],
            )
        return len(rows)

    def record_sent_mail(self, fetched: Iterable[Fetched], evidence: Evidence, source: str) -> int:
        """The provider's sent mail as the sync read it; a message without exactly one From address is left out."""
        observed = []
        for message in fetched:
            sender = single_sender(message.headers)
            if sender is not None:
                key = message_key(message.headers.get("Message-ID"), message.id)
                observed.append(Observed(key, evidence, source, sender))
        return self.record(observed)

    def record_mailbox(self, backend: str, account: str, now: float | None = None) -> None:
        """The provider confirmed the sign-in, naming the account `account` (its profile's word: `plain_account`
        decides whether it can be shown). The newest confirmation replaces the last; an earlier refusal stays
        on record, older than this."""
        at = time.time() if now is None else now
        self._write_mailbox(
            "INSERT INTO mailbox_accounts (backend, account, confirmed_at) VALUES (?, ?, ?) "
            "ON CONFLICT(backend) DO UPDATE SET account = excluded.account, confirmed_at = excluded.confirmed_at",
            (backend, plain_account(account), at),
        )

    def record_refusal(self, backend: str, reason: str, now: float | None = None) -> None:
        """The provider refused the sign-in (`auth_required`): `reason` as H0's typed error said it."""
        at = time.time() if now is None else now
        self._write_mailbox(
            "INSERT INTO mailbox_accounts (backend, refused_at, refusal) VALUES (?, ?, ?) "
            "ON CONFLICT(backend) DO UPDATE SET refused_at = excluded.refused_at, refusal = excluded.refusal",
            (backend, at, " ".join(reason.split())[:300]),
        )

    def _write_mailbox(self, sql: str, args: tuple[Any, ...]) -> None:
        with self.state.writing() as db:
            db.execute(sql, args)

    # -- asking ------------------------------------------------------------------------------------

    def mailbox(self, backend: str) -> SignedIn | None:
        """The mailbox of `backend` as the sync last found it; None before its first sign-in."""
        rows = self.state.query("SELECT * FROM mailbox_accounts WHERE backend = ?", (backend,))
        if not rows:
            return None
        row = rows[0]
        return SignedIn(
            backend, plain_account(row["account"]), row["confirmed_at"], row["refused_at"], row["refusal"] or None
        )

    def owned(self, keys: Sequence[str]) -> dict[str, Evidence]:
        """Which of these message keys (`message_key`) the owner wrote, with the evidence."""
        asked = [k for k in dict.fromkeys(keys) if k]
        found = {
            row["key"]: Evidence(row["evidence"])
            for row in self.state.query_in("SELECT key, evidence FROM owner_messages WHERE key IN ({})", asked)
        }
        sent = self.state.query_in(
            "SELECT rfc822_message_id AS k FROM sends WHERE state = 'sent' AND rfc822_message_id IN ({})", asked
        )
        sent += self.state.query_in(  # messages without a Message-ID: by the provider's id
            "SELECT 'id:' || provider_message_id AS k FROM sends WHERE state = 'sent' AND provider_message_id IN ({})",
            [k[3:] for k in asked if k.startswith("id:")],
        )
        wanted = set(asked)
        for row in sent:
            if row["k"] in wanted:
                found.setdefault(row["k"], Evidence.H0_SEND)
        return found

    def vouched(self, messages: Iterable[Told]) -> list[Told]:
        """These messages (kept as history, or in the follow-up ledger) with `outbound` as this authority says —
        never what their recorder was told (a label read at sync, an import's guess)."""
        messages = list(messages)
        mine = self.owned([m.key for m in messages])
        return [replace(m, outbound=m.key in mine) for m in messages]

    def wrote(self, key: str) -> Evidence | None:
        """The evidence that the owner wrote the message with this key, None when there is none."""
        return self.owned([key]).get(key)

    def owned_notes(self, notes: Sequence[tuple[str, str]]) -> set[str]:
        """Of these (note path, message key) pairs, the notes that hold the owner's words: the very note H0
        filed when it sent the message, or wrote when it imported the owner's sent mail. Another note naming
        the same Message-ID (a copy, an agent's note) is not."""
        wanted = {path: key for path, key in notes if key}
        rows = self.state.query_in(
            "SELECT key, note FROM owner_messages WHERE note IS NOT NULL AND key IN ({})", wanted.values()
        )
        rows += self.state.query_in(
            "SELECT rfc822_message_id AS key, filed_path AS note FROM sends WHERE state = 'sent' "
            "AND filed_path IS NOT NULL AND rfc822_message_id IN ({})",
            wanted.values(),
        )
        return {r["note"] for r in rows if wanted.get(r["note"]) == r["key"]}

    def senders(self) -> set[str]:
        """The addresses the owner's recorded sent mail came from (for addressing: see `owner_addresses`)."""
        return {r["sender"] for r in self.state.query("SELECT DISTINCT sender FROM owner_messages") if r["sender"]}

    def recipients(self) -> list[tuple[str, str]]:
        """(display name, address) of everyone the owner wrote to (To and Cc), lower-case addresses, as the
        evidence says: the imported and first-synced sent history, the provider's sent mail since (the
        follow-up ledger's messages this authority vouches for), and H0's own sends (the ledger)."""
        found: list[tuple[str, str]] = []
        rows = self.state.query("SELECT recipients FROM history WHERE outbound = 1")
        rows += self.state.query(
            "SELECT f.recipients FROM followup_messages f JOIN owner_messages o ON o.key = f.key WHERE f.outbound = 1"
        )
        for row in rows:
            try:
                pairs = json.loads(row["recipients"] or "[]")
            except ValueError:
                continue
            found += [(str(p[0] or ""), str(p[1])) for p in pairs if isinstance(p, list) and len(p) == 2 and p[1]]
        for row in self.state.query("SELECT recipients FROM sends WHERE state = 'sent' AND recipients IS NOT NULL"):
            found += named_addresses(str(row["recipients"]))
        return [(name, addr.strip().lower()[:MAX_ADDRESS]) for name, addr in found if "@" in addr]
