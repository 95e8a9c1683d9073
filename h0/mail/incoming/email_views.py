"""A fetched message as clients see it: `EmailFull` (get_email, list_new_emails, `h0 import`) and
`EmailSummary` (list_emails), from a backend's `Fetched` — the body as text, dates in ISO 8601 UTC."""

from __future__ import annotations

import datetime as dt

from h0.mail.headers import header_date
from h0.mail.incoming.authresults import authentication_verdicts
from h0.mail.incoming.automated import automated_kind, list_address
from h0.mail.incoming.htmltext import html_to_text, truncate
from h0.mail.models import AttachmentMeta, EmailFull, EmailSummary
from h0.mail.providers.backend import Fetched
from h0.vault.audit import iso

MAX_BODY_CHARS = 100_000


def iso_date(fetched: Fetched) -> str | None:
    """When the message arrived (the provider's date, else its Date header), ISO 8601 UTC; None if unknown."""
    if fetched.internal_date_ms:
        return iso(dt.datetime.fromtimestamp(fetched.internal_date_ms / 1000, dt.UTC))
    stamp = header_date(fetched.headers.get("Date"))
    return iso(stamp) if stamp is not None else None


def header_text(fetched: Fetched, name: str) -> str:
    """The header's value as text, "" when the message has none."""
    value = fetched.headers.get(name)
    return str(value) if value is not None else ""


def email_full(fetched: Fetched) -> EmailFull:
    """A fetched message as get_email answers it: body as text, headers cleaned."""
    text = fetched.text
    if text is None and fetched.html is not None:
        text = html_to_text(fetched.html)
    text = (text or "").replace("\r\n", "\n")  # mail is CRLF on the wire; notes are not
    body, cut = truncate(text, MAX_BODY_CHARS)
    return EmailFull(
        id=fetched.id,
        thread_id=fetched.thread_id,
        rfc822_message_id=header_text(fetched, "Message-ID") or None,
        subject=header_text(fetched, "Subject"),
        sender=header_text(fetched, "From"),
        to=header_text(fetched, "To"),
        cc=header_text(fetched, "Cc"),
        date=iso_date(fetched),
        body=body,
        body_truncated=cut,
        body_format="plain" if fetched.text is not None else ("html" if fetched.html is not None else "none"),
        has_attachments=bool(fetched.attachments),
        attachment_names=[a.filename for a in fetched.attachments],
        attachments=[AttachmentMeta.model_validate(a, from_attributes=True) for a in fetched.attachments],
        labels=list(fetched.labels),
        authentication=authentication_verdicts(fetched.headers),
        automated=automated_kind(fetched.headers),
        list_address=list_address(fetched.headers),
    )


def email_summary(fetched: Fetched) -> EmailSummary:
    """A listed message as list_emails answers it: headers, snippet and labels, no body."""
    return EmailSummary(
        id=fetched.id,
        thread_id=fetched.thread_id,
        subject=header_text(fetched, "Subject"),
        sender=header_text(fetched, "From"),
        date=iso_date(fetched),
        snippet=fetched.snippet,
        labels=list(fetched.labels),
    )
