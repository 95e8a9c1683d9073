"""The owner's knowledge notes as drafting sees them: the `KnowledgeSource` protocol drafting asks,
the notes it answers with, how one note is read and judged (knowledge, private, or inert: an email
or a draft), and the words and links relatedness is computed from."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from h0.errors import ParseError
from h0.platform.fs import read_head
from h0.vault import control, frontmatter
from h0.vault.disclosure import Disclosure
from h0.vault.layout import (
    APPROVED,
    BRIEFINGS,
    DONE,
    DRAFTS,
    MEMORY_NOTE,
    NEEDS_ACTION,
    OUTBOX,
    PROFILE_NOTE,
    REJECTED,
)
from h0.vault.model import is_mail
from h0.vault.note import content_hash, decode
from h0.vault.paths import folder_key
from h0.vault.person import PersonFacts, person_facts

MAX_READ_BYTES = 256 * 1024  # of a knowledge note: a huge note is known by its head
MAX_TEXT_CHARS = 8_000  # kept per note for prompts (the budget cuts further)
MAX_INDEX_CHARS = 20_000  # of a note's text indexed for relatedness
MAX_KEPT_READS = 1_024  # knowledge notes' answers kept by content hash (KnowledgeReads)
MAX_KEPT_CHARS = 4_000_000  # of their bodies
MIN_TOKEN = 3

# H0's notes at the vault's root: read by their own code, never as the owner's knowledge. An agent's
# proposed change to a control note (`H0_Memory.pending.md`) is not the owner's word either.
CONTROL_NOTES = frozenset(
    {"h0_rules.md", "h0_dashboard.md", PROFILE_NOTE.lower(), MEMORY_NOTE.lower()}
    | {control.pending_name(name).lower() for name in control.CONTROL_NOTES}
)
# H0's mail folders: emails are strangers' words and drafts are H0's; past replies are read
# from Done/ by their own code (h0.drafting.past), never as knowledge notes.
MAIL_FOLDERS = frozenset(folder_key(f) for f in (NEEDS_ACTION, DRAFTS, APPROVED, REJECTED, DONE, OUTBOX, BRIEFINGS))

_LINK = re.compile(r"\[\[([^\[\]|#^\n]+)(?:[#^][^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
WORD = re.compile(r"[^\W_]+", re.UNICODE)
# fmt: off
STOPWORDS = frozenset("""
the and for are but not you your yours our ours all any can had has have her his him its was were will would
shall should could may might must with this that these those from into onto over under about above after
before again then than there their they them what when where which while who whom why how been being
does did doing done just also only very more most much many some such own same each few both other
out off per via let lets get got okay yes hello dear thanks thank regards best cheers please kind
und der die das den dem des ein eine einer eines nicht mit von für auf ist sind wir ihr sie ich bitte
les des une pour pas avec vous nous est sont dans sur que qui merci
""".split())
# fmt: on


def tokens(text: str) -> list[str]:
    """Lower-cased words of 3+ letters or digits, without common words (the relatedness vocabulary)."""
    return [w for w in WORD.findall(text.lower()) if len(w) >= MIN_TOKEN and w not in STOPWORDS]


def link_targets(text: str) -> list[str]:
    """The note names a text links to (`[[Name]]`, `[[Folder/Name|alias]]`, `[[Name#Heading]]`), in order."""
    seen: dict[str, None] = {}
    for match in _LINK.finditer(text):
        target = match.group(1).strip()
        if target:
            seen.setdefault(target, None)
    return list(seen)


@dataclass(frozen=True, slots=True)
class KnowledgeNote:
    """One note of the owner's, as a prompt may show it."""

    path: str
    title: str  # the file name without .md: what a [[link]] to it says
    text: str  # the body (frontmatter left out), cut to MAX_TEXT_CHARS
    frontmatter: Mapping[str, Any] = field(default_factory=dict)  # as written: shown, never asked (`person`)
    links: tuple[str, ...] = ()
    person: PersonFacts = field(init=False, repr=False, compare=False)  # what it says (h0.vault.person)

    def __post_init__(self) -> None:
        object.__setattr__(self, "person", person_facts(self.frontmatter))

    @property
    def link(self) -> str:
        return f"[[{self.title}]]"


@dataclass(frozen=True, slots=True)
class RelatedKnowledge:
    note: KnowledgeNote
    score: float
    why: str
    topic: float = 0.0  # the part of `score` from what the email names (h0.vault.index.about.About.topic)
    direct: bool = False  # found through the email's own people: their address, a link to their People note


