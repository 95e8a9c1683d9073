"""What H0 wrote to the vault lately, note by note: a note whose bytes still hash to what H0 wrote
is known without parsing it again.

The daemon's own writes come back to it as file events (a draft written in Drafts/, an email note
updated in Needs_Action/). Its routing table must look at each (a human may have edited the note
since), but when the bytes on disk are the ones H0 wrote — the same content hash the vault server
answered the write with — what they say is what H0 sent: the frontmatter and body it wrote, or the
note it read merged with the keys it set. Any other content (the human's edit, another program's,
a file swapped in with the same size and time) has another hash and is read and parsed as always.

It keeps H0's parses too (`parsed`): a burst's email is read by the vault index and by triage's
routing, and whichever comes second takes the first one's parse when the bytes hash the same — the
same parser's answer to the same bytes, never a size or a time. Bounded by notes and by characters.

While more of H0's work is under way (`more_coming`, which the daemon answers from its work queue), the
vault index leaves H0's own writes to its mail folders for later and takes them in when H0 is idle
(`idle`, which the daemon calls then): no look-up of the owner's knowledge reads those folders, and a
burst's drafts and updates were a fifth of the daemon's work.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from h0.vault.note import Note
from h0.vault.paths import nfc

MAX_NOTES = 12_000  # notes remembered (a burst's drafts and updates wait behind the burst in the queue)
MAX_NOTE_CHARS = 64_000  # a bigger note is not remembered: read again, as any other
MAX_PARSED_CHARS = 12_000_000  # of the parsed notes' bodies kept (a 5,000-email burst's, between index and triage)


def merged(frontmatter: Mapping[str, Any], changes: Mapping[str, Any], remove: tuple[str, ...] = ()) -> dict[str, Any]:
    """A frontmatter update: `frontmatter` without the keys in `remove`, then `changes` set over it."""
    result = {k: v for k, v in frontmatter.items() if k not in remove}
    result.update(changes)
    return result


class OwnWrites:
    """The notes H0 wrote, by path, each with the hash of the bytes written (thread-safe, bounded:
    the oldest are forgotten first)."""

    def __init__(self, limit: int = MAX_NOTES, parsed_chars: int = MAX_PARSED_CHARS) -> None:
        self.limit = limit
        self.parsed_chars = parsed_chars
        self._notes: OrderedDict[str, Note] = OrderedDict()
        self._parsed: OrderedDict[str, Note] = OrderedDict()  # path -> H0's last parse of the bytes there
        self._parsed_size = 0  # their bodies' characters
        self._in_flight: Counter[str] = Counter()  # paths a change of H0's is being made to, not answered yet
        self._landed = 0  # how many batches of changes have been answered (or failed) since the start
        self._lock = threading.Lock()
        self.more_coming: Callable[[], bool] = lambda: False  # the daemon's: is more of H0's work under way?
        self._when_idle: list[Callable[[], None]] = []

    def when_idle(self, task: Callable[[], None]) -> None:
        """Run `task` each time H0 is idle (a reader that left H0's own writes for then)."""
        with self._lock:
            if task not in self._when_idle:
                self._when_idle.append(task)

    def idle(self) -> None:
        """H0 has no work under way: what waited for it runs now."""
        with self._lock:
            tasks = list(self._when_idle)
        for task in tasks:
            task()

    @contextlib.contextmanager
    def writing(self, paths: Iterable[str]) -> Iterator[None]:
        """H0 is changing the notes at `paths` (a batch sent to the vault server, its answer not back):
        a reader that can wait (the index) takes them in once what was written is recorded, unparsed."""
        keys = [nfc(path) for path in paths]
        with self._lock:
            self._in_flight.update(keys)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight.subtract(keys)
                for key in keys:
                    if self._in_flight[key] <= 0:
                        del self._in_flight[key]
                self._landed += 1

    def landed(self) -> int:
        """A count that moves each time a batch of changes is answered: a reader that left notes for later
        looks at them again only then."""
        with self._lock:
            return self._landed

    def in_flight(self, path: str) -> bool:
        """Whether a change of H0's to the note at `path` is under way (see `writing`)."""
        with self._lock:
            return nfc(path) in self._in_flight

    def wrote(self, path: str, note_hash: str, frontmatter: Mapping[str, Any], body: str) -> None:
        """H0 wrote this frontmatter and body at `path`; the bytes written hash to `note_hash`."""
        key = nfc(path)
        try:  # as the vault server got it (JSON over MCP), so as a parse of the note gives it back
            data = json.loads(json.dumps(frontmatter)) if len(body) <= MAX_NOTE_CHARS else None
        except (TypeError, ValueError):
            data = None
        if not isinstance(data, dict) or not all(isinstance(k, str) for k in frontmatter):  # YAML keeps 1 as 1
            with self._lock:
                self._notes.pop(key, None)
            return
        note = Note(key, data, body, note_hash)
        with self._lock:
            self._notes[key] = note
            self._notes.move_to_end(key)
            while len(self._notes) > self.limit:
                self._notes.popitem(last=False)

    def parsed(self, note: Note) -> None:
        """H0 parsed the bytes at `note.path` (their hash `note.hash`) into this frontmatter and body (h0.vault.note.parse):
        the next reader of the same bytes there takes them instead of parsing again."""
        if len(note.body) > MAX_NOTE_CHARS:
            return
        key = nfc(note.path)
        kept = Note(key, note.frontmatter, note.body, note.hash, typed=note.typed)  # no `parts`: half the memory
        with self._lock:
            old = self._parsed.pop(key, None)
            self._parsed_size += len(kept.body) - (len(old.body) if old is not None else 0)
            self._parsed[key] = kept
            while self._parsed and (self._parsed_size > self.parsed_chars or len(self._parsed) > self.limit):
                self._parsed_size -= len(self._parsed.popitem(last=False)[1].body)

    def known(self, path: str, note_hash: str) -> Note | None:
        """The note H0 wrote at `path`, or last parsed there, if the bytes there now are those (else None)."""
        key = nfc(path)
        with self._lock:
            note = self._notes.get(key)
            if note is None or note.hash != note_hash:
                note = self._parsed.get(key)
        return note if note is not None and note.hash == note_hash else None

    def latest(self, path: str) -> Note | None:
        """The note H0 last wrote at `path` (its bytes may have changed since), or None."""
        with self._lock:
            return self._notes.get(nfc(path))

    def remembers(self, path: str) -> bool:
        """Whether H0 wrote or parsed a note at `path` lately (its bytes may have changed since)."""
        key = nfc(path)
        with self._lock:
            return key in self._notes or key in self._parsed

    def __len__(self) -> int:
        """The notes H0 wrote that are remembered (parses not counted)."""
        with self._lock:
            return len(self._notes)
