"""A note as H0 sees it: frontmatter data, body, and the hash of the bytes it came from."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from h0.errors import InvalidRequest, ParseError
from h0.vault import frontmatter
from h0.vault.frontmatter import Split
from h0.vault.model import NoteFacts, note_facts

MAX_NOTE_BYTES = 10 * 1024 * 1024


def content_hash(data: bytes) -> str:
    """The hash a reader passes back as `if_match` to guard against lost updates."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(slots=True)
class Note:
    """A parsed note. `frontmatter` holds plain JSON values (dates as ISO strings).

    The one note type of H0: read from disk (`parse`) or received from the vault server (the
    MCP client builds it from `read_note`'s answer; then `size`, `mtime_ns` and `parts` are
    unknown: 0, 0, None). Decisions read `facts`, the typed model, not `frontmatter`."""

    path: str
    frontmatter: dict[str, Any]
    body: str
    hash: str
    size: int = 0
    mtime_ns: int = 0
    parts: Split | None = field(default=None, repr=False)
    typed: NoteFacts | None = field(default=None, repr=False, compare=False)

    @property
    def facts(self) -> NoteFacts:
        """What the note says, typed (h0.vault.model): built on first use, then kept — a Note's
        frontmatter is never changed in place (writes make a new Note)."""
        if self.typed is None:
            self.typed = note_facts(self.path, self.frontmatter, self.body)
        return self.typed


def decode(data: bytes, path: str) -> str:
    """Decode note bytes as UTF-8, or raise ParseError naming the first bad byte."""
    if len(data) > MAX_NOTE_BYTES:
        raise InvalidRequest(
            f"The note is {len(data) / 1_048_576:.1f} MB; H0 handles notes up to {MAX_NOTE_BYTES // 1_048_576} MB.",
            path=path,
            size=len(data),
            limit=MAX_NOTE_BYTES,
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"The note is not UTF-8 text (bad byte at offset {exc.start}).", path=path) from None


# What another reader of this same parser read from a note: (path, content hash) -> its frontmatter, or None.
Lent = Callable[[str, str], dict[str, Any] | None]


def parse(data: bytes, path: str, mtime_ns: int = 0, *, lent: Lent | None = None) -> Note:
    """Parse note bytes into a Note; ParseError carries the path.

    Never more than a typed error, whatever the bytes: the frontmatter is bounded (size,
    nesting, node and alias counts, value length) before any recursive parser sees it
    (frontmatter.check_bounds), and a note past MAX_NOTE_BYTES is refused before decoding.

    `lent(path, hash)`: the frontmatter `frontmatter.load` already gave for bytes of this content hash (the vault
    index keeps it: `VaultIndex.frontmatter_read`), or None. Equal hashes are equal bytes, so a lent parse is this
    parse; a note's YAML is most of the cost of reading it (ruamel, with the bounds: ~0.3 ms a note).
    """
    text = decode(data, path)
    digest = content_hash(data)
    try:
        parts = frontmatter.split(text)
        data_fm = lent(path, digest) if lent is not None and parts.yaml is not None else None
        if data_fm is None:
            data_fm = frontmatter.load(parts.yaml)
    except ParseError as exc:
        raise ParseError(exc.message, **{**exc.details, "path": path}) from None
    return Note(path, data_fm, parts.body, digest, len(data), mtime_ns, parts)
