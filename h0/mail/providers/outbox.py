"""The outbox backend (the default): each message becomes an .eml file in the vault's Outbox/.

Nothing leaves the machine. It exists so a fresh checkout can run the whole pipeline —
approve a draft, watch it "sent" — before anyone connects a real account; the server
says so loudly at start-up. The .eml opens in any mail client. The file name ends in a
hash of the Message-ID, which is how `find_sent` answers the exactly-once question.

Its From is the owner's, as a real backend would send it: the first address of SMTP_FROM,
OWNER_EMAILS, SMTP_USER and IMAP_USER, else the one the owner's own sent mail came from (h0.mail.owner:
an import's or a sync's evidence, never a From header alone), with the display name written there or
else the owner's `name` from H0_Profile.md (`owner_name`, wired by the mail server: h0.mcp.servers).
Only when no address of the owner is known is it the placeholder OUTBOX_SENDER.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Iterable
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from typing import TYPE_CHECKING

from h0.errors import SendFailed
from h0.mail.compose.mime import raw_bytes
from h0.mail.owner import OwnerAuthority
from h0.mail.providers.backend import MailSender, Sent
from h0.platform.fileio import atomic_write
from h0.vault.layout import OUTBOX
from h0.vault.values import named_addresses

if TYPE_CHECKING:
    from h0.config import Settings

OUTBOX_SENDER = "H0 outbox <outbox@h0.local>"
_SLUG = re.compile(r"[^a-z0-9]+")


def _id_hash(rfc822_message_id: str) -> str:
    return hashlib.sha256(rfc822_message_id.strip().encode("utf-8")).hexdigest()[:12]


def owner_from(settings: Settings, *, name: str = "", sent_from: Iterable[str] = ()) -> str:
    """The From of an outbox message (see the module's docstring): the owner's first known address, with
    its own display name or else `name`; OUTBOX_SENDER when no address of the owner is known."""
    written = [settings.smtp_from or "", settings.owner_emails, settings.smtp_user or "", settings.imap_user or ""]
    found = [(shown, addr) for shown, addr in named_addresses(written) if "@" in addr]
    found += [("", addr) for addr in sorted(sent_from) if "@" in addr]
    for shown, addr in found:
        try:
            return str(Address(display_name=" ".join((shown or name).split()), addr_spec=addr.strip()))
        except (ValueError, IndexError, HeaderParseError):
            continue  # not an address a header can carry: the next one
    return OUTBOX_SENDER


class OutboxBackend(MailSender):
    name = "outbox"
    notice = (
        "MAIL_BACKEND=outbox: NOTHING IS REALLY SENT. Every message is written to the vault's "
        "Outbox/ folder as an .eml file. Set MAIL_BACKEND=gmail (after `h0 auth gmail`) or "
        "MAIL_BACKEND=smtp to send for real."
    )

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.folder = settings.vault_path / OUTBOX
        # The owner's name (H0_Profile.md), read at each send; the mail server wires it (h0.mcp.servers).
        self.owner_name: Callable[[], str] = lambda: ""

    def sender(self) -> str:
        """The From this message goes out with now (the profile and the owner's recorded mail may have changed)."""
        return owner_from(
            self.settings, name=self.owner_name(), sent_from=OwnerAuthority.for_settings(self.settings).senders()
        )

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        if "From" not in message:
            message["From"] = self.sender()
        rfc = str(message["Message-ID"] or "")
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        slug = _SLUG.sub("-", str(message["Subject"] or "").lower()).strip("-")[:40] or "message"
        name = f"{stamp}_{slug}_{_id_hash(rfc)}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write(self.folder / f"{name}.eml", raw_bytes(message), mode=0o644)
        except OSError as exc:
            raise SendFailed(f"Could not write {OUTBOX}/{name}.eml: {exc.strerror or exc}", retryable=True) from exc
        return Sent(name, thread_id or name)

    def find_sent(self, rfc822_message_id: str) -> Sent | None:
        matches = sorted(self.folder.glob(f"*_{_id_hash(rfc822_message_id)}.eml"))
        return Sent(matches[0].stem, matches[0].stem) if matches else None
