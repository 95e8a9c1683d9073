"""Build outgoing messages with the standard `email` package.

`compose` turns validated parts into one `EmailMessage`: plain text plus an optional
HTML alternative (neither may hold text that renders as nothing: h0.mail.visible), UTF-8 bodies, RFC 2047 headers, attachments, a Message-ID, and the
In-Reply-To/References pair that makes replies thread. Header values are checked twice:
before, after RFC 2047 decoding (h0.mail.headers), and after, on the serialised bytes
parsed back — exactly the headers set, exactly the recipients meant — because CPython
before 3.13 may fold an encoded word into a real line break (CVE-2024-6923). `load_attachments` reads vault
files under the contract's limits (25 MB in total, no executables, no links) and hashes
the bytes it read, so the approved attachment is provably the one sent.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import mimetypes
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from h0.errors import H0Error, InvalidRequest, NotFound, PermissionDenied
from h0.mail import visible
from h0.mail.addresses import refuse_line_breaks
from h0.mail.headers import check_header_text, check_wire, checked_addresses
from h0.vault.layout import LOGS, OUTBOX
from h0.vault.paths import PathResolver, VaultPath

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
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_CHUNK = 1024 * 1024
# What a person does about a refused attachment, in the note (every refusal names its fix).
_FIX_ATTACHMENTS = "change `attachments:` in the draft's frontmatter, then approve again"


@dataclass(frozen=True, slots=True)
class Attachment:
    """One file to attach; `rel` and `sha256` say which vault file and which bytes (loaded ones only)."""

    filename: str
    data: bytes
    mime_type: str
    rel: str = ""
    sha256: str = ""
    info: os.stat_result | None = None  # the file as read (its times: h0.vault.seen)


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
    """Read attachments from vault paths, each with its vault path and the sha256 of the bytes read.

    Refuses escapes, symlinks, hard links, folders, hidden files, executables and > 25 MB in
    total (checked from the sizes before anything is read). Each file is checked and read
    through one open descriptor, so what was checked is what is hashed and sent.
    """
    loaded = []
    for rel, name, data, digest, info in _read_attachments(resolver, paths, keep=True):
        mime_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        loaded.append(Attachment(name, data, mime_type, rel=rel, sha256=digest, info=info))
    return loaded


def hash_attachments(resolver: PathResolver, paths: Sequence[str]) -> dict[str, str]:
    """{vault-relative path: sha256 hex} of attachments, under the same checks as `load_attachments`."""
    return {rel: digest for rel, _, _, digest, _ in _read_attachments(resolver, paths, keep=False)}


def _read_attachments(
    resolver: PathResolver, paths: Sequence[str], *, keep: bool
) -> Iterator[tuple[str, str, bytes, str, os.stat_result]]:
    """(rel, file name, bytes if `keep` else b"", sha256, its stat after reading) per path, after every
    check has passed.

    Two passes: the first opens and measures every file without reading it (so one oversized
    or forbidden file costs nothing); the second reopens each, checks it again and reads it,
    never more than what is left of the 25 MB (a file may have grown in between).
    """
    targets = [_check_attachment_path(resolver, raw) for raw in paths]
    total = 0
    for target in targets:
        fd = _open_attachment(resolver, target)
        try:
            total += os.fstat(fd).st_size
        finally:
            os.close(fd)
    _refuse_oversize(total)
    budget = MAX_ATTACHMENT_BYTES
    for target in targets:
        fd = _open_attachment(resolver, target)  # checked again: it may have been replaced since
        try:
            read = _read_fd(fd, target.rel, budget, keep=keep)
            info = os.fstat(fd)
        finally:
            os.close(fd)
        budget -= read.size
        yield target.rel, PurePosixPath(target.rel).name, read.data, read.sha256, info


_RUNTIME_FOLDERS = frozenset(folder.casefold() for folder in (LOGS, OUTBOX))


def _check_attachment_path(resolver: PathResolver, raw: str) -> VaultPath:
    """Confinement, hidden parts, the file name and its type: everything known without opening it."""
    target = resolver.resolve(raw)
    if any(part.startswith(".") for part in target.parts):
        # .obsidian/ holds plugin settings (API keys among them): never mail them out.
        raise PermissionDenied(f"Attachments cannot come from hidden files or folders ({target.rel}); copy the file "
                               f"into a visible folder of the vault and {_FIX_ATTACHMENTS}.", path=target.rel)
    if target.parts and target.parts[0].casefold() in _RUNTIME_FOLDERS:
        # The audit trail and the outbox hold other people's mail: never mailed out as an attachment.
        raise PermissionDenied(
            f"Attachments cannot come from {target.parts[0]}/, H0's own records (audit logs, sent mail); "
            f"{_FIX_ATTACHMENTS}.",
            path=target.rel,
        )
    name = PurePosixPath(target.rel).name
    refuse_line_breaks("attachment file name", name)
    if PurePosixPath(name.lower()).suffix in BLOCKED_EXTENSIONS:
        raise InvalidRequest(f"{name}: executable file types are not sent (Gmail blocks them too); share a link to it "
                             f"in the message instead and {_FIX_ATTACHMENTS}.", path=target.rel)
    return target


def _open_attachment(resolver: PathResolver, target: VaultPath) -> int:
    """An fd on the attachment, proven a regular file with one link, reached through no symlink.

    Where the OS allows it (POSIX), each folder is opened relative to the one before with
    O_NOFOLLOW, so a folder swapped for a symlink between check and open is caught too;
    elsewhere every component is lstat'ed and the opened file must be the one lstat saw.
    """
    parts = target.abs.relative_to(resolver.root).parts
    try:
        if _NOFOLLOW and os.open in os.supports_dir_fd:
            fd = _open_beneath(resolver.root, parts)
        else:
            fd = _open_checked(resolver.root, parts)
    except OSError as exc:
        raise _open_refused(resolver.root, parts, target.rel, exc) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _folder_refused(target.rel)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidRequest(f"{target.rel} is not a regular file (a device, pipe or socket); it is not sent: "
                                 f"{_FIX_ATTACHMENTS}.", path=target.rel)
        if info.st_nlink != 1:
            raise PermissionDenied(
                f"{target.rel} is a hard link: the same file also lives elsewhere, possibly outside the vault. "
                f"Attach a copy of the file instead: {_FIX_ATTACHMENTS}.",
                path=target.rel,
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_beneath(root: Path, parts: tuple[str, ...]) -> int:
    dir_fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in parts[:-1]:
            next_fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        return os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _open_checked(root: Path, parts: tuple[str, ...]) -> int:
    path = root
    for name in parts:
        path = path / name
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise OSError(errno.ELOOP, "symbolic link", str(path))
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY | _NONBLOCK)
    if _file_id(os.fstat(fd)) != _file_id(info):
        os.close(fd)
        raise OSError(errno.ELOOP, "replaced by a symbolic link", str(path))
    return fd


def _open_refused(root: Path, parts: tuple[str, ...], rel: str, exc: OSError) -> H0Error:
    """Why opening failed, in words: walk the path with lstat (errno differs between systems)."""
    path = root
    for depth, name in enumerate(parts, 1):
        path = path / name
        last = depth == len(parts)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return NotFound(f"The attachment {rel} does not exist; check its vault path (e.g. Files/report.pdf) and "
                            f"{_FIX_ATTACHMENTS}.", path=rel)
        except OSError:
            break
        if stat.S_ISLNK(info.st_mode):
            return _symlink_refused(rel)
        if not last and not stat.S_ISDIR(info.st_mode):
            return NotFound(f"The attachment {rel} does not exist (a folder on its path is a file); "
                            f"{_FIX_ATTACHMENTS}.", path=rel)
        if last and stat.S_ISDIR(info.st_mode):
            return _folder_refused(rel)
    if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a symlink that has since gone
        return _symlink_refused(rel)
    return PermissionDenied(f"The attachment {rel} cannot be opened: {exc.strerror or exc}. Check that you can open "
                            f"it, or {_FIX_ATTACHMENTS}.", path=rel)


class _Read(NamedTuple):
    data: bytes  # empty unless kept
    sha256: str
    size: int


def _read_fd(fd: int, rel: str, budget: int, *, keep: bool) -> _Read:
    """Read to the end, hashing as it goes; refuse an executable at its first chunk and > budget bytes."""
    digest = hashlib.sha256()
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, min(_CHUNK, budget + 1 - size)):
        if size == 0 and chunk.startswith(_EXECUTABLE_MAGIC):
            raise InvalidRequest(f"{rel} is an executable program; it is not sent: share a link to it in the message "
                                 f"instead and {_FIX_ATTACHMENTS}.", path=rel)
        digest.update(chunk)
        size += len(chunk)
        if size > budget:  # it grew since it was measured
            _refuse_oversize(MAX_ATTACHMENT_BYTES - budget + size)
        if keep:
            chunks.append(chunk)
    return _Read(b"".join(chunks), digest.hexdigest(), size)


def _file_id(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _refuse_oversize(total: int) -> None:
    if total > MAX_ATTACHMENT_BYTES:
        raise InvalidRequest(
            f"The attachments total {total / 1e6:.1f} MB; the limit is {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MB. "
            f"Share a link to the large files in the message instead and {_FIX_ATTACHMENTS}.",
            total_bytes=total,
            limit_bytes=MAX_ATTACHMENT_BYTES,
        )


def _symlink_refused(rel: str) -> PermissionDenied:
    return PermissionDenied(
        f"{rel} is a symbolic link (or lies in a linked folder); its target can change after approval. "
        f"Attach a copy of the file instead: {_FIX_ATTACHMENTS}.",
        path=rel,
    )


def _folder_refused(rel: str) -> InvalidRequest:
    return InvalidRequest(f"{rel} is a folder, not a file; list the files in it one by one, or a zip of it, in "
                          "`attachments:` in the draft's frontmatter, then approve again.", path=rel)


def check_subject(subject: str) -> str:
    refuse_line_breaks("subject", subject)
    if not subject.strip():
        raise InvalidRequest("The subject is empty; write one in `subject:` in the frontmatter, then approve again.",
                             field="subject")
    if len(subject) > MAX_SUBJECT_CHARS:
        raise InvalidRequest(f"The subject is longer than {MAX_SUBJECT_CHARS} characters; shorten `subject:` in the "
                             "frontmatter, then approve again.", field="subject")
    return subject.strip()


def check_body(body: str) -> str:
    if not body.strip():
        raise InvalidRequest("The body is empty; H0 does not send empty mail. Write the message in the note, then "
                             "approve again.", field="body")
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
    recipients = {"To": checked_addresses("to", to), "Cc": checked_addresses("cc", cc),
                  "Bcc": checked_addresses("bcc", bcc)}
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
        raise InvalidRequest(f"A header value cannot be encoded: {exc}. Retype the subject and the recipients in the "
                             "frontmatter as plain text, one line each, then approve again.") from None
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
    """Both parts, as their reader sees them: nothing in them may render as nothing (h0.mail.visible)."""
    again = "then send it again"
    found = visible.problems(visible.find_in_text(body), where="The message's text", again=again)
    if html_body:
        found += visible.problems(visible.find_in_html(html_body), where="The HTML part", again=again)
    if found:
        message = found[0] if len(found) == 1 else " ".join(f"({i}) {p}" for i, p in enumerate(found, 1))
        raise InvalidRequest(message, problems=found, reason="invisible_text")


def _text_cte(text: str) -> str:
    # 8bit needs 8BITMIME end to end and breaks on lines over 998 bytes; quoted-printable
    # survives any relay and stays readable.
    if text.isascii() and all(len(line) <= 998 for line in text.splitlines()):
        return "7bit"
    return "quoted-printable"


def raw_bytes(msg: EmailMessage) -> bytes:
    """The bytes a backend hands over, checked again: exactly the message's own headers on the wire."""
    return check_wire(msg)
