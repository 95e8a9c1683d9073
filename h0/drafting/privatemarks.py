"""The vault's private marks as a whole, for what H0 writes where an agent can read it and for `h0 eval`:
which notes are private by themselves (h0.vault.disclosure: their properties or their folder), the thread
keys that makes private, and the people those notes name — so a report, the profile's learned table or an
eval run can ask, of any note or address, "may this be named?" without reading the whole vault again.

    view = PrivateMarks.for_vault(root, disclosure).look()     # one look: a walk of the vault
    view.private(rel, frontmatter)                              # the gate, its thread and its people
    view.person("therapist@example.org")                        # private_person: the one adapter

A private person is, until h0.vault.disclosure has its own rule for people: an address a private note
names as its person (`email`, `emails`, `aliases`: a People note marked private or in a private folder),
or the other side of a private conversation (the sender of a private email, the recipients of a private
draft or sent reply) — unless a People note that is not private names the address too: then the owner
keeps that person in the open, and only the private notes themselves are private (the owner's private
note about a colleague's medical leave does not hide every email the colleague sends).
`private_person` is the one place that answers it.

Cheap enough for every dashboard refresh: one walk of the vault with a stat per note; a note unchanged
since the last look is not read again, and a note is parsed only when it may be private by itself or
name a person — it lies in a private folder, or its frontmatter's bytes, lower-cased, hold `private`, or
a line of them starts with an `email`, `emails` or `aliases` key, or they hold a backslash. The gate
compares the `private` key and tags case-folded (h0.vault.model.marked_private), People notes are read by
their exact keys (h0.vault.index.extract), and a YAML escape needs a backslash, so no other note can be
marked private or name a person (`may_be_marked`, `may_name_people`). A note whose frontmatter does not
parse names no thread or person; a record about such a note is not named (`note_at`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from h0.errors import H0Error
from h0.vault.disclosure import Disclosure
from h0.vault.index.extract import PERSON_FIELDS, read_note_file
from h0.vault.listing import read_frontmatter, walk_notes
from h0.vault.model import Kind, NoteFacts, note_facts, note_kind
from h0.vault.paths import VaultPath, link_key

_BOM = b"\xef\xbb\xbf"
_HEAD = 4096  # a note's first bytes looked at; a frontmatter block longer than this is parsed
# Never follow a symlink, never wait on a FIFO swapped in after the walk, never hand the descriptor on.
_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
) | getattr(os, "O_BINARY", 0)
# The sides of a private conversation that become private people: who wrote a private email, whom a
# private reply or draft was written to (never the owner's own address on an email's To:).
_EMAIL_SIDES = frozenset({"from", "reply_to", "sender"})
_REPLY_SIDES = frozenset({"to"})
# A top-level key that names a People note's person, as a line of the frontmatter starts with it (any
# quoting), or a flow mapping, which needs no line of its own.
_PERSON_KEY = re.compile(rb"(?m)^[ \t]*[\"']?(?:emails?|aliases)[\"']?[ \t]*:|^[ \t]*\{")


def frontmatter_block(head: bytes) -> bytes | None:
    """The bytes of the frontmatter block at the start of `head` (a note's first bytes): b"" when it has
    none, None when the block runs past `head` (then only a parse can tell)."""
    start = 3 + len(_BOM) if head.startswith(_BOM) else 3
    if head[start - 3 : start] != b"---":
        return b""
    end = head.find(b"\n---", start)
    dots = head.find(b"\n...", start, end if end >= 0 else len(head))
    end = dots if dots >= 0 else end
    return head[start:end] if end >= 0 else None


def may_be_marked(head: bytes) -> bool:
    """Whether a note whose first bytes are `head` may be marked private in its properties: its frontmatter
    block's bytes, lower-cased, hold `private` or a backslash (or the block runs past `head`). False only
    when the gate could not find a mark there (see the module's docstring)."""
    return _marked_block(frontmatter_block(head))


def may_name_people(head: bytes) -> bool:
    """Whether a note whose first bytes are `head` may name a person (`email`, `emails`, `aliases` at the
    top of its frontmatter, or a backslash; or a block that runs past `head`)."""
    return _people_block(frontmatter_block(head))


def _marked_block(block: bytes | None) -> bool:
    return block is None or b"\\" in block or b"private" in block.lower()


def _people_block(block: bytes | None) -> bool:
    return block is None or b"\\" in block or _PERSON_KEY.search(block) is not None


@dataclass(frozen=True, slots=True)
class Marked:
    """What one note says about privacy: the thread keys and people it makes private (a note private by
    itself), or the people it names in the open (`named`: a People note that is not private)."""

    keys: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()
    named: frozenset[str] = frozenset()


@dataclass(frozen=True, eq=False)
class PrivateView:
    """One look at the vault's private marks (PrivateMarks.look): what a report may name."""

    disclosure: Disclosure
    private_keys: frozenset[str]  # thread keys held by a note private by itself
    people: frozenset[str]  # private people's addresses, lower-cased (private_person)
    marks: PrivateMarks

    def private(self, rel: str, frontmatter: Mapping[str, Any] | None, facts: NoteFacts | None = None) -> bool:
        """A note that may not be named where an agent reads: private by itself or by its thread (the gate,
        h0.vault.disclosure), or written by or to a private person. `facts`: the note's, when the caller
        has them already."""
        if self.disclosure.private(rel, frontmatter, self.private_keys):
            return True
        if frontmatter is None or not self.people:
            return False
        facts = facts if facts is not None else note_facts(rel, frontmatter)
        return self.anyone((facts.sender, *facts.reply_to, *facts.all_recipients))

    def person(self, address: str) -> bool:
        return private_person(self, address)

    def anyone(self, addresses: Iterable[str]) -> bool:
        """Whether any of these addresses is a private person's."""
        return any(self.person(a) for a in addresses if a)

    def note_at(self, *paths: object) -> bool:
        """Whether the note a record names may not be named: the first of `paths` (where a record says the
        note was, is, or went) that is a note in the vault now — by its path, or by its name wherever it
        was moved — judged as `private` judges it. A note found nowhere counts as private (fail closed):
        a record outlives its note, and a deleted private note leaves nothing to tell it by."""
        for path in paths:
            if not isinstance(path, str) or not path:
                continue
            found = self.marks.find(path)
            if found is not None:
                rel, frontmatter = found
                return frontmatter is None or self.private(rel, frontmatter)
        return True


def private_person(view: PrivateView, address: str) -> bool:
    """Whether `address` is a private person's (see the module's docstring) — the one place every report,
    the learned table and `h0 eval` ask. When h0.vault.disclosure answers for people itself, this asks it."""
    return address.strip().lower() in view.people


class PrivateMarks:
    """The private marks of one vault, kept between looks (thread-safe). One per vault and process
    (`for_vault`): the daemon's dashboard and its learned profile share one."""

    def __init__(self, root: Path | str, disclosure: Disclosure) -> None:
        self.root = VaultPath("", Path(os.path.abspath(root)))
        self.disclosure = disclosure
        self._lock = threading.Lock()
        self._notes: dict[str, tuple[int, int, Marked | None]] = {}  # rel -> (mtime_ns, size, its marks)
        self._names: dict[str, str] | None = None  # a note's name (link_key) -> where it is: built when asked
        self._read: dict[str, tuple[int, int, dict[str, Any] | None]] = {}  # frontmatter read for `find`

    @classmethod
    def for_vault(cls, root: Path | str, disclosure: Disclosure) -> PrivateMarks:
        """This process's marks of the vault at `root` judged by `disclosure` (built on first use)."""
        key = (os.path.normcase(os.path.abspath(root)), disclosure.folders)
        with _instances_lock:
            found = _instances.get(key)
            if found is None:
                found = _instances[key] = cls(root, disclosure)
            return found

    def look(self) -> PrivateView:
        """Walk the vault; read again only the notes that changed since the last look."""
        with self._lock:
            seen: dict[str, tuple[int, int, Marked | None]] = {}
            never: dict[str, bool] = {}  # by folder: what the gate says of a note's path is its folder's
            for rel, abs_path, st in walk_notes(self.root, True, stat=True, ordered=False):
                assert st is not None  # walked with stat=True
                known = self._notes.get(rel)
                if known is not None and known[:2] == (st.st_mtime_ns, st.st_size):
                    seen[rel] = known
                    continue
                folder = rel.rpartition("/")[0]
                hidden = never.get(folder) if folder else None
                if hidden is None:
                    hidden = never[folder] = self.disclosure.never(rel)
                seen[rel] = (st.st_mtime_ns, st.st_size, self._marked(rel, abs_path, hidden))
            self._notes, self._names = seen, None
            keys: set[str] = set()
            people: set[str] = set()
            named: set[str] = set()
            for _, _, marked in seen.values():
                if marked is not None:
                    keys |= marked.keys
                    people |= marked.people
                    named |= marked.named
            return PrivateView(self.disclosure, frozenset(keys), frozenset(people - named), self)

    def find(self, path: str) -> tuple[str, dict[str, Any] | None] | None:
        """The note at `path`, or the note of that name wherever the last look found it, with its
        frontmatter (None when it does not parse); None when there is no such note."""
        rel = path.replace("\\", "/").strip("/")
        with self._lock:
            if rel not in self._notes:
                if self._names is None:  # once per look, and only when a record's note has moved
                    self._names = {}
                    for known in self._notes:
                        self._names.setdefault(link_key(known), known)
                rel = self._names.get(link_key(rel), "")
            if not rel:
                return None
            abs_path = os.path.join(self.root.abs, *rel.split("/"))
            try:
                st = os.stat(abs_path)
            except OSError:
                return None
            cached = self._read.get(rel)
            if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
                return rel, cached[2]
            try:
                frontmatter: dict[str, Any] | None = read_frontmatter(abs_path, rel)
            except (H0Error, OSError, ValueError):  # unreadable: a record about it is not named (note_at)
                frontmatter = None
            if len(self._read) > 10_000:
                self._read.clear()
            self._read[rel] = (st.st_mtime_ns, st.st_size, frontmatter)
            return rel, frontmatter

    def _marked(self, rel: str, abs_path: str, never: bool) -> Marked | None:
        """What this note says about privacy (Marked), or None when nothing. `never`: the gate's word on
        its path (h0.vault.disclosure.Disclosure.never)."""
        if not never:
            try:  # the bare system calls: a buffered file object costs more than the read, 10,000 times
                fd = os.open(abs_path, _READ_FLAGS)
                try:
                    head = os.read(fd, _HEAD)
                finally:
                    os.close(fd)
            except OSError:
                return None
            block = frontmatter_block(head)
            if not _marked_block(block) and not _people_block(block):
                return None
        note = read_note_file(abs_path, rel)
        if note is None:
            return None
        persons = {address for address, field in note.addresses if field in PERSON_FIELDS}
        if not self.disclosure.own_private(rel, note.frontmatter):
            return Marked(named=frozenset(persons)) if persons else None
        sides = _EMAIL_SIDES if note_kind(note.frontmatter) is Kind.EMAIL else _REPLY_SIDES
        people = persons | {address for address, field in note.addresses if field in sides}
        return Marked(frozenset(note.threads), frozenset(people))


_instances: dict[tuple[str, tuple[str, ...]], PrivateMarks] = {}
_instances_lock = threading.Lock()
