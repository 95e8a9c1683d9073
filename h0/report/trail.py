"""One note's trail (`h0 log NOTE`): its events in time order, found by what they share.

Events are linked by idempotency keys, Message-IDs, provider ids, and paths. A path is reused over
time (the next `Approved/followup.md` is another note), so a draft's or an email's name starts a new
*generation* once H0 files it; a note renamed on filing (`name (2).md`) is followed through
`email_filed`. Ancestry (the email a draft answers: ingest, triage) is one hop across the events
that link an email to a draft, so a second reply to the same email is not shown.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h0.errors import H0Error
from h0.report.logread import ALL_TIME, STREAMS, LogReader, TimeRange, UsageError, plain
from h0.vault import Vault
from h0.vault.layout import APPROVED, DRAFTS, LOGS, NEEDS_ACTION, NOTE_FOLDERS, REJECTED
from h0.vault.paths import PathResolver
from h0.vault.values import source_path

_DRAFT_FOLDERS = (DRAFTS, APPROVED, REJECTED)  # the human moves a draft between these keeping its name

# Events that link an email to a draft: (fields naming the email, fields naming the draft).
# They are followed one hop only, so the trail of one reply never pulls in its siblings.
_BRIDGES = {
    "triage_decision": (("note",), ("draft",)),
    "source_filed": (("path", "done_path"), ("reply",)),
    "draft_created": (("reply_to_message_id",), ("path",)),
}
_IDS = {
    "idempotency_key": "key",
    "rfc822_message_id": "rfc",
    "provider_message_id": "pid",
    "message_id": "pid",
    "reply_to_message_id": "pid",
    "gmail_message_id": "pid",
}
_PATHS = ("path", "note", "note_path", "done_path", "destination", "returned_to", "failed_path", "draft", "reply")
# After these, a name in Drafts/, Approved/, Rejected/ or Needs_Action/ belongs to the next note.
_ENDS = {
    "email_filed": "path",
    "draft_rejected": "path",
    "email_delivery_failed": "path",
    "source_filed": "path",
    "copy_filed": "path",
    "send_outcome_unknown": "path",
}

# ('key' | 'rfc' | 'pid' | 'path', value), or ('draft' | 'email', name, generation) for a reused name.
Node = tuple[str, str] | tuple[str, str, int]


def _name_key(path: str) -> tuple[str, str] | None:
    """('draft', name) or ('email', name) for a path whose name is reused over time; None otherwise."""
    folder, _, name = path.rpartition("/")
    if folder in _DRAFT_FOLDERS:
        return ("draft", name)
    if folder == NEEDS_ACTION:
        return ("email", name)
    return None


class _Graph:
    """Union-find over the ids events carry; names get a generation that ends when H0 files the note."""

    def __init__(self) -> None:
        self.parent: dict[Node, Node] = {}
        self.gen: dict[tuple[str, str], int] = {}
        self.items: list[tuple[dict[str, Any], list[Node], list[Node] | None]] = []

    def find(self, node: Node) -> Node:
        root = node
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[node] != root:
            self.parent[node], node = root, self.parent[node]
        return root

    def _union(self, nodes: list[Node]) -> None:
        for node in nodes:
            self.parent.setdefault(node, node)
        for node in nodes[1:]:
            a, b = self.find(nodes[0]), self.find(node)
            if a != b:
                self.parent[b] = a

    def path_node(self, path: str, gen: int | None = None) -> Node:
        key = _name_key(path)
        if key is None:
            return ("path", path)
        return (*key, self.gen.get(key, 0) if gen is None else gen)

    def nodes(self, record: dict[str, Any], fields: Iterable[str]) -> list[Node]:
        found: list[Node] = []
        for name in fields:
            value = record.get(name)
            if not isinstance(value, str) or not value.strip():
                continue
            if name in _IDS:
                found.append((_IDS[name], value.strip()))
            else:
                found.append(self.path_node(value.strip()))
        return found

    def add(self, record: dict[str, Any]) -> None:
        event = record["event"]
        email, draft = (self.nodes(record, side) for side in _BRIDGES.get(event, ((), ())))
        if email and draft:
            self._union(email)
            self._union(draft)
            self.items.append((record, email, draft))
        else:
            fields = [*_IDS, *_PATHS, *(("source",) if event == "note_moved" else ())]
            nodes = self.nodes(record, fields)
            self._union(nodes)
            if nodes:
                self.items.append((record, nodes, None))
        ended = _ENDS.get(event) or (
            "note" if event == "triage_decision" and record.get("decision") == "archive" else None
        )
        key = _name_key(str(record.get(ended) or "")) if ended else None
        if key is not None:
            self.gen[key] = self.gen.get(key, 0) + 1

    def latest(self, path: str) -> Node | None:
        """The newest generation of a reused name that has events, or the node of a unique path."""
        key = _name_key(path)
        if key is None:
            node = ("path", path)
            return node if node in self.parent else None
        for gen in range(self.gen.get(key, 0), -1, -1):
            if (*key, gen) in self.parent:
                return (*key, gen)
        return None


@dataclass
class Trail:
    asked: str
    title: str
    events: list[dict[str, Any]]  # oldest first
    hidden: int = 0  # vault-server writes and moves, and the handler's copy of email_sent
    others: list[str] = field(default_factory=list)  # other notes that had the same name
    skipped: int = 0


def note_target(root: Path, text: str) -> tuple[str | None, str]:
    """(folder or None, file name) for a NOTE argument: `Done/x.md`, `x`, `x.md` or `[[x]]`."""
    name = text.strip()
    if name.startswith("[[") and name.endswith("]]"):
        name = name[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
    if not name or "\x00" in name:
        raise UsageError("NOTE is empty: give a note's path or name (Done/x.md, x, [[x]])")
    is_path = "/" in name or "\\" in name or name in (".", "..")
    if not name.lower().endswith(".md") and name not in (".", ".."):
        name += ".md"
    if not is_path:
        return None, name
    try:
        rel = PathResolver(root).resolve(name.replace("\\", "/")).rel
    except H0Error as exc:
        raise UsageError(f"NOTE {plain(text, 80)!r} is not a note inside the vault: {exc.message}") from None
    folder, _, base = rel.rpartition("/")
    return folder or None, base


def trace_note(root: Path, note: str, window: TimeRange = ALL_TIME, *, everything: bool = False) -> Trail:
    """One note's events in time order (empty `events` if the logs know nothing of it)."""
    folder, name = note_target(Path(root), note)
    reader = LogReader(Path(root) / LOGS, window)
    records = [r for stream in STREAMS for r in reader.records(stream)]
    records.sort(key=lambda r: r["at"])  # stable: each file's own order is kept on ties
    graph = _Graph()
    for record in records:
        graph.add(record)
    vault = Vault(Path(root))

    candidates: list[tuple[str, set[Node], set[Node]]] = []  # (path, own nodes, one-hop nodes)
    paths = [f"{folder}/{name}"] if folder else [f"{f}/{name}" for f in NOTE_FOLDERS]
    for path in paths:
        exists = vault.exists(path)
        if not exists and not folder:
            continue
        own, hop = _frontmatter_seeds(vault, path, graph) if exists else (set(), set())
        key = _name_key(path)
        node = graph.path_node(path) if exists and key else graph.latest(path)
        if node is not None:
            own.add(node)
        candidates.append((path, own, hop))
    if not folder:  # every note that ever had this name
        wanted = name.casefold()
        for node in list(graph.parent):
            base = node[1].rpartition("/")[2] if node[0] == "path" else node[1] if node[0] in ("draft", "email") else ""
            if base.casefold() == wanted:
                candidates.append((node[1] if node[0] == "path" else name, {node}, set()))

    chosen: dict[Node, tuple[str, set[Node], set[Node]]] = {}
    for path, own, hop in candidates:
        comps = frozenset(graph.find(n) for n in own if n in graph.parent)
        hops = {graph.find(n) for n in hop if n in graph.parent}
        if not comps and not hops:
            continue
        first = min(comps or hops)
        merged = chosen.setdefault(first, (path, set(), set()))
        merged[1].update(comps)
        merged[2].update(hops)
    groups = list(chosen.values())
    if not groups:
        return Trail(plain(note, 120), plain(note, 120), [], skipped=reader.skipped)
    selections = [(_select(graph, own, hop), path) for path, own, hop in groups]
    selections.sort(key=lambda s: s[0][-1][0]["at"] if s[0] else dt.datetime.min.replace(tzinfo=dt.UTC))
    picked, asked_path = selections[-1]
    title = _title(picked, asked_path)
    others = {_title(e, p) for e, p in selections[:-1] if e} - {title}
    shown, hidden = _visible([record for record, _ in picked], everything)
    return Trail(plain(note, 120), title, shown, hidden, sorted(others), reader.skipped)


