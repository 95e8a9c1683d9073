"""Build outgoing messages with the standard `email` package.

`compose` turns validated parts into one `EmailMessage`: plain text plus an optional
HTML alternative, UTF-8 bodies, RFC 2047 headers, attachments, a Message-ID, and the
In-Reply-To/References pair that makes replies thread. `load_attachments` reads vault
files under the contract's limits (25 MB in total, no executables).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import mimetypes
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import PurePosixPath

from h0.errors import InvalidRequest, NotFound, PermissionDenied
from h0.mail.addresses import refuse_line_breaks
from h0.vault.paths import PathResolver

MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024  # Gmail's limit for everything attached to one message
MAX_SUBJECT_CHARS = 998  # one RFC 5322 line
MESSAGE_ID_DOMAIN = "h0.local"

# Gmail's own list of blocked file types (support.google.com/mail/answer/6590).
BLOCKED_EXTENSIONS = frozenset(
    ".ade .adp .apk .appx .appxbundle .bat .cab .chm .cmd .com .cpl .diagcab .diagcfg .diagpack .dll .dmg "
    ".ex .ex_ .exe .hta .img .ins .iso .isp .jar .jnlp .js .jse .lib .lnk .mde .msc .msi .msix .msixbundle "
    ".msp .mst .nsh .pif .ps1 .scr .sct .shb .sys .vb .vbe .vbs .vhd .vxd .wsc .wsf .wsh .xll".split()
)
# Executables renamed to look harmless are still executables: PE, ELF, Mach-O (and fat/Java).
_EXECUTABLE_MAGIC = (b"MZ", b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe",
                     b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
_MESSAGE_ID = re.compile(r"^(?:<([^<>\s@]+@[^<>\s@]+)>|([^<>\s@]+@[^<>\s@]+))$")
_SMTP = policy.SMTP  # CRLF line ends, RFC 2047 encoded words, 78-column folding


@dataclass(frozen=True, slots=True)
class Attachment:
    filename: str
    data: bytes
    mime_type: str


def normalize_message_id(value: str) -> str:
    """'<x@y>' from 'x@y' or '<x@y>'; refuses anything that is not one id on one line."""
    text = value.strip()
    refuse_line_breaks("message_id", text)
    match = _MESSAGE_ID.match(text)
    if not match:
        raise InvalidRequest("message_id must look like '<unique@domain>'.", field="message_id", value=value[:200])
    return f"<{match.group(1) or match.group(2)}>"


def derive_message_id(idempotency_key: str) -> str:
    """A Message-ID fixed by the idempotency key, so a retried send carries the same id."""
    digest = hashlib.sha256(idempotency_key.encode("utf-8")).hexdigest()[:32]
    return f"<h0.{digest}@{MESSAGE_ID_DOMAIN}>"


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


def load_attachments(resolver: PathResolver, paths: Sequence[str]) -> list[Attachment]:
    """Read attachments from vault paths; refuse escapes, hidden files, executables, > 25 MB."""
    found: list[tuple[str, os.PathLike[str], int]] = []
    total = 0
    for raw in paths:
        target = resolver.resolve(raw)
        if any(part.startswith(".") for part in target.parts):
            # .obsidian/ holds plugin settings (API keys among them): never mail them out.
            raise PermissionDenied("Attachments cannot come from hidden files or folders.", path=target.rel)
        if not target.abs.is_file():
            raise NotFound(f"The attachment {target.rel} does not exist.", path=target.rel)
        name = PurePosixPath(target.rel).name
        refuse_line_breaks("attachment file name", name)
        if PurePosixPath(name.lower()).suffix in BLOCKED_EXTENSIONS:
            raise InvalidRequest(f"{name}: executable file types are not sent (Gmail blocks them too).", path=target.rel)
        size = target.abs.stat().st_size
        total += size
        found.append((target.rel, target.abs, size))
    if total > MAX_ATTACHMENT_BYTES:
        raise InvalidRequest(
            f"The attachments total {total / 1e6:.1f} MB; the limit is {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MB. "
            "Share a link instead.",
            total_bytes=total,
            limit_bytes=MAX_ATTACHMENT_BYTES,
        )
    loaded = []
    for rel, path, _ in found:
        data = open(path, "rb").read()
        if data.startswith(_EXECUTABLE_MAGIC):
            raise InvalidRequest(f"{rel} is an executable program; it is not sent.", path=rel)
        name = PurePosixPath(rel).name
        mime_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        loaded.append(Attachment(name, data, mime_type))
    return loaded


def check_subject(subject: str) -> str:
    refuse_line_breaks("subject", subject)
    if not subject.strip():
        raise InvalidRequest("The subject is empty.", field="subject")
    if len(subject) > MAX_SUBJECT_CHARS:
        raise InvalidRequest(f"The subject is longer than {MAX_SUBJECT_CHARS} characters.", field="subject")
    return subject.strip()


def check_body(body: str) -> str:
    if not body.strip():
        raise InvalidRequest("The body is empty; H0 does not send empty mail.", field="body")
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
    """One RFC 5322 message. Bcc stays in the headers: Gmail and smtplib read and strip it."""
    if not to:
        raise InvalidRequest("At least one recipient is needed in 'to'.", field="to")
    msg = EmailMessage(policy=_SMTP)
    if sender:
        msg["From"] = sender
    msg["To"] = list(to)
    if cc:
        msg["Cc"] = list(cc)
    if bcc:
        msg["Bcc"] = list(bcc)
    msg["Subject"] = check_subject(subject)
    msg["Date"] = format_datetime(dt.datetime.now(dt.UTC), usegmt=True)
    msg["Message-ID"] = normalize_message_id(message_id) if message_id else new_message_id()
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
    if references:
        msg["References"] = references
    msg.set_content(check_body(body), subtype="plain", charset="utf-8", cte=_text_cte(body))
    if html_body and html_body.strip():
        msg.add_alternative(html_body, subtype="html", charset="utf-8", cte=_text_cte(html_body))
    for item in attachments:
        maintype, _, subtype = item.mime_type.partition("/")
        msg.add_attachment(item.data, maintype=maintype, subtype=subtype or "octet-stream", filename=item.filename)
    return msg


def _text_cte(text: str) -> str:
    # 8bit needs 8BITMIME end to end and breaks on lines over 998 bytes; quoted-printable
    # survives any relay and stays readable.
    if text.isascii() and all(len(line) <= 998 for line in text.splitlines()):
        return "7bit"
    return "quoted-printable"


def raw_bytes(msg: EmailMessage) -> bytes:
    return msg.as_bytes(policy=_SMTP)
