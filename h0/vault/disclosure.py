"""The one gate for "may this text leave the owner's eyes?": which notes are private, asked by every
consumer that is not the human — LLM prompts, every MCP answer, past replies, thread context, the index.

A note is private when
- its own words say so (h0.vault.model.marked_private): a `private` key in any case (`private`,
  `Private`, `PRIVATE`) whose value is true, yes, y, 1 or on; or a private tag as Obsidian's tag pane
  lists it (h0.vault.tags): `private`, or nested `private/health`, in `tags:` or written `#private` in
  its text outside code;
- its frontmatter cannot be read (it does not parse, it is not UTF-8, the file cannot be opened): it
  is private until it can be — fail closed;
- it lies in a private folder (sub-folders included; names compared as Obsidian compares them):
  PRIVATE_FOLDERS, plus the folders `h0 init` recorded for this vault in `.h0/private-folders`
  (when that file does not exist, the diary folders found in the vault: Journal, Diary, Daily,
  Daily Notes, and the folder of Obsidian's daily-notes plugin) — so a diary never reaches a model
  by default. When that file exists but cannot be read (its permissions, a FIFO or a folder in its
  place, too large), it may name any folder: every note is private until it can be read (`unreadable`
  says why, and each process says so once in its log, as an error);
- it is under `Logs/` or a hidden folder (`.obsidian/`, `.h0/`, `.trash/`): never shown, whatever it holds;
- it is mail from or to a private person: its `from`, `to`, `cc`, `bcc`, `reply_to` or `sender` names
  an address that private People notes name (h0.vault.person.person_addresses; each such note
  private by a rule above) and no other People note does — the owner's therapist's mail is private like a
  private thread. A private note about someone who also has a public People note is a private note,
  not a private person; and the other side of a private email (its sender, the recipients of a
  private reply) is not a private person either: that email is private, their other mail is not.
  The addresses come from the vault index (`with_people`); a gate built without one knows no
  private person (`knows_people`);
- it belongs to a private thread: it shares a thread key (h0.vault.disclosure.thread_keys: the
  `thread_id`, the message id an email carries and its reply names, the `source` a draft answers)
  with a note that is private by one of the rules above. A stranger's new message in a private
  thread is private too, so it is triaged by the local rules, never by a model.

The calls every consumer makes (a note is a `Note`, or `(path, frontmatter)` / `(path, frontmatter,
body)` with frontmatter None when it could not be read):
- `own_private(path, frontmatter, body)` — private by itself (everything above but the thread);
- `thread_private(note, members)` — the one question of a conversation: is this note, or (note None)
  the conversation these notes make up, private?
- `keys_private(keys, private_keys)` — a message that is not a note (provider mail, history, a past
  reply) by its thread keys, against the keys private notes hold (None, unknown: private);
- `address_private(address)` — is this address a private person's (mail the provider holds, learned
  tables: ask before showing it);
- `why(...)` — the reason in words, for a refusal; `shown(notes)` — the members a model may see.

An MCP client can never make a note less private (`unprivating`): removing or falsifying the mark,
dropping the tag, leaving a private folder or a private thread is refused with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias

from loguru import logger

from h0.vault import model, values
from h0.vault.layout import LOGS
from h0.vault.model import marked_private
from h0.vault.note import Note
from h0.vault.paths import folder_key, link_key
from h0.vault.private_folders import RECORD_FILE, diary_folders, recorded_folders

NEVER_FOLDERS = frozenset({folder_key(LOGS)})
# Frontmatter fields that tie a note to a thread: the provider's thread, the message an email is and
# the one a reply answers, and the note a draft answers (`source`).
_MESSAGE_FIELDS = ("message_id", "reply_to_message_id", "in_reply_to")
# The fields naming whom mail is from or to: an address of a private person there makes the note private.
MAIL_FIELDS = ("from", "to", "cc", "bcc", "reply_to", "sender")
# A frontmatter line that ties a note to its thread, read raw when the block does not parse (`unparsed_thread_keys`).
_RAW_FIELD = re.compile(
    r"""^[ \t]*["']?(type|thread_id|message_id|reply_to_message_id|in_reply_to|source)["']?[ \t]*:(.*)$""",
    re.IGNORECASE,
)
_RAW_COMMENT = re.compile(r"[ \t]#.*$")
RAW_CHARS = 65_536
RAW_LINES = 1_000
UNREADABLE = "its frontmatter cannot be read (it does not parse): H0 keeps it private until it does"

# A note as the gate takes it: a Note, or (path, frontmatter) / (path, frontmatter, body); frontmatter None
# when it could not be read.
NoteLike: TypeAlias = Note | tuple[str, Mapping[str, Any] | None] | tuple[str, Mapping[str, Any] | None, str | None]


