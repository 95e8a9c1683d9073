"""The owner's knowledge in the vault, found by a scan of its files: `VaultKnowledge`.

Drafting needs three answers from the vault: the notes about an address (the sender's People
note), the notes most related to a text (ranked, with why), and the note a `[[link]]` names.
`KnowledgeSource` (h0.drafting.knowledgenotes) is that protocol; `VaultKnowledge` implements it by keeping a catalogue of
the vault's knowledge notes (every note outside H0's mail folders that is not an email, not
private and not under Logs/ or a hidden folder), refreshed on each call:

- a folder whose modification time changed (a note added, removed or renamed) is listed again;
- every knowledge and private note is stat'ed, and re-read when its size or time changed, so
  an edit of a People note (or `private: true` added to it) counts at once;
- email notes outside the mail folders (an `Archive/`) are not stat'ed each time: they are
  looked at again when their folder changes and at a full rescan every FULL_RESCAN_SECONDS.

The vault index (ARCHITECTURE.md: full text + people + related notes kept fresh by events)
answers the same protocol without the per-call stats; it replaces this class once merged.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from h0.drafting.knowledgenotes import (
    MAX_INDEX_CHARS,
    MAX_TEXT_CHARS,
    KnowledgeNote,
    RelatedKnowledge,
    link_targets,
    mail_folder,
    read_knowledge,
)
from h0.errors import H0Error
from h0.vault.disclosure import Disclosure
from h0.vault.index.about import MAX_ORGANISATION, organisations, rank
from h0.vault.index.entities import note_keys, phrases, text_entities
from h0.vault.paths import NOTE_SUFFIX, folder_key, link_key
from h0.vault.values import ADDRESS

FULL_RESCAN_SECONDS = 300.0


@dataclass(slots=True)
class _Entry:
    kind: str  # "knowledge", "private", "inert" (an email, a draft, unreadable)
    mtime_ns: int
    size: int
    note: KnowledgeNote | None = None
    addresses: frozenset[str] = frozenset()  # named in the frontmatter
    mentioned: frozenset[str] = frozenset()  # found in the body
    keys: tuple[tuple[str, str], ...] = ()  # what the note is about (h0.vault.index.entities.note_keys)


class VaultKnowledge:
    """`KnowledgeSource` over a scan of the vault's files (thread-safe; one per vault and process)."""

    def __init__(self, root: Path, disclosure: Disclosure | None = None) -> None:
        self.root = Path(root)
        self.privacy = disclosure if disclosure is not None else Disclosure.for_vault(self.root)
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._folders: dict[str, tuple[int, list[str], list[str]]] = {}  # rel -> (mtime_ns, notes, subfolders)
        self._by_address: dict[str, list[str]] = {}
        self._by_title: dict[str, list[str]] = {}
        self._by_path: dict[str, str] = {}
        self._by_key: dict[str, list[tuple[str, str]]] = {}  # entity key -> [(path, kind)]
        self._by_domain: dict[str, list[str]] = {}  # a People note's address domain -> paths
        self._backlinks: dict[str, list[str]] = {}  # link_key of a [[target]] -> paths linking to it
        self._knowledge = 0
        self._last_full = 0.0
        self._dirty = True
        self.problems: dict[str, str] = {}  # path -> why it could not be read (shown by draft_context)

    # ------------------------------------------------------------------ protocol

    def notes_for_address(self, address: str) -> list[KnowledgeNote]:
        self.refresh()
        key = address.strip().lower()
        with self._lock:
            paths = list(self._by_address.get(key, ()))
            strong = [p for p in paths if key in self._entries[p].addresses]
            weak = [p for p in paths if p not in strong]
            notes = (self._entries[p].note for p in strong + weak)
            return [note for note in notes if note is not None]

    def related(
        self, text: str, limit: int = 5, exclude: Iterable[str] = (), addresses: Iterable[str] = ()
    ) -> list[RelatedKnowledge]:
        """The notes the email is about, by the index's own rule (h0.vault.index.about.rank)."""
        self.refresh()
        text = text[:MAX_INDEX_CHARS]
        entities = text_entities(text)
        keys = phrases(text) | entities
        wanted = [a.strip().lower() for a in addresses if a and "@" in a]
        domains = set(organisations(wanted))
        skip = set(exclude)
        with self._lock:
            people = [
                (path, wanted_address in self._entries[path].addresses, wanted_address)
                for wanted_address in wanted
                for path in self._by_address.get(wanted_address, ())
            ]
            colleagues = [
                (path, domain)
                for domain in sorted(domains)
                for path in self._by_domain.get(domain, [])[:MAX_ORGANISATION]
            ]
            named = sorted({link_key(path) for path, about, _ in people if about})
            backlinks = [(path, name) for name in named for path in self._backlinks.get(name, ())]
            rows = [(path, key, kind) for key in keys for path, kind in self._by_key.get(key, ())]
            ranked = rank(people, colleagues, backlinks, rows, entities, self._knowledge, limit + len(skip))
            results: list[RelatedKnowledge] = []
            for hit in ranked:
                entry = self._entries.get(hit.path)
                if hit.path in skip or entry is None or entry.note is None:
                    continue
                results.append(
                    RelatedKnowledge(entry.note, round(hit.score, 2), "; ".join(hit.why[:3]), hit.topic, hit.direct)
                )
                if len(results) >= limit:
                    break
            return results

    def resolve_link(self, target: str) -> KnowledgeNote | None:
        self.refresh()
        name = target.strip().removesuffix(NOTE_SUFFIX)
        with self._lock:
            path = self._by_path.get(folder_key(name + NOTE_SUFFIX))
            if path is None:
                candidates = self._by_title.get(folder_key(name.rsplit("/", 1)[-1]), [])
                path = min(candidates, key=lambda p: (p.count("/"), p)) if candidates else None
            entry = self._entries.get(path) if path else None
            return entry.note if entry is not None and entry.kind == "knowledge" else None

    def is_private(self, path: str) -> bool:
        if self.privacy.never(path):
            return True
        self.refresh()
        with self._lock:
            entry = self._entries.get(path)
        return entry is not None and entry.kind == "private"

    def people_around(self, path: str, most: int) -> int:
        """As the catalogue was last brought up to date (the context's look-ups just did)."""
        with self._lock:
            around = {p for p in self._backlinks.get(link_key(path), ()) if self._person(p)}
            entry = self._entries.get(path)
            for target in entry.note.links if entry is not None and entry.note is not None else ():
                if len(around) >= most:
                    break
                around.update(p for p in self._by_title.get(folder_key(link_key(target)), ()) if self._person(p))
        return min(len(around), most)

    def _person(self, rel: str) -> bool:
        entry = self._entries.get(rel)
        return entry is not None and bool(entry.addresses)

    # ------------------------------------------------------------------ the catalogue

    def refresh(self) -> None:
        """Bring the catalogue up to date with the files (see the module's docstring for what is looked at)."""
        with self._lock:
            now = time.monotonic()
            full = now - self._last_full > FULL_RESCAN_SECONDS
            if full:
                self._last_full = now
            seen: set[str] = set()
            self._walk("", seen, full)
            for rel in [r for r in self._entries if r not in seen]:
                self._forget(rel)
            if self._dirty:
                self._rebuild_names()

    def _walk(self, rel: str, seen: set[str], full: bool) -> None:
        folder = self.root / rel if rel else self.root
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            self._folders.pop(rel, None)
            return
        cached = self._folders.get(rel)
        listed = cached is None or cached[0] != mtime or full
        if listed:
            notes, subfolders = self._list(folder, rel)
            self._folders[rel] = (mtime, notes, subfolders)
        else:
            assert cached is not None
            _, notes, subfolders = cached
        for note in notes:
            seen.add(note)
            entry = self._entries.get(note)
            if entry is None or listed or entry.kind != "inert":
                self._look(note, entry)
        for sub in subfolders:
            self._walk(sub, seen, full)

    def _list(self, folder: Path, rel: str) -> tuple[list[str], list[str]]:
        notes: list[str] = []
        subfolders: list[str] = []
        prefix = f"{rel}/" if rel else ""
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    child = prefix + entry.name
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if not self.privacy.never(child) and not mail_folder(child + "/x"):
                                subfolders.append(child)
                        elif (
                            entry.name.endswith(NOTE_SUFFIX)
                            and entry.is_file(follow_symlinks=False)
                            and not mail_folder(child)
                            and not self.privacy.never(child)
                        ):
                            notes.append(child)
                    except OSError:
                        continue
        except OSError:
            pass
        return notes, subfolders

    def _look(self, rel: str, entry: _Entry | None) -> None:
        try:
            st = os.stat(self.root / rel, follow_symlinks=False)
        except OSError:
            self._forget(rel)
            return
        if entry is not None and entry.mtime_ns == st.st_mtime_ns and entry.size == st.st_size:
            return
        if entry is not None:
            self._forget(rel)
        self._add(rel, self._read(rel, st))

    def _read(self, rel: str, st: os.stat_result) -> _Entry:
        try:
            kind, fm, body = read_knowledge(self.root, rel, self.privacy)
        except (OSError, H0Error, ValueError) as exc:
            self.problems[rel] = exc.message if isinstance(exc, H0Error) else str(exc)
            return _Entry("inert", st.st_mtime_ns, st.st_size)
        self.problems.pop(rel, None)
        if kind != "knowledge":
            return _Entry(kind, st.st_mtime_ns, st.st_size)
        title = rel.rsplit("/", 1)[-1].removesuffix(NOTE_SUFFIX)
        note = KnowledgeNote(rel, title, body[:MAX_TEXT_CHARS].strip(), fm, tuple(link_targets(body[:MAX_INDEX_CHARS])))
        addresses = note.person.own_addresses
        mentioned = frozenset(a.lower() for a in ADDRESS.findall(body[:MAX_INDEX_CHARS])) - addresses
        # every value of the note, as written, is text its look-up keys are made of (no key decides anything)
        meta = "\n".join(str(v) for v in fm.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool))
        keys = tuple(note_keys(title, list(note.person.aliases), meta, body[:MAX_INDEX_CHARS]))
        return _Entry("knowledge", st.st_mtime_ns, st.st_size, note, addresses, mentioned, keys)

    def _add(self, rel: str, entry: _Entry) -> None:
        self._entries[rel] = entry
        if entry.kind != "knowledge":
            return
        self._knowledge += 1
        for key, kind in entry.keys:
            self._by_key.setdefault(key, []).append((rel, kind))
        for domain in {a.rsplit("@", 1)[1] for a in entry.addresses}:
            self._by_domain.setdefault(domain, []).append(rel)
        for target in {link_key(t) for t in (entry.note.links if entry.note else ())}:
            self._backlinks.setdefault(target, []).append(rel)
        for address in entry.addresses | entry.mentioned:
            self._by_address.setdefault(address, []).append(rel)
        self._dirty = True

    def _forget(self, rel: str) -> None:
        entry = self._entries.pop(rel, None)
        if entry is None or entry.kind != "knowledge":
            return
        self._knowledge -= 1
        for key, kind in entry.keys:
            _drop(self._by_key, key, (rel, kind))
        for domain in {a.rsplit("@", 1)[1] for a in entry.addresses}:
            _drop(self._by_domain, domain, rel)
        for target in {link_key(t) for t in (entry.note.links if entry.note else ())}:
            _drop(self._backlinks, target, rel)
        for address in entry.addresses | entry.mentioned:
            paths = self._by_address.get(address)
            if paths and rel in paths:
                paths.remove(rel)
                if not paths:
                    del self._by_address[address]
        self._dirty = True

    def _rebuild_names(self) -> None:
        self._by_title.clear()
        self._by_path.clear()
        for rel, entry in self._entries.items():
            if entry.kind == "knowledge" and entry.note is not None:
                self._by_title.setdefault(folder_key(entry.note.title), []).append(rel)
                self._by_path[folder_key(rel)] = rel
        self._dirty = False


def _drop(table: dict[str, list[Any]], key: str, value: Any) -> None:
    holders = table.get(key)
    if holders is not None and value in holders:
        holders.remove(value)
        if not holders:
            del table[key]
