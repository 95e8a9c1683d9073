"""The providers behind the two small protocols of `backend`: `MailSender` (every backend) and `Mailbox`
(gmail, imap, outlook) — Gmail over its HTTP API (`gmail*`, with its OAuth in `auth`), IMAP with SMTP (`imap*`),
Outlook and Microsoft 365 over Microsoft Graph (`outlook*`, signed in with msal in `outlook_auth`), SMTP alone
(`smtp`), the outbox of .eml files (`outbox`), and the retry policy for provider calls (`retry`).
"""

__all__ = [
    "auth",
    "backend",
    "gmail",
    "gmail_api",
    "gmail_batch",
    "gmail_transport",
    "gmail_wire",
    "imap",
    "imap_connection",
    "imap_idle",
    "imap_labels",
    "imap_query",
    "imap_send",
    "imap_wire",
    "outbox",
    "outlook",
    "outlook_auth",
    "outlook_folders",
    "outlook_http",
    "outlook_query",
    "outlook_wire",
    "retry",
    "smtp",
]
