"""Mail from files — `.eml` messages, `.mbox` mailboxes (a Google Takeout export, a client's export),
and folders of them — read as the mail service reads a mailbox, so `h0 import` keeps each message as
ingest would (h0.handlers.mail_import). Every file is hostile: a file that is not mail, empty, binary
or too large, a message nested beyond reason, a file that changes while it is read, a symbolic link
(never followed: an import reads only what is in the folders it was given) — each is a Problem with
its reason, never a crash; a malformed message is read as far as it goes.

An mbox is streamed (h0.mail.incoming.mbox_stream): one message in memory at a time, each with the byte
offset after it, so an import can resume where it stopped (`messages_of(file, start=…)`).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import os
import stat
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import BinaryIO

from h0.errors import H0Error
from h0.mail.headers import clean_header_text, header_date
from h0.mail.incoming.mbox_stream import mbox_slices
from h0.mail.providers.backend import Fetched
from h0.mail.providers.imap_wire import fetched_from_raw

MAX_MESSAGE_BYTES = 25 * 1024 * 1024  # Gmail's own limit for a message with its attachments
MAIL_SUFFIXES = (".eml", ".mbox", ".mbx")
MAX_FOLDER_DEPTH = 32
MAX_MULTIPARTS = 100  # multipart containers in one message: an honest one has a handful
HEAD_BYTES = 65_536
MAX_HEADER_BYTES = 64 * 1024  # one header field; the standard parser is quadratic in a long address list
# A mailbox or folder named like this holds the owner's own sent mail (Thunderbird, Apple Mail,
# Outlook, Takeout's per-label exports).
SENT_NAMES = frozenset({"sent", "sent mail", "sent items", "sent messages", "gesendet", "envoyés", "enviados"})
# Gmail's system labels as Takeout's X-Gmail-Labels names them, and as Gmail's API (a synced note) does.
TAKEOUT_LABELS = {
    "inbox": "INBOX",
    "unread": "UNREAD",
    "starred": "STARRED",
    "important": "IMPORTANT",
    "spam": "SPAM",
    "trash": "TRASH",
    "chat": "CHAT",
    "category personal": "CATEGORY_PERSONAL",
    "category social": "CATEGORY_SOCIAL",
    "category promotions": "CATEGORY_PROMOTIONS",
    "category updates": "CATEGORY_UPDATES",
    "category forums": "CATEGORY_FORUMS",
}
# Labels kept as words, never as the provider's word that the owner sent a message or that it is a draft.
WORDS_NOT_IDS = {"sent": "Sent", "draft": "Draft", "drafts": "Drafts"}
MAX_LABELS = 50
MAX_LABEL_CHARS = 100


@dataclass(frozen=True, slots=True)
class MailFile:
    """One file to import, as it was when listed: its identity decides whether a saved place still holds."""

    path: Path
    size: int
    mtime_ns: int
    head: str  # a hash of its first 64 KB
    mbox: bool
    sent: bool  # named like a Sent folder (the file or a folder above it within the import)


@dataclass(frozen=True, slots=True)
class FileMessage:
    source: str  # the file, and the message's place in it for a mailbox ("mail.mbox #3")
    fetched: Fetched
    end: int = 0  # the byte offset just after it in its file (the place to resume from)
    sent_folder: bool = False  # it came from a file or folder of sent mail


@dataclass(frozen=True, slots=True)
class Problem:
    source: str
    reason: str
    end: int | None = None  # for a message of a mailbox: the offset just after it


def mail_files(paths: Sequence[Path], *, vault: Path | None = None) -> Iterator[MailFile | Problem]:
    """Every mail file under `paths` (files or folders), in order; a Problem for each that cannot be read.
    Symbolic links are never followed, and nothing inside `vault` is read."""
    inside = os.path.realpath(vault) if vault is not None else None
    for path in paths:
        yield from _from_path(Path(path), 0, inside, sent=_sent_name(Path(path)))


def _sent_name(path: Path) -> bool:
    return path.stem.strip().lower() in SENT_NAMES or path.name.strip().lower() in SENT_NAMES


def _from_path(path: Path, depth: int, vault: str | None, *, sent: bool) -> Iterator[MailFile | Problem]:
    try:
        info = os.lstat(path)
    except OSError as exc:
        yield Problem(str(path), f"cannot be read: {exc.strerror or exc}")
        return
    if stat.S_ISLNK(info.st_mode):
        yield Problem(str(path), "a symbolic link: not followed (import the file or folder it points to)")
        return
    real = os.path.realpath(path)
    if vault is not None and (real == vault or real.startswith(vault + os.sep)):
        yield Problem(str(path), "inside the vault: not read (import mail from outside it)")
        return
    if stat.S_ISDIR(info.st_mode):
        if depth >= MAX_FOLDER_DEPTH:
            yield Problem(str(path), f"more than {MAX_FOLDER_DEPTH} folders deep: not read")
            return
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError as exc:
            yield Problem(str(path), f"cannot be listed: {exc.strerror or exc}")
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                if entry.name.lower().endswith(MAIL_SUFFIXES) or entry.is_dir():
                    yield Problem(entry.path, "a symbolic link: not followed (import the file or folder it points to)")
                continue
            if entry.is_dir(follow_symlinks=False) or entry.name.lower().endswith(MAIL_SUFFIXES):
                child = Path(entry.path)
                yield from _from_path(child, depth + 1, vault, sent=sent or _sent_name(child))
        return
    if not stat.S_ISREG(info.st_mode):
        yield Problem(str(path), "not a regular file (a pipe, socket or device): not read")
        return
    if info.st_size == 0:
        yield Problem(str(path), "the file is empty")
        return
    try:
        with open(path, "rb", opener=_no_follow) as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as exc:
        yield Problem(str(path), f"cannot be read: {exc.strerror or exc}")
        return
    mbox = path.suffix.lower() in (".mbox", ".mbx") or head.startswith(b"From ")
    if not mbox and info.st_size > MAX_MESSAGE_BYTES:
        yield Problem(str(path), f"larger than {MAX_MESSAGE_BYTES // 1_048_576} MB: not imported")
        return
    yield MailFile(Path(real), info.st_size, info.st_mtime_ns, hashlib.sha256(head).hexdigest(), mbox, sent)


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


def file_identity(path: Path) -> tuple[int, int, str] | None:
    """(size, mtime_ns, hash of the first 64 KB) of a file now; None when it cannot be read."""
    try:
        with open(path, "rb", opener=_no_follow) as handle:
            info = os.fstat(handle.fileno())
            return info.st_size, info.st_mtime_ns, hashlib.sha256(handle.read(HEAD_BYTES)).hexdigest()
    except OSError:
        return None


def messages_of(file: MailFile, *, start: int = 0) -> Iterator[FileMessage | Problem]:
    """The messages of one file from byte `start` (an mbox; an .eml is one message), then a Problem if the
    file changed while it was read."""
    name = str(file.path)
    try:
        handle = open(file.path, "rb", opener=_no_follow)  # noqa: SIM115 - closed in finally below
    except OSError as exc:
        yield Problem(name, f"cannot be read: {exc.strerror or exc}")
        return
    try:
        if not file.mbox:
            raw = handle.read(MAX_MESSAGE_BYTES + 1)
            yield dataclasses.replace(_message(name, raw, file.sent), end=file.size)
        else:
            yield from _mbox(file, handle, start)
        after = os.fstat(handle.fileno())
    except OSError as exc:
        yield Problem(name, f"could not be read to the end ({exc.strerror or exc}); run the import again to resume")
        return
    finally:
        handle.close()
    if (after.st_size, after.st_mtime_ns) != (file.size, file.mtime_ns):
        yield Problem(
            name,
            "the file changed while it was read: what was read is kept; run the import again once it is "
            "complete for the rest",
        )


def _mbox(file: MailFile, handle: BinaryIO, start: int) -> Iterator[FileMessage | Problem]:
    name = str(file.path)
    preamble = start == 0 and handle.read(5) != b"From "
    found = False
    for piece in mbox_slices(handle, start=start, stop=file.size, max_bytes=MAX_MESSAGE_BYTES):
        source = f"{name} @{piece.start}"
        if preamble and piece.start == 0:
            if piece.end >= file.size:
                yield Problem(name, "no message in this mailbox (an mbox starts each message with a 'From ' line)")
                return
            yield Problem(source, "text before the first message (no 'From ' line): skipped", piece.end)
            continue
        found = True
        if piece.raw is None:
            yield Problem(source, f"larger than {MAX_MESSAGE_BYTES // 1_048_576} MB: not imported", piece.end)
            continue
        item = _message(source, piece.raw, file.sent)
        yield dataclasses.replace(item, end=piece.end)
    if not found and start == 0:
        yield Problem(name, "no message in this mailbox (an mbox starts each message with a 'From ' line)")


def _message(source: str, raw: bytes, sent: bool) -> FileMessage | Problem:
    head = raw[:HEAD_BYTES]
    if b":" not in head.split(b"\n\n", 1)[0] or b"\x00" in head[:4096]:
        return Problem(source, "not an email message (no header lines)")
    if len(raw) > MAX_MESSAGE_BYTES:
        return Problem(source, f"larger than {MAX_MESSAGE_BYTES // 1_048_576} MB: not imported")
    too_long = _longest_header(raw)
    if too_long > MAX_HEADER_BYTES:
        return Problem(
            source,
            f"a header of {too_long // 1024} KB (more than {MAX_HEADER_BYTES // 1024} KB: thousands of recipients?): "
            "not imported",
        )
    if raw.lower().count(b"boundary=") > MAX_MULTIPARTS:
        return Problem(source, f"more than {MAX_MULTIPARTS} nested MIME parts: not imported")
    try:
        fetched = fetched_from_raw(
            "", raw, folder="INBOX", flags=[b"\\Seen"], internal_date=None, sent_folder=None, full=True
        )
    except H0Error as error:  # hostile MIME (h0.mail.incoming.mimebounds): this message is one line
        return Problem(source, error.message)
    except (RecursionError, MemoryError, ValueError, LookupError, TypeError) as exc:
        return Problem(source, f"cannot be parsed ({type(exc).__name__}): not imported")
    if not any(fetched.headers.get(name) for name in ("From", "Subject", "Message-ID", "Date")):
        return Problem(source, "not an email message (no From, Subject, Message-ID or Date)")
    fetched.labels = export_labels(fetched.headers)  # not the INBOX fetched_from_raw assumes for any message
    identity = str(fetched.headers.get("Message-ID") or "") or hashlib.sha256(raw).hexdigest()
    fetched.id = "imp-" + hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:20]
    fetched.internal_date_ms = _date_ms(str(fetched.headers.get("Date") or ""))
    return FileMessage(source, fetched, sent_folder=sent)


def _longest_header(raw: bytes) -> int:
    """The length of the longest header field (folded lines together): an honest one is a few KB."""
    ends = [i for i in (raw.find(b"\n\n"), raw.find(b"\r\n\r\n")) if i != -1]
    head = raw[: min(ends)] if ends else raw
    if len(head) <= MAX_HEADER_BYTES:
        return len(head)
    longest = current = 0
    for line in head.split(b"\n"):
        current = current + len(line) if line[:1] in (b" ", b"\t") else len(line)
        longest = max(longest, current)
    return longest


def export_labels(headers: Message) -> list[str]:
    """The labels an export gave a message: Google Takeout's one `X-Gmail-Labels` header (`Inbox,Important,
    Category Updates,Opened,Work`), Gmail's own labels as its API names them (`INBOX`, `IMPORTANT`,
    `CATEGORY_UPDATES`: as a synced note says them), the owner's as written. The header is the message's text:
    with none or several (a second came with the message from its sender) it claims no label; `Sent` and
    `Draft` stay words, never the provider's `SENT`/`DRAFT` (whether the owner wrote it is h0.mail.owner's
    to say); `Opened` (read) is what a missing `UNREAD` says already. At most MAX_LABELS, cleaned, bounded."""
    values = headers.get_all("X-Gmail-Labels") or []
    if len(values) != 1:
        return []
    found: list[str] = []
    for raw in next(csv.reader([clean_header_text(values[0])], skipinitialspace=True), []):
        label = "".join(ch for ch in raw if unicodedata.category(ch) not in ("Cc", "Cf")).strip()
        label = label[:MAX_LABEL_CHARS].strip()
        key = label.casefold()
        if not label or key == "opened":
            continue
        label = TAKEOUT_LABELS.get(key) or WORDS_NOT_IDS.get(key) or label
        if label not in found:
            found.append(label)
        if len(found) == MAX_LABELS:
            break
    return found


def _date_ms(value: str) -> int | None:
    when = header_date(value)
    return int(when.timestamp() * 1000) if when is not None else None
