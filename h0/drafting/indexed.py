"""`KnowledgeSource` answered by the vault index (h0.vault.index): people by address, related notes
and `[[links]]` in one SQLite look-up each, instead of a stat of every note per call.

The index is kept fresh by a watcher on the whole vault (h0.mcp.live_index.LiveIndex, the vault
server's own), so a People note edited a moment ago counts; each note the index names is then read
from disk (its head, without waiting on a FIFO) and judged by the one disclosure gate
(h0.vault.disclosure) as it is now — a note made private since it was indexed never reaches a
prompt. Notes in H0's mail folders, emails and drafts kept elsewhere are not knowledge.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from h0.drafting.knowledgenotes import (
    MAIL_FOLDERS,
    MAX_INDEX_CHARS,
    MAX_TEXT_CHARS,
    KnowledgeNote,
    KnowledgeReads,
    PendingEmail,
    RelatedKnowledge,
    link_targets,
    mail_folder,
    read_knowledge,
)
from h0.errors import H0Error
from h0.vault.index import VaultIndex
from h0.vault.index.db import VISIBLE
from h0.vault.layout import NEEDS_ACTION
from h0.vault.model import Kind, note_facts
from h0.vault.paths import NOTE_SUFFIX, link_key

MAX_PENDING_READ = 4096  # index rows kept read as pending emails (or as not one), by path and frontmatter
PENDING = ("pending", "needs_info", "awaiting_approval")  # the status words of an email still waiting
_UNREAD = object()


def _pending_email(path: str, raw: str) -> PendingEmail | None:
    """An index row (path, frontmatter JSON) as an email still waiting for an answer, or None."""
    try:
        fm = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(fm, dict):
        return None
    facts = note_facts(path, fm)
    if facts.kind is not Kind.EMAIL or (facts.status.word or "pending") not in PENDING:
        return None
    return PendingEmail(path, facts.subject, facts.sender_text, facts.received or 0.0)


class IndexKnowledge:
    """The owner's knowledge notes, found through the vault index (thread-safe, like the index)."""

    def __init__(self, index: VaultIndex, watched: Callable[[], bool] | None = None) -> None:
        self.index = index
        self.watched = watched  # True while a watcher of its own keeps the index fresh (the vault server's)
        self.root = Path(index.root)
        self.privacy = index.disclosure  # the gate the index answers with
        self.problems: dict[str, str] = {}  # path -> why it could not be read (shown by draft_context)
        self._pending: dict[tuple[str, str], PendingEmail | object | None] = {}  # `pending`'s rows, read
        self._reads = KnowledgeReads()  # a People note each email of a burst from its person reads: parsed once

    def changed(self, path: str | None) -> None:
        """A watcher's report: this note (absolute path) changed, or any may have (None)."""
        if path is None:
            self.index.everything_changed()
        else:
            self.index.changed([path])

    def freshen(self, *, fed: bool) -> None:
        """Before a context is assembled: unless a watcher reports every change (`fed`), compare the
        vault with the index (a stat of each note; `h0 sweep`, a polling watcher, an MCP call)."""
        if not fed and not (self.watched is not None and self.watched()):
            self.index.everything_changed()

    def notes_for_address(self, address: str) -> list[KnowledgeNote]:
        notes = (
            self._note(rel) for rel in self.index.notes_for_address(address, skip_folders=MAIL_FOLDERS, wait=False)
        )
        return [note for note in notes if note is not None]

    def related(
        self, text: str, limit: int = 5, exclude: Iterable[str] = (), addresses: Iterable[str] = ()
    ) -> list[RelatedKnowledge]:
        skip = set(exclude)
        found: list[RelatedKnowledge] = []
        for hit in self.index.about(
            text=text[:MAX_INDEX_CHARS],
            addresses=list(addresses),
            skip_folders=MAIL_FOLDERS,
            limit=limit * 2 + 10,
            wait=False,  # each note is read from disk and judged as it is now: a burst of writes need not be awaited
        ):
            if hit.path in skip or mail_folder(hit.path):
                continue
            note = self._note(hit.path)
            if note is None:
                continue
            found.append(RelatedKnowledge(note, round(hit.score, 2), "; ".join(hit.why[:3]), hit.topic, hit.direct))
            if len(found) >= limit:
                break
        return found

    def pending(self, addresses: Iterable[str], exclude: Iterable[str] = (), limit: int = 5) -> list[PendingEmail]:
        """Other emails from these people still waiting in Needs_Action/ (newest first): a reply may
        want to answer them together, or say they are next."""
        wanted = sorted({a.strip().lower() for a in addresses if a and "@" in a})
        if not wanted:
            return []
        skip = set(exclude)
        # Private ones never: the gate's answer as the index keeps it (VISIBLE: marks, folder, person, thread).
        self.index.sync(wait=False)
        rows = self.index.db.rows(  # newest first, bounded (a sender may have hundreds waiting): ids sorted, then read
            "SELECT path, frontmatter FROM docs WHERE id IN (SELECT addresses.doc FROM addresses "
            "JOIN docs ON docs.id = addresses.doc "
            f"WHERE addresses.address IN ({','.join('?' * len(wanted))}) AND addresses.field = 'from' "
            f"AND addresses.folder = ? AND {VISIBLE} ORDER BY addresses.doc DESC LIMIT ?) ORDER BY id DESC",
            (*wanted, NEEDS_ACTION.lower(), limit + len(skip) + 5),
        )
        found: list[PendingEmail] = []
        for path, raw in rows:
            # The index is synced without waiting behind another thread's sync: an email filed since is gone.
            if path in skip or not (self.root / path).is_file():
                continue
            # A burst's emails from one sender all ask for the same few rows: each row is read once.
            email = self._pending.get((path, raw), _UNREAD)
            if email is _UNREAD:
                email = _pending_email(path, raw)
                if len(self._pending) >= MAX_PENDING_READ:
                    self._pending.clear()
                self._pending[(path, raw)] = email
            if isinstance(email, PendingEmail):
                found.append(email)
        return sorted(found, key=lambda e: (-e.when, e.path))[:limit]

    def resolve_link(self, target: str) -> KnowledgeNote | None:
        name = target.strip().replace("\\", "/").removesuffix(NOTE_SUFFIX)
        if "/" in name:
            note = self._note(name + NOTE_SUFFIX)
            if note is not None:
                return note
        rows = self.index.db.rows(
            f"SELECT path FROM docs WHERE name = ? AND {VISIBLE} "
            "ORDER BY length(path) - length(replace(path, '/', '')), path LIMIT 5",
            (link_key(name),),
        )
        for (rel,) in rows:
            note = self._note(str(rel))
            if note is not None:
                return note
        return None

    def is_private(self, path: str) -> bool:
        return self.privacy.never(path) or self.index.is_private(path)

    def people_around(self, path: str, most: int) -> int:
        rows = self.index.db.rows(  # a count of notes, private ones too: nothing of theirs is shown
            "SELECT COUNT(*) FROM (SELECT docs.id FROM links JOIN docs ON docs.id = links.doc "
            "WHERE links.target = ? AND docs.person = 1 UNION SELECT docs.id FROM links "
            "JOIN docs ON docs.name = links.target WHERE links.doc = (SELECT id FROM docs WHERE path = ?) "
            "AND docs.person = 1 LIMIT ?)",
            (link_key(path), path, most),
        )
        return int(rows[0][0]) if rows else 0

    def _note(self, rel: str) -> KnowledgeNote | None:
        """The note at `rel` as a prompt may show it, judged now; None for private, mail or unreadable ones."""
        if self.privacy.never(rel) or mail_folder(rel):
            return None  # `private: true` is judged below, on the note as it is now
        try:
            kind, fm, body = read_knowledge(self.root, rel, self.privacy, self._reads)
        except (OSError, H0Error, ValueError) as exc:
            self.problems[rel] = exc.message if isinstance(exc, H0Error) else str(exc)
            return None
        self.problems.pop(rel, None)
        if kind != "knowledge":
            return None
        title = rel.rsplit("/", 1)[-1].removesuffix(NOTE_SUFFIX)
        return KnowledgeNote(rel, title, body[:MAX_TEXT_CHARS].strip(), fm, tuple(link_targets(body[:MAX_INDEX_CHARS])))
