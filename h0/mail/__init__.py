"""The mail domain: backends (gmail, imap, smtp, outbox) behind two small protocols — `MailSender`
(every backend) and `Mailbox` (gmail, imap) — plus auth, MIME, address validation, send caps,
retries and the exactly-once send ledger.

No MCP here: `h0.mcp.mail_server` adapts `MailService` to tools.
"""

from h0.mail.providers.backend import BACKENDS, Fetched, Label, Mailbox, MailSender, Sent, mailbox_of, open_backend
from h0.mail.service import MailService

__all__ = ["BACKENDS", "Fetched", "Label", "MailSender", "MailService", "Mailbox", "Sent", "mailbox_of", "open_backend"]