def thread_keys(rel: str, frontmatter: Mapping[str, Any]) -> frozenset[str]:
    """What ties this note to others of its conversation: its thread id, the message ids it is and
    answers, and the email note it answers (`source`; an email's own name is its key for that).

    Read with the typed note model's readers (h0.vault.model), so the gate, the index and every
    "which email does this draft answer?" agree on `type:` in any case and on any spelling of `source:`
    (`[[EMAIL_1]]`, unquoted, with a folder, an alias or a heading)."""
    keys = set()
    if model.kind_of(frontmatter.get("type")) is model.Kind.EMAIL:
        keys.add(f"n:{link_key(rel)}")
    if thread := values.identifier(frontmatter.get("thread_id")):
        keys.add(f"t:{thread}")
    for name in _MESSAGE_FIELDS:
        if value := values.identifier(frontmatter.get(name)):
            keys.add(f"m:{value.strip('<>')}")
    if source := values.source_key(frontmatter.get("source")):
        keys.add(f"n:{source}")
    return frozenset(keys)


def unparsed_thread_keys(rel: str, text: str) -> frozenset[str]:
    """The thread keys a note whose frontmatter does not parse names on its lines, read raw: each line of its
    frontmatter block (the first RAW_LINES, of its first RAW_CHARS) that sets `type`, `thread_id`, a message id
    or `source`, whatever else is wrong with the block. A note that cannot be read is private, so the keys it
    names make its conversation private too (fail closed): a line read too eagerly only makes more private."""
    lines = text[:RAW_CHARS].lstrip("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != "---":
        return frozenset()
    keys: set[str] = set()
    for line in lines[1:RAW_LINES]:
        if line.rstrip() in ("---", "..."):
            break
        if found := _RAW_FIELD.match(line):
            value = _RAW_COMMENT.sub("", found.group(2)).strip().strip("'\"").strip()
            if value:
                keys |= thread_keys(rel, {found.group(1).lower(): value})
    return frozenset(keys)


def own_mark(frontmatter: Mapping[str, Any] | None, body: str | None = None) -> bool:
    """What the vault index stores of a note's own privacy (`docs.private`): marked or tagged private, in its
    properties or its text, or its properties could not be read (None). Its path, people and thread are judged
    when asked, from the index as it is then (h0.vault.index.privacy)."""
    return frontmatter is None or marked_private(frontmatter, body)


def mail_addresses(frontmatter: Mapping[str, Any]) -> set[str]:
    """The addresses a note's mail fields name (MAIL_FIELDS), lower-cased."""
    return {a.lower() for name in MAIL_FIELDS if frontmatter.get(name) for a in values.addresses(frontmatter[name])}


def folder_keys(folders: str | Iterable[str] | None) -> tuple[str, ...]:
    """Folder names as compared: 'Journal, Health/' -> ('journal', 'health')."""
    items = folders.split(",") if isinstance(folders, str) else list(folders or ())
    return tuple(dict.fromkeys(k for k in (folder_key(str(i).strip().strip("/")) for i in items) if k))


def note_parts(note: NoteLike) -> tuple[str, Mapping[str, Any] | None, str | None]:
    if isinstance(note, Note):
        return note.path, note.frontmatter, note.body
    return (note[0], note[1], note[2]) if len(note) == 3 else (note[0], note[1], None)


@dataclass(frozen=True, slots=True)
class Disclosure:
    """The gate for one vault's private folders (and, once it knows the vault index, private people).
    Cheap to build; every question is answered from the note given (and, for threads, the notes or
    the keys of the private notes around it)."""

    folders: tuple[str, ...] = ()  # folder keys (folder_keys)
    # The addresses private People notes name, as the vault index knows them now (`with_people`).
    people: Callable[[], frozenset[str]] | None = field(default=None, compare=False)
    # Why this vault's record of its private folders cannot be read (None: it can, or there is none): then
    # every note is private, since the record may name any folder (fail closed).
    unreadable: str | None = None

    @classmethod
    def for_vault(cls, root: Path | str | None, setting: str | Iterable[str] | None = "") -> Disclosure:
        """PRIVATE_FOLDERS plus this vault's recorded private folders (or, unrecorded, its diary folders); a record
        that exists but cannot be read makes every note private."""
        found: list[str] = list(folder_keys(setting))
        unreadable = None
        if root is not None:
            try:
                recorded = recorded_folders(Path(root))
            except OSError as exc:
                recorded, unreadable = [], _record_unreadable(Path(root), exc)
            found += folder_keys(recorded if recorded is not None else diary_folders(Path(root)))
        return cls(tuple(dict.fromkeys(found)), unreadable=unreadable)

    @property
    def key(self) -> tuple[tuple[str, ...], str | None]:
        """What makes two gates of one vault judge paths alike (a cache of things judged by a gate keys on it)."""
        return self.folders, self.unreadable

    def with_people(self, source: Callable[[], frozenset[str]]) -> Disclosure:
        """This gate, knowing private people from `source` (h0.vault.index.VaultIndex.private_addresses)."""
        return replace(self, people=source)

    # ------------------------------------------------------------------ by path

    def in_private_folder(self, rel: str) -> bool:
        key = folder_key(rel.replace("\\", "/").strip("/"))
        return any(key == folder or key.startswith(folder + "/") for folder in self.folders)

    def never(self, rel: str) -> bool:
        """Paths no consumer may see whatever their content: Logs/, hidden folders, private folders (every path,
        while the record of the private folders cannot be read)."""
        if self.unreadable is not None:
            return True
        parts = rel.replace("\\", "/").strip("/").split("/")
        if any(part.startswith(".") for part in parts) or folder_key(parts[0]) in NEVER_FOLDERS:
            return True
        return self.in_private_folder(rel)

    def covers(self, top: str) -> bool:
        """Whether some note below this top-level folder may be private by its path alone (`never`)."""
        key = folder_key(top.strip("/"))
        if self.unreadable is not None:
            return True
        if not key or top.startswith(".") or key in NEVER_FOLDERS:
            return bool(key)
        return any(folder == key or folder.startswith(key + "/") for folder in self.folders)

    # ------------------------------------------------------------------ people

    @property
    def knows_people(self) -> bool:
        """Whether this gate can tell a private person (it knows a vault index). One that cannot must not list
        an address where an agent reads (a learned table): it cannot tell whose is private."""
        return self.people is not None

    def private_addresses(self) -> frozenset[str]:
        """The private people's addresses (lower-cased: only private People notes name them); none when this
        gate knows no index."""
        return self.people() if self.people is not None else frozenset()

    def mail_private(self, addresses: Iterable[str]) -> bool:
        """Whether mail naming these addresses (from, to, cc, …) is private because one of them is a private
        person's: the people rule, for mail that is not a note (a provider's message, an audit record of a send)."""
        people = self.private_addresses()
        return bool(people) and any(a.strip().lower() in people for a in addresses if a)

    def address_private(self, address: str) -> bool:
        """Whether mail from or to this address is private: it is a private person's (only private People notes
        name it). Ask it before showing an address in anything an agent or a model reads (a learned table)."""
        text = address.strip().lower()
        return bool(text) and text in self.private_addresses()

    # ------------------------------------------------------------------ notes

    def own_private(self, rel: str, frontmatter: Mapping[str, Any] | None, body: str | None = None) -> bool:
        """Private by the note itself: its path, unreadable properties, its marks and tags (its text's too,
        when `body` is given), or mail from or to a private person."""
        return self._own_why(rel, frontmatter, body) is not None

    def private(
        self,
        rel: str,
        frontmatter: Mapping[str, Any] | None,
        private_keys: frozenset[str] = frozenset(),
        body: str | None = None,
    ) -> bool:
        """Private: by itself, or because its thread holds a private note (`private_keys`: their thread keys)."""
        return self.why(rel, frontmatter, private_keys, body) is not None

    def why(
        self,
        rel: str,
        frontmatter: Mapping[str, Any] | None,
        private_keys: frozenset[str] = frozenset(),
        body: str | None = None,
    ) -> str | None:
        """Why the note is private, in words for its owner; None when it is not."""
        own = self._own_why(rel, frontmatter, body)
        if own is not None:
            return own
        if private_keys and frontmatter is not None and thread_keys(rel, frontmatter) & private_keys:
            return "it belongs to a private thread (a private email or reply of the same conversation)"
        return None

    def _own_why(self, rel: str, frontmatter: Mapping[str, Any] | None, body: str | None) -> str | None:
        if self.unreadable is not None:
            return self.unreadable
        if self.never(rel):
            return "it is in a private folder (PRIVATE_FOLDERS, .h0/private-folders), Logs/ or a hidden folder"
        if frontmatter is None:
            return UNREADABLE
        if marked_private(frontmatter, body):
            return "its properties or tags mark it private (`private: true`, a `private` tag or `#private`)"
        # The note's addresses are parsed only when there is a private person to look for (most vaults: none).
        mail = self.people is not None and any(frontmatter.get(name) for name in MAIL_FIELDS)
        if mail and self.private_addresses() and self.mail_private(mail_addresses(frontmatter)):
            return "it is mail from or to a private person (only People notes marked private name the address)"
        return None

    def thread_private(self, note: NoteLike | None, members: Iterable[NoteLike] = ()) -> bool:
        """The one question of a conversation: whether `note` may not leave the owner's eyes — private by
        itself, or sharing a thread key with one of `members` (the notes of its thread, the email a draft
        answers) that is private by itself. With `note` None: whether the conversation `members` make up
        holds a private note. A member that could not be read (frontmatter None) makes it private."""
        mine = note_parts(note) if note is not None else None
        if mine is not None and self.own_private(*mine):
            return True
        keys = thread_keys(mine[0], mine[1]) if mine is not None and mine[1] is not None else None
        for rel, fm, body in map(note_parts, members):
            if self.own_private(rel, fm, body) and (keys is None or fm is None or thread_keys(rel, fm) & keys):
                return True
        return False

    def private_keys(self, notes: Iterable[NoteLike]) -> frozenset[str]:
        """The thread keys of those of `notes` that are private by themselves: what makes their threads private."""
        keys: set[str] = set()
        for rel, fm, body in map(note_parts, notes):
            if self.own_private(rel, fm, body):
                keys |= thread_keys(rel, fm or {})
        return frozenset(keys)

    def keys_private(self, keys: Iterable[str], private_keys: frozenset[str] | None) -> bool:
        """Whether a message that is not a note (a provider's message, a message kept as history, a past reply)
        with these thread keys is private: it shares a key with a note private by itself, anywhere in the
        vault. `private_keys`: the keys such notes hold — the vault index's answer (`VaultIndex.private_keys`,
        h0.vault.private_threads) or `private_keys(notes)` of the notes around it; None when they could not be
        read: private (fail closed). A message's people are asked of `address_private` besides."""
        return private_keys is None or not private_keys.isdisjoint(keys)

    def message_private(self, keys: Iterable[str], people: Iterable[str], private_keys: frozenset[str] | None) -> bool:
        """Whether a message that is not a note (a provider's message, a sent reply kept as history) is private:
        its thread holds a private note (`keys_private`) or it is mail from or to a private person."""
        return self.keys_private(keys, private_keys) or self.mail_private(people)

    def batch(
        self, notes: Iterable[NoteLike], vault_keys: Callable[[frozenset[str]], frozenset[str] | None]
    ) -> Callable[[NoteLike], bool]:
        """The answer for each of a batch of notes (emails and their threads' notes): private itself, or sharing
        a thread key with a note private by itself — among these (as read now, their text included) or anywhere
        in the vault (`vault_keys`, asked once for all their keys: h0.vault.private_threads). When the vault
        cannot say (None), every one is private."""
        notes = list(notes)
        parts = [note_parts(n) for n in notes]
        found = vault_keys(frozenset().union(*(thread_keys(rel, fm or {}) for rel, fm, _ in parts)))
        held = None if found is None else found | self.private_keys(notes)

        def private(note: NoteLike) -> bool:
            rel, fm, body = note_parts(note)
            return self.own_private(rel, fm, body) or self.keys_private(thread_keys(rel, fm or {}), held)

        return private

    def shown(self, notes: Iterable[NoteLike]) -> list[NoteLike]:
        """The notes of one conversation that may be shown: private ones, and all of a private thread, left out."""
        notes = list(notes)
        keys = self.private_keys(notes)
        return [n for n in notes if not self.private(*note_parts(n)[:2], keys, note_parts(n)[2])]

    def unprivating(
        self,
        before: NoteLike | None,
        after: NoteLike,
        private_keys: frozenset[str] = frozenset(),
    ) -> str | None:
        """Why a change from `before` (None: a new note) to `after` would make a note less private, or None.

        Less private: it was private and would not be (a mark removed or made false, a tag dropped, a
        `#private` deleted from its text, a move out of a private folder, a thread id changed away from a
        private thread, properties that did not parse replaced by ones that do), or it carried the mark and
        would not (even when its folder keeps it private today)."""
        if before is None:
            return None
        was_rel, was_fm, was_body = note_parts(before)
        rel, fm, body = note_parts(after)
        was = self.why(was_rel, was_fm, private_keys, was_body)
        if was is None:
            return None
        if (
            was_fm is not None
            and marked_private(was_fm, was_body)
            and not (fm is not None and marked_private(fm, body))
        ):
            return f"{was_rel} is private ({was}); removing or falsifying its `private` mark or tag is the owner's call"
        if self.why(rel, fm, private_keys, body) is None:
            return f"{was_rel} is private ({was}); this change would make {rel} visible to models and agents"
        return None


def _record_unreadable(root: Path, exc: OSError) -> str:
    """The reason every note is private while the record cannot be read, said in the log once per process."""
    where = "/".join(RECORD_FILE)
    why = exc.strerror or type(exc).__name__
    reason = (
        f"this vault's record of its private folders ({where}) cannot be read ({why}): it may name any folder, so "
        f"H0 keeps every note private until it can — make {where} a readable file again, or delete it"
    )
    key = (str(root), why)
    if key not in _said:
        _said.add(key)
        logger.error("{}: {}", root, reason)
    return reason


_said: set[tuple[str, str]] = set()