@dataclass(frozen=True, slots=True)
class PendingEmail:
    """An email still waiting in Needs_Action/ (what a reply may mention: "I'll answer X next")."""

    path: str
    subject: str
    sender: str
    when: float  # epoch seconds, 0 when unknown

    @property
    def link(self) -> str:
        return f"[[{self.path.rsplit('/', 1)[-1].removesuffix('.md')}]]"


class KnowledgeSource(Protocol):
    """What drafting asks of the vault's knowledge. Private notes are never returned."""

    def notes_for_address(self, address: str) -> list[KnowledgeNote]:
        """Notes about this address (a People note naming it in `email:`, first; then notes mentioning it)."""
        ...

    def related(
        self, text: str, limit: int = 5, exclude: Iterable[str] = (), addresses: Iterable[str] = ()
    ) -> list[RelatedKnowledge]:
        """The notes an email (`text`, its `addresses`) is about, best first, each with why (never private
        ones): its people, their organisation, the notes it names, shared codes and names — never a
        shared common word (h0.vault.index.about)."""
        ...

    def resolve_link(self, target: str) -> KnowledgeNote | None:
        """The note a `[[target]]` names (by path, else by file name), or None (missing or private)."""
        ...

    def is_private(self, path: str) -> bool:
        """True when the note at `path` may never enter a prompt."""
        ...

    def people_around(self, path: str, most: int) -> int:
        """How many People notes link to the note at `path` or are linked from it, counted up to `most`: a
        category ("Clients") or a daily note naming everyone has many around it, a project a few."""
        ...


def mail_folder(rel: str) -> bool:
    """In one of H0's mail folders (or a control note at the root): not the owner's knowledge."""
    parts = rel.split("/")
    if len(parts) == 1:
        return parts[0].lower() in CONTROL_NOTES
    return folder_key(parts[0]) in MAIL_FOLDERS


Knowledge = tuple[str, Mapping[str, Any], str]  # (kind, frontmatter, body): `read_knowledge`'s answer


class KnowledgeReads:
    """The last answers of `read_knowledge`, by path and the content hash of the bytes read: a burst's emails
    from one sender each read their People note, and the same bytes are judged the same (one gate: the
    answer depends on the path, the bytes and the gate's fixed folders). Bounded; thread-safe."""

    def __init__(self, limit: int = MAX_KEPT_READS, chars: int = MAX_KEPT_CHARS) -> None:
        self.limit, self.chars = limit, chars
        self._kept: OrderedDict[str, tuple[str, Knowledge]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, rel: str, digest: str) -> Knowledge | None:
        with self._lock:
            kept = self._kept.get(rel)
        return kept[1] if kept is not None and kept[0] == digest else None

    def keep(self, rel: str, digest: str, answer: Knowledge) -> None:
        with self._lock:
            old = self._kept.pop(rel, None)
            self._size += len(answer[2]) - (len(old[1][2]) if old is not None else 0)
            self._kept[rel] = (digest, answer)
            while self._kept and (len(self._kept) > self.limit or self._size > self.chars):
                self._size -= len(self._kept.popitem(last=False)[1][1][2])


def read_knowledge(root: Path, rel: str, disclosure: Disclosure, reads: KnowledgeReads | None = None) -> Knowledge:
    """(kind, frontmatter, body) of the note at `rel`: kind "knowledge", "private" or "inert" (an email or
    a draft). Only a regular file is opened, without waiting (a FIFO named *.md never holds a call up),
    and only its first MAX_READ_BYTES are read. Raises OSError, H0Error or ValueError when unreadable.
    `reads`: the answers for bytes read before (by content hash), taken instead of parsing them again."""
    data = read_head(root / rel, MAX_READ_BYTES)
    digest = content_hash(data) if reads is not None else ""
    if reads is not None and (known := reads.get(rel, digest)) is not None:
        return known
    parts = frontmatter.split(_decode_head(data, rel))
    fm = frontmatter.load(parts.yaml)
    if disclosure.own_private(rel, fm, parts.body):
        answer: Knowledge = ("private", fm, "")
    elif is_mail(fm):  # an email, received or sent, or a reply draft (h0.vault.model): not the owner's knowledge
        answer = ("inert", fm, "")
    else:
        answer = ("knowledge", fm, parts.body)
    if reads is not None:
        reads.keep(rel, digest, answer)
    return answer


def _decode_head(data: bytes, rel: str) -> str:
    if len(data) < MAX_READ_BYTES:
        return decode(data, rel)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(data) - 4:  # the read ended inside a character
            return data[: exc.start].decode("utf-8")
        raise ParseError(f"The note is not UTF-8 text (bad byte at offset {exc.start}).", path=rel) from None
