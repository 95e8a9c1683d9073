"""`h0 log`: what H0 sent, and one note's trail from ingest to filing, read from `Logs/*.jsonl`.

Two questions, both answered from the audit streams (`h0`, `gmail_mcp`, `vault_mcp`; one file
per stream and UTC day, so a date range opens only the files it covers):

- `list_sends` — every message the mail server sent (its `email_sent`), joined by Message-ID
  with its pre-send record (recipients, subject) and by idempotency key with H0's filing
  (`email_filed`: where the note is now). Oldest first, so the newest is next to the prompt.
- `trace_note` — one note's events in time order. Events are linked by what they share:
  idempotency keys, Message-IDs, provider ids, and paths. A path is reused over time (the
  next `Approved/followup.md` is another note), so a draft's or an email's name starts a new
  *generation* once H0 files it; a note renamed on filing (`name (2).md`) is followed through
  `email_filed`. Ancestry (the email a draft answers: ingest, triage) is one hop across the
  events that link an email to a draft, so a second reply to the same email is not shown.

Everything printed from a log passes through `plain()`: subjects and names come from strangers
and must not reach a terminal with control characters. A line that is not a JSON record is
skipped and counted.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h0.mail.recipients import describe_recipients, recipient_lists
from h0.printable import printable
from h0.vault.layout import APPROVED, DRAFTS, LOGS, NEEDS_ACTION, NOTE_FOLDERS, REJECTED

STREAMS = ("h0", "gmail_mcp", "vault_mcp")
_FILE = re.compile(r"^(h0|gmail_mcp|vault_mcp)_(\d{4}-\d{2}-\d{2})\.jsonl$")
_DRAFT_FOLDERS = (DRAFTS, APPROVED, REJECTED)  # the human moves a draft between these keeping its name


class UsageError(ValueError):
    """A bad argument: the CLI prints it and exits 2."""


def plain(value: object, limit: int = 200) -> str:
    """Text from a log made safe for a terminal, one line (h0.printable: controls, line breaks and
    format characters are shown escaped, never obeyed)."""
    return printable(value, limit)


def local_time(stamp: str, *, ms: bool = False) -> str:
    when = _parse_time(stamp)
    if when is None:
        return plain(stamp, 30) or "?"
    text = when.astimezone().strftime("%Y-%m-%d %H:%M:%S.%f" if ms else "%Y-%m-%d %H:%M")
    return text[:-3] if ms else text


def _parse_time(stamp: object) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


# ------------------------------------------------------------------------------- time window


@dataclass(frozen=True)
class Window:
    """[since, until) in UTC; None is open."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None

    def holds(self, when: dt.datetime) -> bool:
        return (self.since is None or when >= self.since) and (self.until is None or when < self.until)

    def covers_day(self, day: dt.date, *, extra_days: int = 0) -> bool:
        start = dt.datetime.combine(day, dt.time(), dt.UTC)
        end = start + dt.timedelta(days=1)
        until = self.until + dt.timedelta(days=extra_days) if self.until else None
        return (self.since is None or end > self.since) and (until is None or start < until)

    def describe(self) -> str:
        if self.since is None and self.until is None:
            return ""
        start = local_time(self.since.isoformat()) if self.since else "the start"
        end = local_time(self.until.isoformat()) if self.until else "now"
        return f" from {start} to {end}"


def _local_moment(text: str, what: str) -> tuple[dt.datetime, bool]:
    """A local date or date-time; True if it was a bare date."""
    try:
        if len(text) == 10:
            return dt.datetime.combine(dt.date.fromisoformat(text), dt.time()).astimezone(), True
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{what} {plain(text, 40)!r} is not a date: use YYYY-MM-DD (or YYYY-MM-DDTHH:MM)") from None
    return (moment if moment.tzinfo else moment.astimezone()), False


