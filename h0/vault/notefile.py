"""A note file's bytes: read with care (no pipe or device, bounded) and composed anew over what was read,
keeping untouched frontmatter byte for byte (h0.vault.store writes them atomically)."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from typing import Any

from h0.errors import Conflict, InvalidRequest, NotFound, ParseError
from h0.platform.fileio import typed_os_error
from h0.platform.fs import open_regular_status
from h0.vault import frontmatter
from h0.vault.note import MAX_NOTE_BYTES, content_hash, decode
from h0.vault.paths import VaultPath


def changed_since_read(rel: str, expected: str, actual: str | None) -> Conflict:
    """The refusal of a write guarded by a hash (`if_match`) the note no longer has."""
    return Conflict(
        f"{rel} changed since it was read; re-read it and apply the change again.",
        path=rel,
        expected=expected,
        actual=actual,
    )


def read_note_bytes(target: VaultPath) -> tuple[bytes, int]:
    """A note file's bytes and mtime: never a pipe, socket or device (refused without blocking on it), at most
    MAX_NOTE_BYTES; every failure a typed error."""
    try:
        # A FIFO named *.md must not hold this thread (nor, for an inline tool, the server's event loop)
        # until something writes to it: h0.platform.fs refuses it without waiting.
        fd, info = open_regular_status(target.where, target.mode)
    except FileNotFoundError:
        raise NotFound(f"No note at {target.rel}.", path=target.rel) from None
    except IsADirectoryError:
        raise InvalidRequest(f"{target.rel} is a folder, not a note.", path=target.rel) from None
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise InvalidRequest(
                f"{target.rel} is not a regular file (a pipe, socket or device); H0 does not read it.",
                path=target.rel,
            ) from None
        raise typed_os_error(exc, f"read {target.rel}", target.rel) from exc
    try:
        if info.st_size > MAX_NOTE_BYTES:
            raise InvalidRequest(
                f"The note is {info.st_size / 1_048_576:.1f} MB; H0 handles notes up to "
                f"{MAX_NOTE_BYTES // 1_048_576} MB.",
                path=target.rel,
                size=info.st_size,
                limit=MAX_NOTE_BYTES,
            )
        # One read of the size the file has, and one byte more: a regular file's short read is its end, so the
        # usual note takes one read; one that grew since the fstat is read on, up to the bound.
        data = os.read(fd, info.st_size + 1)
        if len(data) <= info.st_size:
            return data, info.st_mtime_ns
        chunks = [data]
        size = len(data)
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_NOTE_BYTES:
                raise InvalidRequest(
                    f"The note grew past {MAX_NOTE_BYTES // 1_048_576} MB while it was read; H0 handles notes up "
                    f"to {MAX_NOTE_BYTES // 1_048_576} MB.",
                    path=target.rel,
                    limit=MAX_NOTE_BYTES,
                )
        return b"".join(chunks), info.st_mtime_ns
    except OSError as exc:  # EIO and the like, met after the open
        raise typed_os_error(exc, f"read {target.rel}", target.rel) from exc
    finally:
        os.close(fd)


def composed(
    target: VaultPath, old_bytes: bytes | None, frontmatter_data: Mapping[str, Any], body: str, if_match: str | None
) -> bytes:
    """The note's new bytes over `old_bytes` (None: there is no note yet): untouched frontmatter keys kept
    byte for byte; Conflict when `if_match` is not the old bytes' hash; refused when it would be too big."""
    old_parts: frontmatter.Split | None = None
    current_hash: str | None = None
    if old_bytes is not None:
        current_hash = content_hash(old_bytes)
        try:
            old_parts = frontmatter.split(decode(old_bytes, target.rel))
        except ParseError:
            old_parts = None  # replacing a corrupt note with a good one is allowed
    if if_match is not None and if_match != current_hash:
        raise changed_since_read(target.rel, if_match, current_hash)
    keep_block = bool(frontmatter_data) or (old_parts is not None and old_parts.yaml is not None)
    yaml_text = (
        frontmatter.render(
            old_parts.yaml if old_parts else None, frontmatter_data, old_parts.newline if old_parts else "\n"
        )
        if keep_block
        else None
    )
    text = frontmatter.compose(old_parts, yaml_text, body)
    data = text.encode("utf-8")
    if len(data) > MAX_NOTE_BYTES:
        raise InvalidRequest(
            f"The note would be {len(data) / 1_048_576:.1f} MB; H0 writes notes up to "
            f"{MAX_NOTE_BYTES // 1_048_576} MB.",
            path=target.rel,
            size=len(data),
            limit=MAX_NOTE_BYTES,
        )
    return data
