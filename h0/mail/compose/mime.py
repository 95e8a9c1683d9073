"""Build outgoing messages with the standard `email` package.

`compose` turns validated parts into one `EmailMessage`: plain text plus an optional
HTML alternative (neither may hold text that renders as nothing: h0.mail.deception.visible), UTF-8 bodies, RFC 2047 headers, attachments, a Message-ID, and the
In-Reply-To/References pair that makes replies thread. Header values are checked twice:
before, after RFC 2047 decoding (h0.mail.headers), and after, on the serialised bytes
parsed back — exactly the headers set, exactly the recipients meant — because CPython
before 3.13 may fold an encoded word into a real line break (CVE-2024-6923). The files
attached come from `h0.mail.compose.attachments`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from h0.errors import InvalidRequest, Refusal, refuse
from h0.mail.compose.addresses import refuse_line_breaks
from h0.mail.compose.attachments import Attachment
from h0.mail.deception import visible, visible_html
from h0.mail.headers import check_header_text, check_wire, checked_addresses

MAX_SUBJECT_CHARS = 998  # one RFC 5322 line
MESSAGE_ID_DOMAIN = "h0.local"
_MESSAGE_ID = re.compile(r"^(?:<([^<>\s@]+@[^<>\s@]+)>|([^<>\s@]+@[^<>\s@]+))$")
_SMTP = policy.SMTP  # CRLF line ends, RFC 2047 encoded words, 78-column folding


def normalize_message_id(value: str) -> str:
    """'<x@y>' from 'x@y' or '<x@y>'; refuses anything that is not one id on one line."""
    text = value.strip()
    refuse_line_breaks("message_id", text)
    match = _MESSAGE_ID.match(text)
    if not match:
        raise InvalidRequest("message_id must look like '<unique@domain>'.", field="message_id", value=value[:200])
    return f"<{match.group(1) or match.group(2)}>"


def bare_message_id(message_id: str) -> str:
    """'x@y' from '<x@y>' or 'x@y', as provider searches take it (Gmail's rfc822msgid:, Graph's filter)."""
    return message_id.strip().strip("<>")


def bracketed_message_id(message_id: str) -> str:
    """'<x@y>' from 'x@y' or '<x@y>', as the Message-ID header holds it (IMAP's HEADER search, Graph's filter)."""
    return f"<{bare_message_id(message_id)}>"


def new_message_id() -> str:
    return make_msgid(idstring="h0", domain=MESSAGE_ID_DOMAIN)


def reply_headers(original_message_id: str | None, original_references: str | None) -> tuple[str | None, str | None]:
    """(In-Reply-To, References) for a reply to a message with these headers (RFC 5322 §3.6.4)."""
    if not original_message_id:
        return None, None
    parent = normalize_message_id(original_message_id)
    chain = (original_references or "").split()
    if parent not in chain:
        chain.append(parent)
    return parent, " ".join(chain)


def check_subject(subject: str) -> str:
    refuse_line_breaks("subject", subject)
    if not subject.strip():
        raise InvalidRequest(
            "The subject is empty; write one in `subject:` in the frontmatter, then approve again.", field="subject"
        )
    if len(subject) > MAX_SUBJECT_CHARS:
        raise InvalidRequest(
            f"The subject is longer than {MAX_SUBJECT_CHARS} characters; shorten `subject:` in the "
            "frontmatter, then approve again.",
            field="subject",
        )
    return subject.strip()


def check_body(body: str) -> str:
    if not body.strip():
        raise InvalidRequest(
            "The body is empty; H0 does not send empty mail. Write the message in the note, then approve again.",
            field="body",
        )
    return body


def compose(
    *,
    to: Sequence[Address],
    subject: str,
    body: str,
    sender: Address | str | None = None,
    cc: Sequence[Address] = (),
    bcc: Sequence[Address] = (),
    html_body: str | None = None,
    attachments: Sequence[Attachment] = (),
    message_id: str | None = None,
    in_reply_to: str | None = None,
    references: str | None = None,
) -> EmailMessage:
    """One RFC 5322 message. Bcc stays in the headers: Gmail and smtplib read and strip it.

    Raises InvalidRequest when a header value has or decodes to a control character, or when
    the serialised message would carry any header or recipient other than the ones set here.
    """
    if not to:
        raise InvalidRequest("At least one recipient is needed in 'to'.", field="to")
    recipients = {
        "To": checked_addresses("to", to),
        "Cc": checked_addresses("cc", cc),
        "Bcc": checked_addresses("bcc", bcc),
    }
    subject = check_subject(subject)
    for field, value in (("sender", sender), ("in_reply_to", in_reply_to), ("references", references)):
        if value:
            check_header_text(field, str(value))
    msg = EmailMessage(policy=_SMTP)
    try:
        if sender:
            msg["From"] = sender
        for name, addresses in recipients.items():
            if addresses:
                msg[name] = addresses
        msg["Subject"] = subject
        msg["Date"] = format_datetime(dt.datetime.now(dt.UTC), usegmt=True)
        msg["Message-ID"] = normalize_message_id(message_id) if message_id else new_message_id()
        if in_reply_to:
            msg["In-Reply-To"] = in_reply_to
        if references:
            msg["References"] = references
    except (ValueError, TypeError) as exc:  # the email package's own refusals (CR/LF in an address part…)
        raise InvalidRequest(
            f"A header value cannot be encoded: {exc}. Retype the subject and the recipients in the "
            "frontmatter as plain text, one line each, then approve again."
        ) from None
    _refuse_invisible(body, html_body)
    msg.set_content(check_body(body), subtype="plain", charset="utf-8", cte=_text_cte(body))
    if html_body and html_body.strip():
        msg.add_alternative(html_body, subtype="html", charset="utf-8", cte=_text_cte(html_body))
    for item in attachments:
        maintype, _, subtype = item.mime_type.partition("/")
        refuse_line_breaks("attachment file name", item.filename)
        msg.add_attachment(item.data, maintype=maintype, subtype=subtype or "octet-stream", filename=item.filename)
    check_wire(msg, subject=subject, recipients=recipients)
    return msg


def _refuse_invisible(body: str, html_body: str | None) -> None:
    """Both parts, as their reader sees them: nothing in them may render as nothing (h0.mail.deception.visible)."""
    again = "then send it again"
    found = visible.problems(visible.find_in_text(body), where="The message's text", again=again)
    if html_body:
        found += visible.problems(visible_html.find_in_html(html_body), where="The HTML part", again=again)
    if found:
        message = found[0] if len(found) == 1 else " ".join(f"({i}) {p}" for i, p in enumerate(found, 1))
        raise refuse(Refusal.INVISIBLE_TEXT, {"problems_text": message}, problems=found)


def _text_cte(text: str) -> str:
    # 8bit needs 8BITMIME end to end and breaks on lines over 998 bytes; quoted-printable
    # survives any relay and stays readable.
    if text.isascii() and all(len(line) <= 998 for line in text.splitlines()):
        return "7bit"
    return "quoted-printable"


def raw_bytes(msg: EmailMessage) -> bytes:
    """The bytes a backend hands over, checked again: exactly the message's own headers on the wire."""
    return check_wire(msg)
