"""What the index keeps of one note file: its identity on disk and the text a search or a related-notes
look-up needs (title, frontmatter values, body), the email addresses it names, its [[links]], whether
it is marked private and the thread keys that tie it to its conversation (h0.vault.disclosure).
Read with the same care as every other note read: never opened unless it is a regular
file reached through no symlink, bounded, and any problem a typed reason, never an exception."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from h0.errors import H0Error
from h0.platform.fs import read_bounded
from h0.vault import frontmatter
from h0.vault.disclosure import MAIL_FIELDS, own_mark, thread_keys, unparsed_thread_keys
from h0.vault.index.entities import note_keys
from h0.vault.model import is_mail
from h0.vault.note import MAX_NOTE_BYTES, content_hash
from h0.vault.paths import link_key
from h0.vault.person import PERSON_ADDRESS_KEYS, person_addresses
from h0.vault.values import ADDRESS, source_key
from h0.vault.values import addresses as header_addresses

# Email notes' header fields: the note is about (from, to) these people too (the gate's mail fields).
HEADER_FIELDS = MAIL_FIELDS
WIKILINK = re.compile(r"\[\[([^\[\]|#^\n]{1,200})(?:[#^][^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
MAX_ADDRESSES = 200  # per note: a mailing list's archive need not fill the table
MAX_LINKS = 500
MAX_ENTITY_CHARS = 20_000  # of a note's body read for names and codes (its head says what it is about)


@dataclass(frozen=True, slots=True)
class Signature:
    """What says a file is the one indexed: the index re-reads a note whose signature changed."""

    mtime_ns: int
    size: int
    ino: int

    @classmethod
    def of(cls, info: os.stat_result) -> Signature:
        return cls(info.st_mtime_ns, info.st_size, info.st_ino)


@dataclass(slots=True)
class Extracted:
    """One note as the index keeps it."""

    path: str
    signature: Signature
    hash: str | None = None  # None: its text could not be indexed (`problem` says why)
    title: str = ""
    meta: str = ""  # frontmatter values, one per line
    body: str = ""
    frontmatter: dict[str, Any] = field(default_factory=dict)
    addresses: list[tuple[str, str]] = field(default_factory=list)  # (address lower-cased, field or "body")
    links: list[str] = field(default_factory=list)  # link targets, lower-cased note names
    # Private by its own words (h0.vault.model.marked_private, its text's `#private` too) or because its properties
    # cannot be read; its folder, a private person's mail and its thread are judged when asked (index.privacy).
    private: bool = False
    threads: list[str] = field(default_factory=list)  # its thread keys (h0.vault.disclosure.thread_keys)
    entities: list[tuple[str, str]] = field(default_factory=list)  # (key, kind): h0.vault.index.entities
    person: bool = False
    problem: str | None = None
    packed: bytes | None = None  # title, meta and body compressed (h0.vault.index.db.pack), once known


def read_note_file(abs_path: str, rel: str) -> Extracted | None:
    """The note at `abs_path` as the index keeps it; None when it is not a regular file (gone, a folder,
    a FIFO, socket or device named *.md, a symlink): such files are never opened for reading text."""
    try:
        info = os.lstat(abs_path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    found = read_bounded(abs_path, MAX_NOTE_BYTES)
    if found is None:
        return None  # swapped for something else between lstat and open, or unreadable
    data, info = found
    if data is None:
        return Extracted(
            rel,
            Signature.of(info),
            title=_title(rel),
            private=own_mark(None),  # not read: private until it can be (the gate's rule)
            problem=f"larger than {MAX_NOTE_BYTES // 1_048_576} MB",
        )
    return extract(rel, data, Signature.of(info))


def extract(rel: str, data: bytes, signature: Signature) -> Extracted:
    """The index's view of a note's bytes. Invalid UTF-8 is indexed with replacement characters (a search
    checks the bytes themselves); frontmatter that cannot be read leaves its block as body text."""
    digest = content_hash(data)
    note = Extracted(rel, signature, digest, title=_title(rel))
    if len(data) > MAX_NOTE_BYTES:
        note.hash, note.problem = None, f"larger than {MAX_NOTE_BYTES // 1_048_576} MB"
        note.private = own_mark(None)
        return note
    unparsed: frozenset[str] = frozenset()  # the thread keys of a block that does not parse, read from its lines
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:  # no note reader takes it (h0.vault.note.decode): private until it is text
        text = data.decode("utf-8", errors="replace")
        note.problem, note.private = "not UTF-8 text", own_mark(None)
    try:
        parts = frontmatter.split(text)
        data_fm = frontmatter.load(parts.yaml)
        body = parts.body
    except H0Error as error:
        # Private until its properties parse (the gate's own_mark); the error names a line, never the note's words.
        data_fm, body = {}, text
        note.problem, note.private = f"frontmatter not read: {error.message[:200]}", own_mark(None)
        unparsed = unparsed_thread_keys(rel, text)  # its conversation stays private with it (fail closed)
    note.frontmatter = data_fm
    note.meta = "\n".join(_scalars(data_fm.values()))
    note.body = body
    note.private = note.private or own_mark(data_fm, body)
    note.threads = sorted(thread_keys(rel, data_fm) | unparsed)
    addresses: dict[str, str] = {}
    for address, name in person_addresses(data_fm):  # a People note: "this note is about this person"
        addresses.setdefault(address.lower(), name)
    for name in HEADER_FIELDS:  # the real addresses: one shown in a display name ("ceo@bank.com" <x@evil>) is not
        for address in header_addresses(data_fm.get(name))[:MAX_ADDRESSES]:
            if ADDRESS.fullmatch(address):
                addresses.setdefault(address.lower(), name)
    note.person = any(name in PERSON_ADDRESS_KEYS for name in addresses.values())
    for match in addresses_in_text(body):
        if len(addresses) >= MAX_ADDRESSES:
            break
        addresses.setdefault(match.group().lower(), "body")
    note.addresses = list(addresses.items())[:MAX_ADDRESSES]
    links = {link_key(m.group(1)) for m in WIKILINK.finditer(body)}
    links |= {link_key(m.group(1)) for m in WIKILINK.finditer(note.meta)}  # `source: "[[EMAIL_1]]"`
    if answered := source_key(data_fm.get("source")):
        links.add(answered)  # an unquoted `source: [[EMAIL_1]]`, which YAML reads as a list in a list
    note.links = sorted(links)[:MAX_LINKS]
    # An email (received or sent) or a reply draft is a stranger's words or H0's, never what the owner knows:
    # what a note is about (`entities`) is kept for the owner's notes only — thousands of emails in
    # Needs_Action/ would otherwise answer every look-up of a name they share.
    if not is_mail(data_fm):
        aliases = [str(a) for a in _as_list(data_fm.get("aliases")) if isinstance(a, (str, int, float))][:20]
        note.entities = note_keys(note.title, aliases, note.meta, body[:MAX_ENTITY_CHARS])
    return note


def addresses_in_text(text: str) -> Iterator[re.Match[str]]:
    """The addresses `ADDRESS.finditer(text)` finds, in the same order, looked for only in the words that hold
    an "@" (an address holds no whitespace, so no match spans two words; most mail bodies hold none)."""
    if "@" not in text:
        return
    for word in text.split():
        if "@" in word:
            yield from ADDRESS.finditer(word)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def frontmatter_json(note: Extracted) -> str:
    return json.dumps(note.frontmatter, ensure_ascii=False, separators=(",", ":"))


def _title(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _scalars(values: Iterable[Any], depth: int = 0) -> Iterable[str]:
    for value in values:
        if isinstance(value, (str, int, float)):  # most values: no costlier Mapping (ABC) test
            yield str(value)
        elif isinstance(value, Mapping):
            if depth < 8:
                yield from _scalars(value.values(), depth + 1)
        elif isinstance(value, list):
            if depth < 8:
                yield from _scalars(value, depth + 1)
        elif value is not None:
            yield str(value)