def _frontmatter_seeds(vault: Vault, path: str, graph: _Graph) -> tuple[set[Node], set[Node]]:
    try:
        note = vault.read_note(path)
    except H0Error:
        return set(), set()
    facts = note.facts
    ids = {  # the note's own names
        "rfc822_message_id": facts.rfc822_message_id,
        "message_id": facts.message_id,
        "idempotency_key": facts.idempotency_key,
        "gmail_message_id": facts.gmail_message_id,
    }
    own: set[Node] = {(_IDS[k], value) for k, value in ids.items() if value}
    hop: set[Node] = set()
    if facts.reply_to_message_id:
        hop.add((_IDS["reply_to_message_id"], facts.reply_to_message_id))
    # The email a draft answers, and the draft an email was answered with: links in any spelling (h0.vault.values).
    answered = (facts.follow_up_marks.draft, facts.follow_up_marks.replied_with)
    for link in (facts.source, *(source_path(value) for value in answered)):
        node = graph.latest(link) if link else None
        if node is not None:
            hop.add(node)
    return own, hop


def _select(graph: _Graph, own: set[Node], hop: set[Node]) -> list[tuple[dict[str, Any], bool]]:
    """(event, about the note itself) for the note's own components, the bridges touching them,
    and one hop beyond: the email a draft answers, or the drafts answering an email."""
    hops = set(hop)
    picked: list[tuple[int, dict[str, Any], bool]] = []
    for index, (record, nodes, other) in enumerate(graph.items):
        if other is None:
            continue
        email, draft = graph.find(nodes[0]), graph.find(other[0])
        if email in own or draft in own:
            picked.append((index, record, email in own))
            hops.update(side for side in (email, draft) if side not in own)
    for index, (record, nodes, other) in enumerate(graph.items):
        if other is None and (graph.find(nodes[0]) in own or graph.find(nodes[0]) in hops):
            picked.append((index, record, graph.find(nodes[0]) in own))
    picked.sort(key=lambda p: p[0])
    return [(record, mine) for _, record, mine in picked]