def make_window(since: str | None = None, until: str | None = None, *, today: bool = False,
                days: int | None = None, now: dt.datetime | None = None) -> Window:
    """The window the options ask for; dates are local, `--until` includes its whole day."""
    now = now or dt.datetime.now().astimezone()
    if [bool(since), today, days is not None].count(True) > 1:
        raise UsageError("use one of --since, --today and --days")
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    if today:
        start = dt.datetime.combine(now.date(), dt.time()).astimezone()
    elif days is not None:
        if days < 1:
            raise UsageError("--days takes a number of days, 1 or more")
        start = now - dt.timedelta(days=days)
    elif since:
        start, _ = _local_moment(since, "--since")
    if until:
        end, whole_day = _local_moment(until, "--until")
        if whole_day:
            end = (end.replace(tzinfo=None) + dt.timedelta(days=1)).astimezone()
    if start and end and start >= end:
        raise UsageError("--since must come before --until")
    return Window(start.astimezone(dt.UTC) if start else None, end.astimezone(dt.UTC) if end else None)


# ------------------------------------------------------------------------------- reading


@dataclass
class LogReader:
    """Streams records from the audit files of a window; counts lines that are not records."""

    logs_dir: Path
    window: Window = field(default_factory=Window)
    skipped: int = 0

    def files(self, stream: str, *, extra_days: int = 0) -> list[Path]:
        try:
            names = sorted(p.name for p in self.logs_dir.iterdir())
        except OSError:
            return []
        found = []
        for name in names:
            match = _FILE.match(name)
            if match and match[1] == stream:
                try:
                    day = dt.date.fromisoformat(match[2])
                except ValueError:
                    continue
                if self.window.covers_day(day, extra_days=extra_days):
                    found.append(self.logs_dir / name)
        return found

    def records(self, stream: str, events: Iterable[str] | None = None, *, extra_days: int = 0,
                whole_days: bool = False) -> Iterator[dict[str, Any]]:
        """Records of `stream` (with `stream` and `at`, the parsed time, added), oldest file first.

        With `events`, only lines that mention one are parsed (the rest are skipped unparsed,
        counted only if they do not even look like a record). `whole_days` yields every record
        of the files read, not only those inside the window."""
        needles = [f'"event": "{e}"'.encode() for e in events] if events is not None else None
        for path in self.files(stream, extra_days=extra_days):
            try:
                handle = path.open("rb")
            except OSError:
                continue
            with handle:
                for raw in handle:
                    line = raw.strip()
                    if not line:
                        continue
                    if needles is not None and not any(n in line for n in needles):
                        if not (line.startswith(b"{") and line.endswith(b"}")):
                            self.skipped += 1
                        continue
                    record = self._parse(line)
                    if record is None:
                        self.skipped += 1
                        continue
                    if whole_days or self.window.holds(record["at"]):
                        record["stream"] = stream
                        yield record

    @staticmethod
    def _parse(line: bytes) -> dict[str, Any] | None:
        try:
            record = json.loads(line)
        except ValueError:  # UnicodeDecodeError is one
            return None
        if not isinstance(record, dict) or not isinstance(record.get("event"), str):
            return None
        when = _parse_time(record.get("timestamp"))
        if when is None:
            return None
        record["at"] = when
        return record


# ------------------------------------------------------------------------------- what was sent


@dataclass
class Send:
    sent_at: str
    to: str
    subject: str
    note: str | None            # where the note is filed now (Done/…), else where it was sent from
    filed: bool
    provider_message_id: str | None
    rfc822_message_id: str | None
    idempotency_key: str | None
    backend: str | None
    cc: str | None
    bcc: str | None
    sent_from: str | None         # the path in Approved/ it was sent from
    at: dt.datetime = field(repr=False)
    note_exists: bool | None = None

    def as_json(self) -> dict[str, Any]:
        return {**{k: v for k, v in self.__dict__.items() if k != "at"}, "recipients": self.recipient_lists()}

    def recipients(self) -> str:
        return " ".join(x for x in (self.to, self.cc or "", self.bcc or "") if x)

    def recipient_lists(self) -> dict[str, list[str]]:
        """Every recipient by real address (display names dropped), per field."""
        return recipient_lists(self.to, self.cc, self.bcc)


