"""Hostile MIME bounded before any parser sees it: one such message costs one line, never the ingest.

The standard library's email package parses nested multiparts by recursion (a 1,000-deep
message raises RecursionError), takes seconds over 100,000 header lines, and splits an address
list in quadratic time (100,000 recipients: minutes, in `getaddresses`). Each of these arrives
from a stranger, so each is bounded here, by a linear scan of the raw bytes or the header value:

- `check_raw` refuses (ParseError) a message whose header block holds more than
  MAX_HEADER_FIELDS fields or MAX_HEADER_BYTES bytes, or which declares more than MAX_MULTIPARTS
  multipart boundaries (real mail nests a handful); callers report it as one skipped message;
- `bounded_address_list` keeps the first MAX_ADDRESS_LIST_CHARS characters of an address header
  (cut after a whole address: about 1,500 addresses), so splitting it stays fast; the
  message is still read, with the recipients that fit.
"""

from __future__ import annotations

import re

from h0.errors import ParseError

__all__ = [
    "MAX_ADDRESS_LIST_CHARS",
    "MAX_HEADER_BYTES",
    "MAX_HEADER_FIELDS",
    "MAX_MULTIPARTS",
    "bounded_address_list",
    "check_header_fields",
    "check_raw",
]

MAX_HEADER_FIELDS = 2_000  # a long-travelled real message has a few hundred (Received, ARC, DKIM…)
MAX_HEADER_BYTES = 1024 * 1024
MAX_MULTIPARTS = 200  # multipart containers in one message (each declares a boundary)
MAX_ADDRESS_LIST_CHARS = 32 * 1024  # splitting this many takes ~0.1 s; 100,000 addresses took minutes
_FIELD_START = re.compile(rb"^[!-9;-~]+[ \t]*:", re.MULTILINE)
_BOUNDARY = re.compile(rb"boundary[ \t]*=", re.IGNORECASE)


def check_raw(raw: bytes) -> None:
    """Refuse (ParseError, `reason`) a raw message past the bounds of the module docstring."""
    head = _head(raw)
    if len(head) > MAX_HEADER_BYTES:
        raise ParseError(
            f"its header block is larger than {MAX_HEADER_BYTES // 1024} KB: not read",
            reason="mime_headers_too_large",
            limit=MAX_HEADER_BYTES,
        )
    check_header_fields(sum(1 for _ in _FIELD_START.finditer(head)))
    boundaries = sum(1 for _ in _BOUNDARY.finditer(raw))
    if boundaries > MAX_MULTIPARTS:
        raise ParseError(
            f"it declares {boundaries:,} multipart parts (more than {MAX_MULTIPARTS}; nested that deep or "
            "that many is no real email): not read",
            reason="mime_too_many_parts",
            limit=MAX_MULTIPARTS,
        )


def check_header_fields(count: int) -> None:
    """Refuse (ParseError) a message of `count` header fields past MAX_HEADER_FIELDS, however it was read (raw
    bytes here, or a provider's list of headers: h0.mail.providers.gmail_wire)."""
    if count > MAX_HEADER_FIELDS:
        raise ParseError(
            f"it has {count:,} header fields (more than {MAX_HEADER_FIELDS:,}): not read",
            reason="mime_too_many_headers",
            limit=MAX_HEADER_FIELDS,
        )


def bounded_address_list(text: str) -> str:
    """`text` itself, or (past MAX_ADDRESS_LIST_CHARS) its first addresses, cut after a comma."""
    if len(text) <= MAX_ADDRESS_LIST_CHARS:
        return text
    cut = text.rfind(",", 0, MAX_ADDRESS_LIST_CHARS)
    return text[: cut if cut > 0 else MAX_ADDRESS_LIST_CHARS]


def _head(raw: bytes) -> bytes:
    """The header block (up to the first empty line), scanning no further than needed."""
    ends = [i for i in (raw.find(b"\r\n\r\n"), raw.find(b"\n\n")) if i >= 0]
    return raw[: min(ends)] if ends else raw