_FILED_AS = {
    "email_filed": "done_path",
    "draft_rejected": "done_path",
    "email_delivery_failed": "failed_path",
    "source_filed": "done_path",
    "copy_filed": "done_path",
    "send_outcome_unknown": "done_path",
    "send_refused": "returned_to",
    "send_held": "returned_to",
    "note_moved": "destination",
}


def _title(events: list[tuple[dict[str, Any], bool]], asked: str) -> str:
    """Where the note is now, as far as the log knows: its last move, else the path asked about."""
    for record, mine in reversed(events):
        value = record.get(_FILED_AS.get(record["event"], ""))
        if mine and isinstance(value, str) and value:
            return value
    return asked


def _visible(events: list[dict[str, Any]], everything: bool) -> tuple[list[dict[str, Any]], int]:
    if everything:
        return events, 0
    confirmed = {
        r.get("rfc822_message_id") for r in events if r["event"] == "email_sent" and r["stream"] == "gmail_mcp"
    }
    shown = [
        r
        for r in events
        if not (r["stream"] == "vault_mcp" and r.get("severity") in ("debug", "info"))
        and not (
            r["event"] == "email_sent"
            and r["stream"] == "h0"
            and not r.get("already_sent")
            and r.get("rfc822_message_id") in confirmed
        )
    ]
    return shown, len(events) - len(shown)
