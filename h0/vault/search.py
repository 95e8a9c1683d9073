"""Literal, case-insensitive full-text search over note files, with no index to build.

Reads each file once as bytes; for an ASCII query both sides are lowered with
`bytes.lower()` and scanned with `bytes.find`, both in C, which keeps a cold search of
a 50 MB vault within a small factor of ripgrep. A hit inside the frontmatter counts
only when it falls in a value, not in a key name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from h0.errors import InvalidRequest
from h0.platform.fs import read_bounded
from h0.vault.note import MAX_NOTE_BYTES

SNIPPET_CHARS = 160


@dataclass(slots=True)
class SearchHit:
    path: str
    line: int
    snippet: str


def _read(path: str | Path) -> bytes | None:
    read = read_file(path)
    return None if read is None else read[0]


def read_file(path: str | Path) -> tuple[bytes, os.stat_result] | None:
    """A note's bytes as the search reads them, with the file's stat; None when it is unreadable, not a
    regular file, or larger than MAX_NOTE_BYTES (h0.platform.fs.read_bounded)."""
    found = read_bounded(path, MAX_NOTE_BYTES)
    if found is None or found[0] is None:
        return None
    return found[0], found[1]


def check_query(query: object) -> str:
    """A search query is one non-blank line of text (the rule of the full scan and of the index)."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidRequest("query must be a non-empty string.")
    if "\n" in query or "\r" in query:
        raise InvalidRequest("query must be one line of text.")
    return query


class PhraseMatcher:
    """Where `query` first occurs in a note's bytes, as the search defines it: literal, case-insensitive,
    in the body or in a frontmatter value (not a key). One rule for the full scan and the index."""

    def __init__(self, query: str) -> None:
        self.query = query
        if query.isascii():
            self.needle = query.lower().encode("ascii")
            self._finder = _find_ascii
        else:
            self.needle = query.lower().encode("utf-8")
            self._finder = _find_unicode

    def first(self, data: bytes) -> tuple[int, str] | None:
        """(line, snippet) of the first match in `data`, or None."""
        if len(data) < len(self.needle):
            return None
        return self._finder(data, self.needle, self.query)


def search_files(files: Iterable[tuple[str, str | Path]], query: str, limit: int) -> tuple[list[SearchHit], bool]:
    """Return up to `limit` hits (first match per note) and whether more notes matched."""
    hits: list[SearchHit] = []
    matcher = PhraseMatcher(query)
    for rel, abs_path in files:
        data = _read(abs_path)
        if data is None:
            continue
        hit = matcher.first(data)
        if hit is None:
            continue
        if len(hits) == limit:
            return hits, True
        line, snippet = hit
        hits.append(SearchHit(rel, line, snippet))
    return hits, False


def _frontmatter_end(data: bytes) -> int:
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    if not data.startswith(b"---", start):
        return -1
    for marker in (b"\n---", b"\n..."):
        end = data.find(marker, start + 3)
        if end != -1:
            return end
    return -1


def _find_ascii(data: bytes, needle: bytes, query: str) -> tuple[int, str] | None:
    hay = data.lower()
    index = hay.find(needle)
    if index == -1:
        return None
    fm_end = _frontmatter_end(data) if data[:1] in (b"-", b"\xef") else -1
    while index != -1:
        line_start = data.rfind(b"\n", 0, index) + 1
        if index < fm_end and _in_key(data, line_start, index):
            index = hay.find(needle, index + 1)
            continue
        line_end = data.find(b"\n", index)
        if line_end == -1:
            line_end = len(data)
        line_no = data.count(b"\n", 0, index) + 1
        text = data[line_start:line_end].decode("utf-8", errors="replace")
        offset = len(data[line_start:index].decode("utf-8", errors="replace"))
        return line_no, _snippet(text, offset, len(query))
    return None


def _find_unicode(data: bytes, needle: bytes, query: str) -> tuple[int, str] | None:
    text = data.decode("utf-8", errors="replace")
    wanted = query.lower()
    if wanted not in text.lower():
        return None
    fm_lines = -1
    if text.lstrip("\ufeff").startswith("---"):
        end = _frontmatter_end(data)
        fm_lines = data.count(b"\n", 0, end) + 1 if end != -1 else -1
    for number, line in enumerate(text.splitlines(), start=1):
        lowered = line.lower()
        position = lowered.find(wanted)
        while position != -1:
            in_key = number <= fm_lines and ":" in line and position < line.index(":")
            if not in_key:
                return number, _snippet(line, position, len(query))
            position = lowered.find(wanted, position + 1)
    return None


def _in_key(data: bytes, line_start: int, index: int) -> bool:
    colon = data.find(
        b":", line_start, data.find(b"\n", line_start) if data.find(b"\n", line_start) != -1 else len(data)
    )
    return colon != -1 and index < colon


def _snippet(line: str, offset: int, length: int) -> str:
    line = line.rstrip("\r")
    if len(line) <= SNIPPET_CHARS:
        return line.strip()
    start = max(0, min(offset - (SNIPPET_CHARS - length) // 2, len(line) - SNIPPET_CHARS))
    piece = line[start : start + SNIPPET_CHARS].strip()
    return ("…" if start > 0 else "") + piece + ("…" if start + SNIPPET_CHARS < len(line) else "")
