"""The outbox backend (the default): each message becomes an .eml file in the vault's Outbox/.

Nothing leaves the machine. It exists so a fresh checkout can run the whole pipeline —
approve a draft, watch it "sent" — before anyone connects a real account; the server
says so loudly at start-up. The .eml opens in any mail client. The file name ends in a
hash of the Message-ID, which is how `find_sent` answers the exactly-once question.

Its From is the owner's (SMTP_FROM, else the first of OWNER_EMAILS), so the dry run shows the
message a real backend would send; only a vault that names no address of the owner gets the
placeholder OUTBOX_SENDER.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from email.message import EmailMessage
from email.utils import getaddresses
from typing import TYPE_CHECKING

from h0.errors import SendFailed
from h0.mail.compose.mime import raw_bytes
from h0.mail.providers.backend import MailSender, Sent
from h0.platform.fileio import atomic_write
from h0.vault.layout import OUTBOX

if TYPE_CHECKING:
    from h0.config import Settings

OUTBOX_SENDER = "H0 outbox <outbox@h0.local>"
_SLUG = re.compile(r"[^a-z0-9]+")


def _id_hash(rfc822_message_id: str) -> str:
    return hashlib.sha256(rfc822_message_id.strip().encode("utf-8")).hexdigest()[:12]


def owner_from(settings: Settings) -> str:
    """The From of an outbox message: SMTP_FROM as written, else the first address in OWNER_EMAILS,
    else OUTBOX_SENDER (no address of the owner is known)."""
    if settings.smtp_from:
        return settings.smtp_from
    owner = [(name, addr) for name, addr in getaddresses([settings.owner_emails]) if "@" in addr]
    return owner[0][1] if owner else OUTBOX_SENDER


class OutboxBackend(MailSender):
    name = "outbox"
    notice = (
        "MAIL_BACKEND=outbox: NOTHING IS REALLY SENT. Every message is written to the vault's "
        "Outbox/ folder as an .eml file. Set MAIL_BACKEND=gmail (after `h0 auth gmail`) or "
        "MAIL_BACKEND=smtp to send for real."
    )

    def __init__(self, settings: Settings) -> None:
        self.folder = settings.vault_path / OUTBOX
        self.sender = owner_from(settings)

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        if "From" not in message:
            message["From"] = self.sender
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