@dataclass
class SendList:
    sends: list[Send]   # the ones shown, oldest first
    total: int          # how many matched before --limit
    skipped: int        # malformed log lines


def list_sends(root: Path, window: Window = Window(), *, to: str | None = None, note: str | None = None,
               limit: int = 0) -> SendList:
    """The messages sent in `window`, oldest first; with `limit`, the newest `limit` of them."""
    reader = LogReader(Path(root) / LOGS, window)
    pre: dict[str, dict[str, Any]] = {}
    sent: dict[str, dict[str, Any]] = {}
    for record in reader.records("gmail_mcp", ("pre_send_audit", "email_sent")):
        rfc = str(record.get("rfc822_message_id") or f"?{record['timestamp']}")
        if record["event"] == "pre_send_audit":
            pre[rfc] = record
        else:
            sent.setdefault(rfc, record)
    handler_sent: dict[str, dict[str, Any]] = {}
    filed: dict[str, str] = {}
    # A filing can follow its send by a while (finished at the next start): read a day further.
    for record in reader.records("h0", ("email_sent", "email_filed"), extra_days=1, whole_days=True):
        if record["event"] == "email_filed" and record.get("idempotency_key") and record.get("done_path"):
            filed[str(record["idempotency_key"])] = str(record["done_path"])
        elif record["event"] == "email_sent" and not record.get("already_sent") and reader.window.holds(record["at"]):
            handler_sent.setdefault(str(record.get("rfc822_message_id") or f"?{record['timestamp']}"), record)
    for rfc, record in handler_sent.items():
        sent.setdefault(rfc, record)  # the mail server could not write its own record

    sends = [_send(rfc, record, pre.get(rfc), handler_sent.get(rfc), filed) for rfc, record in sent.items()]
    if to:
        sends = [s for s in sends if to.casefold() in s.recipients().casefold()]
    if note:
        sends = [s for s in sends if note.casefold() in f"{s.note or ''} {s.sent_from or ''}".casefold()]
    sends.sort(key=lambda s: s.at)
    total = len(sends)
    if limit > 0:
        sends = sends[-limit:]
    for send in sends:
        if send.note:
            send.note_exists = (Path(root) / send.note).is_file()
    return SendList(sends, total, reader.skipped)


def _send(rfc: str, record: dict, pre: dict | None, handler: dict | None, filed: dict[str, str]) -> Send:
    about = dict(pre or handler or record)
    lists = about.get("recipients")
    if isinstance(lists, dict):  # H0's own record: every field by real address (the mail server's record lost)
        for field in ("cc", "bcc"):
            about.setdefault(field, ", ".join(map(str, lists.get(field) or [])) or None)
    key = record.get("idempotency_key")
    sent_from = record.get("note_path") or record.get("path")
    done = filed.get(str(key)) if key else None
    return Send(
        sent_at=str(record.get("timestamp")), to=_text(about.get("to")), subject=_text(about.get("subject")),
        note=done or (str(sent_from) if sent_from else None), filed=done is not None,
        provider_message_id=_opt(record.get("provider_message_id") or record.get("message_id")),
        rfc822_message_id=None if rfc.startswith("?") else rfc, idempotency_key=_opt(key),
        backend=_opt(record.get("backend")), cc=_opt(about.get("cc")), bcc=_opt(about.get("bcc")),
        sent_from=_opt(sent_from), at=record["at"],
    )


