"""The mail domain: backends (gmail, smtp, outbox) behind one interface, plus auth, MIME,
address validation, send caps, retries and the exactly-once send ledger.

No MCP here: `h0.mcp.mail_server` adapts `MailService` to tools.
"""

from h0.mail.backend import BACKENDS, Fetched, Label, MailBackend, Sent, open_backend
from h0.mail.service import MailService

__all__ = ["BACKENDS", "Fetched", "Label", "MailBackend", "MailService", "Sent", "open_backend"]
