"""An mbox read as a stream: each message's bytes and where it ends, never the whole file in memory.

An mbox (RFC 4155: Google Takeout, Thunderbird, Apple Mail exports) is messages one after the
other, each starting with a line `From ` (the envelope). The standard library's `mailbox.mbox`
first builds a table of every message's offsets, which reads the file twice and keeps 50,000
entries; this reads it once in 1 MB chunks and hands out one message at a time with the byte
offset just after it, the mark an import resumes from. A message larger than `max_bytes` is
skipped without being held (its size is reported); the file is read only up to the size it had
when reading began, so mail appended meanwhile waits for the next import.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

CHUNK_BYTES = 1 << 20
SEPARATOR = b"\nFrom "


@dataclass(frozen=True, slots=True)
class MboxSlice:
    start: int  # the offset of its `From ` line
    end: int  # the offset just after it: where the next message starts
    raw: bytes | None  # the message without its `From ` line; None when larger than max_bytes
    size: int


def mbox_slices(handle: BinaryIO, *, start: int = 0, stop: int, max_bytes: int) -> Iterator[MboxSlice]:
    """The messages of an mbox open in binary mode, from the message starting at `start` to byte `stop`.

    Text before the first `From ` line (a damaged file) is one slice of its own."""
    handle.seek(start)
    buf = b""
    buf_at = start  # the file offset of buf[0]
    begins = start  # the file offset of the current message
    search = 0  # where in buf to look for the next separator
    skipping = False  # the current message is over max_bytes: its bytes are dropped as they come
    left = max(0, stop - start)
    while True:
        found = buf.find(SEPARATOR, max(search, begins - buf_at))
        if found != -1:
            end = buf_at + found + 1
            yield _slice(begins, end, None if skipping else buf[begins - buf_at : found + 1], max_bytes)
            begins, search, skipping = end, found + 1, False
            continue
        chunk = handle.read(min(CHUNK_BYTES, left)) if left > 0 else b""
        if not chunk:
            break
        left -= len(chunk)
        if not skipping and buf_at + len(buf) - begins > max_bytes + len(SEPARATOR):
            skipping = True
        keep_from = max(begins - buf_at, len(buf) - (len(SEPARATOR) - 1)) if skipping else begins - buf_at
        keep_from = max(0, keep_from)
        search = max(0, len(buf) - keep_from - (len(SEPARATOR) - 1))
        buf_at += keep_from
        buf = buf[keep_from:] + chunk
    if begins < buf_at + len(buf):
        yield _slice(begins, buf_at + len(buf), None if skipping else buf[begins - buf_at :], max_bytes)


def _slice(start: int, end: int, data: bytes | None, max_bytes: int) -> MboxSlice:
    if data is None or len(data) > max_bytes:
        return MboxSlice(start, end, None, end - start)
    if data.startswith(b"From "):
        newline = data.find(b"\n")
        body = data[newline + 1 :] if newline != -1 else b""
    else:
        body = data
    return MboxSlice(start, end, body.removesuffix(b"\n"), end - start)
