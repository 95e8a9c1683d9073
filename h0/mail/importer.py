"""Mail from files — `.eml` messages, `.mbox` mailboxes (a Google Takeout export, a client's export),
and folders of them — read as the mail service reads a mailbox, so `h0 import` writes each message as
ingest would (h0.handlers.mail_import). Every file is hostile: a file that is not mail, empty, binary
or too large is a Problem with its reason, never a crash; a malformed message is read as far as it goes.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import mailbox
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from h0.errors import H0Error
from h0.mail.backend import Fetched
from h0.mail.imap_wire import fetched_from_raw

MAX_MESSAGE_BYTES = 25 * 1024 * 1024  # Gmail's own limit for a message with its attachments
MAIL_SUFFIXES = (".eml", ".mbox", ".mbx")
MAX_FOLDER_DEPTH = 32


@dataclass(frozen=True, slots=True)
class FileMessage:
    source: str  # the file, and the message's place in it for a mailbox ("mail.mbox #3")
    fetched: Fetched


@dataclass(frozen=True, slots=True)
class Problem:
    source: str
    reason: str


def messages_in(paths: Sequence[Path]) -> Iterator[FileMessage | Problem]:
    """Every message in `paths` (files or folders), in order; a Problem for each that cannot be read."""
    for path in paths:
        yield from _from_path(Path(path), 0)


def _from_path(path: Path, depth: int) -> Iterator[FileMessage | Problem]:
    try:
        info = os.stat(path)
    except OSError as exc:
        yield Problem(str(path), f"cannot be read: {exc.strerror or exc}")
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
            if entry.is_dir(follow_symlinks=False) or entry.name.lower().endswith(MAIL_SUFFIXES):
                yield from _from_path(Path(entry.path), depth + 1)
        return
    if not stat.S_ISREG(info.st_mode):
        yield Problem(str(path), "not a regular file (a pipe, socket or device): not read")
        return
    if info.st_size == 0:
        yield Problem(str(path), "the file is empty")
        return
    if path.suffix.lower() in (".mbox", ".mbx") or _starts_like_mbox(path):
        yield from _mbox(path)
        return
    if info.st_size > MAX_MESSAGE_BYTES:
        yield Problem(str(path), f"larger than {MAX_MESSAGE_BYTES // 1_048_576} MB: not imported")
        return
    try:
        raw = path.read_bytes()
    except OSError as exc:
        yield Problem(str(path), f"cannot be read: {exc.strerror or exc}")
        return
    yield _message(str(path), raw)


def _starts_like_mbox(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(5) == b"From "
    except OSError:
        return False


def _mbox(path: Path) -> Iterator[FileMessage | Problem]:
    try:
        box = mailbox.mbox(path, create=False)
        keys = list(box.iterkeys())
    except Exception as exc:  # noqa: BLE001 - mailbox raises many kinds on a broken file
        yield Problem(str(path), f"not a readable mailbox: {exc}")
        return
    if not keys:
        yield Problem(str(path), "no message in this mailbox (an mbox starts each message with a 'From ' line)")
        return
    for number, key in enumerate(keys, 1):
        source = f"{path} #{number}"
        try:
            raw = box.get_bytes(key)
        except Exception as exc:  # noqa: BLE001 - one damaged message, not the whole mailbox
            yield Problem(source, f"cannot be read: {exc}")
            continue
        if len(raw) > MAX_MESSAGE_BYTES:
            yield Problem(source, f"larger than {MAX_MESSAGE_BYTES // 1_048_576} MB: not imported")
            continue
        yield _message(source, raw)
    box.close()


def _message(source: str, raw: bytes) -> FileMessage | Problem:
    head = raw[:65536]
    if b":" not in head.split(b"\n\n", 1)[0] or b"\x00" in head[:4096]:
        return Problem(source, "not an email message (no header lines)")
    try:
        fetched = fetched_from_raw(
            "", raw, folder="INBOX", flags=[b"\\Seen"], internal_date=None, sent_folder=None, full=True
        )
    except H0Error as error:  # hostile MIME (h0.mail.mimebounds): this message is one line
        return Problem(source, error.message)
    if not any(fetched.headers.get(name) for name in ("From", "Subject", "Message-ID", "Date")):
        return Problem(source, "not an email message (no From, Subject, Message-ID or Date)")
    identity = str(fetched.headers.get("Message-ID") or "") or hashlib.sha256(raw).hexdigest()
    fetched.id = "imp-" + hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:20]
    fetched.internal_date_ms = _date_ms(str(fetched.headers.get("Date") or ""))
    return FileMessage(source, fetched)


def _date_ms(value: str) -> int | None:
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)
