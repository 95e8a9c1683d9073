"""Mail no person wrote to you: auto-replies, bounces and mailing-list posts, told from their headers.

Follow-ups need to know: an out-of-office answer or a delivery failure is not an answer, and
mail from a list or a robot is owed no reply. The signs are the standard ones, strongest first:

- bounce: a delivery report (`Content-Type: multipart/report; report-type=delivery-status`,
  RFC 3464), `X-Failed-Recipients`, or a sender whose mailbox is MAILER-DAEMON / postmaster;
- auto-reply: `Auto-Submitted` other than `no` (RFC 3834), `X-Autoreply`, `X-Autorespond`,
  `Precedence: auto_reply`, or a subject that starts as auto-replies do ("Automatic reply:",
  "Out of Office", "Auto:");
- list: `List-Id` or `List-Post` (RFC 2919/2369), or `Precedence: list|bulk|junk`.

`list_address` is the list's posting address (List-Post's mailto:), so that mail the owner sends
to a list is recognised too. Headers are read as the providers give them, already cleaned of
control characters; nothing here raises.
"""

from __future__ import annotations

import re
from email.message import Message
from email.utils import parseaddr
from typing import Literal

Automated = Literal["auto_reply", "bounce", "list"]

_DAEMONS = frozenset({"mailer-daemon", "postmaster", "mail-daemon", "mailer_daemon"})
_AUTO_SUBJECT = re.compile(
    r"^\s*(automatic reply|auto[- ]?reply|autoreply|out of (the )?office|auto)\s*[:\-]", re.IGNORECASE
)
_OUT_OF_OFFICE = re.compile(r"^\s*out of (the )?office\b", re.IGNORECASE)
_MAILTO = re.compile(r"<mailto:([^>?\s]+)", re.IGNORECASE)


def _header(headers: Message, name: str) -> str:
    value = headers.get(name)
    return " ".join(str(value).split()) if value is not None else ""


def automated_kind(headers: Message) -> Automated | None:
    """What kind of machine-made mail this is, or None for mail a person wrote."""
    content_type = _header(headers, "Content-Type").lower()
    sender = parseaddr(_header(headers, "From"))[1].lower()
    if (
        ("multipart/report" in content_type and "delivery-status" in content_type)
        or _header(headers, "X-Failed-Recipients")
        or sender.split("@", 1)[0] in _DAEMONS
    ):
        return "bounce"
    submitted = _header(headers, "Auto-Submitted").lower()
    precedence = _header(headers, "Precedence").lower()
    subject = _header(headers, "Subject")
    if (
        (submitted and not submitted.startswith("no"))
        or _header(headers, "X-Autoreply")
        or _header(headers, "X-Autorespond")
        or precedence == "auto_reply"
        or _AUTO_SUBJECT.match(subject)
        or _OUT_OF_OFFICE.match(subject)
    ):
        return "auto_reply"
    if _header(headers, "List-Id") or _header(headers, "List-Post") or precedence in ("list", "bulk", "junk"):
        return "list"
    return None


def list_address(headers: Message) -> str | None:
    """The list's posting address (List-Post: <mailto:…>), lower-case; None when there is none."""
    found = _MAILTO.search(_header(headers, "List-Post"))
    if found is None or "@" not in found.group(1):
        return None
    return found.group(1).strip().lower()[:320]