def _text(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _opt(value: object) -> str | None:
    return None if value is None or value == "" else _text(value)


def render_sends(listing: SendList, window: Window = Window()) -> str:
    shown = len(listing.sends)
    head = f"{listing.total} message(s) sent{window.describe()}, oldest first"
    if shown < listing.total:
        head += f" — showing the newest {shown} of {listing.total} (--limit 0 shows all)"
    lines = [head + ":"]
    for s in listing.sends:
        where = plain(s.note, 120) if s.note else "(no note: sent directly)"
        if s.note and not s.filed:
            where += " (not filed)"
        elif s.note_exists is False:
            where += " (no longer there)"
        lines.append(f"{local_time(s.sent_at)}  {describe_recipients(s.recipient_lists())}  \"{plain(s.subject, 80)}\"  "
                     f"{where}  id {plain(s.provider_message_id or '?', 80)}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------- one note's trail

# Events that link an email to a draft: (fields naming the email, fields naming the draft).
# They are followed one hop only, so the trail of one reply never pulls in its siblings.
_BRIDGES = {
    "triage_decision": (("note",), ("draft",)),
    "source_filed": (("path", "done_path"), ("reply",)),
    "draft_created": (("reply_to_message_id",), ("path",)),
}
_IDS = {"idempotency_key": "key", "rfc822_message_id": "rfc", "provider_message_id": "pid", "message_id": "pid",
        "reply_to_message_id": "pid", "gmail_message_id": "pid"}
_PATHS = ("path", "note", "note_path", "done_path", "destination", "returned_to", "failed_path", "draft", "reply")
# After these, a name in Drafts/, Approved/, Rejected/ or Needs_Action/ belongs to the next note.
_ENDS = {"email_filed": "path", "draft_rejected": "path", "email_delivery_failed": "path", "source_filed": "path"}
# Frontmatter keys naming the note itself, and those naming the note it answers or was answered by.
_OWN_KEYS = ("idempotency_key", "rfc822_message_id", "gmail_message_id", "message_id")
_HOP_KEYS = ("reply_to_message_id", "source", "draft", "replied_with")

Node = tuple


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
        ended = _ENDS.get(event) or ("note" if event == "triage_decision" and record.get("decision") == "archive" else None)
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
    events: list[dict[str, Any]]   # oldest first
    hidden: int = 0                # vault-server writes and moves, and the handler's copy of email_sent
    others: list[str] = field(default_factory=list)  # other notes that had the same name
    skipped: int = 0


def note_target(root: Path, text: str) -> tuple[str | None, str]:
    """(folder or None, file name) for a NOTE argument: `Done/x.md`, `x`, `x.md` or `[[x]]`."""
    from h0.errors import H0Error
    from h0.vault.paths import PathResolver

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


def trace_note(root: Path, note: str, window: Window = Window(), *, everything: bool = False) -> Trail:
    """One note's events in time order (empty `events` if the logs know nothing of it)."""
    from h0.vault import Vault

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


def _frontmatter_seeds(vault: Any, path: str, graph: _Graph) -> tuple[set[Node], set[Node]]:
    from h0.errors import H0Error

    try:
        fm = vault.read_note(path).frontmatter
    except H0Error:
        return set(), set()
    own = {(_IDS[k], fm[k].strip()) for k in _OWN_KEYS if isinstance(fm.get(k), str) and fm[k].strip()}
    hop: set[Node] = set()
    for key in _HOP_KEYS:
        value = fm.get(key)
        if not isinstance(value, str) or not value.strip():
            continue
        if key in _IDS:
            hop.add((_IDS[key], value.strip()))
            continue
        text = value.strip()
        if text.startswith("[[") and text.endswith("]]"):
            text = text[2:-2].split("|", 1)[0].strip()
            text = text if "/" in text else f"{NEEDS_ACTION}/{text}"
            text = text if text.lower().endswith(".md") else text + ".md"
        node = graph.latest(text)
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


_FILED_AS = {"email_filed": "done_path", "draft_rejected": "done_path", "email_delivery_failed": "failed_path",
             "source_filed": "done_path", "send_refused": "returned_to", "send_held": "returned_to",
             "note_moved": "destination"}


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
    confirmed = {r.get("rfc822_message_id") for r in events if r["event"] == "email_sent" and r["stream"] == "gmail_mcp"}
    shown = [
        r for r in events
        if not (r["stream"] == "vault_mcp" and r.get("severity") in ("debug", "info"))
        and not (r["event"] == "email_sent" and r["stream"] == "h0" and not r.get("already_sent")
                 and r.get("rfc822_message_id") in confirmed)
    ]
    return shown, len(events) - len(shown)


_STAGES = {
    "email_ingested": "ingest", "email_duplicate_skipped": "ingest", "ingest_failed": "ingest",
    "triage_decision": "triage", "draft_created": "draft", "draft_approved": "approval",
    "pre_send_audit": "pre-send", "email_sent": "sent", "send_retry": "retry",
    "source_filed": "filing", "email_filed": "filing", "source_not_filed": "filing", "filing_incomplete": "filing",
    "draft_edited_during_send": "filing", "send_refused": "refused", "send_held": "held",
    "draft_rejected": "rejected", "email_delivery_failed": "bounced", "note_moved": "move", "note_written": "write",
}
_ARRIVALS = {"moved": "moved into Approved/", "written": "written in Approved/ (sent once quiet)",
             "unknown": "found in Approved/ (by a sweep)"}


def stage(record: dict[str, Any]) -> str:
    if record["event"] in _STAGES:
        return _STAGES[record["event"]]
    return "problem" if record.get("severity") in ("warning", "error", "critical") else "event"


def _subject_part(record: dict[str, Any]) -> str:
    subject = record.get("subject")
    lists = recipient_lists(record.get("to"), record.get("cc"), record.get("bcc"))
    text = describe_recipients(lists) if any(lists.values()) else ""
    return f"{text} \"{plain(subject, 80)}\"".strip() if subject is not None else text


def describe(record: dict[str, Any]) -> str:
    """What one event says, in a line (without its time, name and note)."""
    event, r = record["event"], record
    if event == "email_ingested":
        return f"from {plain(r.get('sender'), 80)} \"{plain(r.get('subject'), 80)}\" (provider id {plain(r.get('message_id'), 60)})"
    if event == "triage_decision":
        confidence = r.get("confidence")
        how = f"{confidence:.0%}, " if isinstance(confidence, int | float) else ""
        rule = f": {plain(r.get('rule'), 60)}" if r.get("rule") else ""
        draft = f" → draft {plain(r.get('draft'), 120)}" if r.get("draft") else ""
        return f"{plain(r.get('decision'), 20)} ({how}{plain(r.get('provider'), 20)}{rule}){draft}"
    if event == "draft_approved":
        return _ARRIVALS.get(str(r.get("arrival")), plain(r.get("arrival"), 20))
    if event == "pre_send_audit":
        return f"{_subject_part(r)}, Message-ID {plain(r.get('rfc822_message_id'), 100)}"
    if event == "email_sent":
        pid = r.get("provider_message_id") or r.get("message_id")
        text = f"provider id {plain(pid, 100)} via {plain(r.get('backend'), 20)}"
        if r.get("already_sent"):
            text = f"already sent before ({text}): not sent again"
        return text + (" (found after an interrupted attempt)" if r.get("recovered") else "")
    if event in ("email_filed", "draft_rejected", "source_filed", "draft_edited_during_send", "filing_incomplete"):
        text = f"→ {plain(r.get('done_path'), 120)}"
        if r.get("reply"):
            text += f" (answered by {plain(r['reply'], 120)})"
        if r.get("recovered"):
            text += " (finished after a restart)"
        return text + (f": {plain(r['message'], 160)}" if r.get("message") else "")
    if event in ("send_refused", "send_held"):
        return f"{plain(r.get('reason'), 40)}: {plain(r.get('message'), 200)} → back in {plain(r.get('returned_to'), 120)}"
    if event == "email_delivery_failed":
        return f"{plain(r.get('message'), 160)} → {plain(r.get('failed_path'), 120)}"
    if event == "note_moved":
        return f"→ {plain(r.get('destination'), 120)}"
    if event == "note_written":
        return plain(r.get("tool"), 40)
    if event == "draft_created":
        return _subject_part(r)
    problem = r.get("message") or r.get("reason") or r.get("error") or ""
    retry = f" (retry in {r['retry_in']:.0f} s)" if isinstance(r.get("retry_in"), int | float) else ""
    code = f"{plain(r.get('error'), 30)}: " if r.get("error") and r.get("message") else ""
    return f"{code}{plain(problem, 200)}{retry}"


def _about(record: dict[str, Any]) -> str:
    for key in ("path", "note", "note_path", "source"):
        value = record.get(key)
        if isinstance(value, str) and value:
            return plain(value, 120)
    return "-"


def render_trail(trail: Trail) -> str:
    lines = [f"{trail.title} — {len(trail.events)} event(s), oldest first:"]
    for r in trail.events:
        lines.append(f"{local_time(r['timestamp'], ms=True)}  {stage(r):<9} {plain(r['event'], 40):<16} "
                     f"{_about(r)}  {describe(r)}".rstrip())
    if trail.hidden:
        lines.append(f"(+{trail.hidden} more: the vault server's writes and moves, and H0's copy of each send; "
                     "--all shows them)")
    for other in trail.others:
        lines.append(f"Another note had this name: {plain(other, 120)} — h0 log \"{plain(other, 120)}\"")
    return "\n".join(lines)


def record_json(record: dict[str, Any]) -> dict[str, Any]:
    return {**{k: v for k, v in record.items() if k != "at"}, "stage": stage(record)}


# ------------------------------------------------------------------------------- the command


def run_log(root: Path, args: Any, out: Any, err: Any) -> int:
    """`h0 log [NOTE]` with parsed arguments: 0 found, 1 nothing found, 2 usage."""
    try:
        window = make_window(args.since, args.until, today=args.today, days=args.days)
        if args.limit < 0:
            raise UsageError("--limit takes 0 (all) or more")
        if args.note is not None and (args.to or args.note_filter):
            raise UsageError("--to and --note filter the list of sends; with NOTE, leave them out")
        if args.note is not None:
            return _run_trace(root, args, window, out, err)
    except UsageError as exc:
        print(f"h0 log: {exc}", file=err)
        return 2
    listing = list_sends(root, window, to=args.to, note=args.note_filter, limit=args.limit)
    _say_skipped(listing.skipped, err)
    if args.json:
        print(json.dumps([s.as_json() for s in listing.sends], indent=2), file=out)
        if len(listing.sends) < listing.total:
            print(f"h0 log: showing the newest {len(listing.sends)} of {listing.total} (--limit 0 shows all)", file=err)
    if not listing.total:
        filters = " matching the filters" if args.to or args.note_filter else ""
        print(f"h0 log: no message was sent{window.describe()}{filters} (nothing in {LOGS}/ says so).", file=err)
        return 1
    if not args.json:
        print(render_sends(listing, window), file=out)
    return 0


def _run_trace(root: Path, args: Any, window: Window, out: Any, err: Any) -> int:
    trail = trace_note(root, args.note, window, everything=args.all)
    _say_skipped(trail.skipped, err)
    if not trail.events:
        print(f"h0 log: nothing in {LOGS}/{window.describe()} is about {trail.asked!r}; "
              "check the name with `h0 log` (the list of sends).", file=err)
        return 1
    if args.json:
        print(json.dumps([record_json(r) for r in trail.events], indent=2, default=str), file=out)
    else:
        print(render_trail(trail), file=out)
    return 0


def _say_skipped(count: int, err: Any) -> None:
    if count:
        print(f"h0 log: skipped {count} malformed line(s) in {LOGS}/ (not JSON records).", file=err)
