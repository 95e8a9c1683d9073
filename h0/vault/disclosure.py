"""The one gate for "may this text leave the owner's eyes?": which notes are private, asked by every
consumer that is not the human — LLM prompts, every MCP answer, past replies, thread context, the index.

A note is private when
- its frontmatter says so, in any spelling people write: a `private` key in any case (`private`,
  `Private`, `PRIVATE`) whose value is true, yes, y, 1 or on; or a `private` tag (`tags: [private]`,
  `tags: "#private, work"`, any case);
- it lies in a private folder (sub-folders included; names compared as Obsidian compares them):
  PRIVATE_FOLDERS, plus the folders `h0 init` recorded for this vault in `.h0/private-folders`
  (when that file does not exist, the diary folders found in the vault: Journal, Diary, Daily,
  Daily Notes, and the folder of Obsidian's daily-notes plugin) — so a diary never reaches a model
  by default;
- it is under `Logs/` or a hidden folder (`.obsidian/`, `.h0/`, `.trash/`): never shown, whatever it holds;
- it belongs to a private thread: it shares a thread key (h0.vault.disclosure.thread_keys: the
  `thread_id`, the message id an email carries and its reply names, the `source` a draft answers)
  with a note that is private by one of the rules above. A stranger's new message in a private
  thread is private too, so it is triaged by the local rules, never by a model.

An MCP client can never make a note less private (`unprivating`): removing or falsifying the mark,
dropping the tag, leaving a private folder or a private thread is refused with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from h0.platform.fs import read_regular
from h0.vault import model
from h0.vault.layout import LOGS
from h0.vault.model import marked_private
from h0.vault.paths import folder_key, link_key

# Folders people keep a diary in: proposed by `h0 init`, private by default until it records a choice.
DIARY_NAMES = ("Journal", "Journals", "Diary", "Daily", "Daily Notes", "Dailies")
RECORD_FILE = (".h0", "private-folders")  # in the vault: a dot folder, which no MCP tool may write
DAILY_NOTES_SETTINGS = (".obsidian", "daily-notes.json")
NEVER_FOLDERS = frozenset({folder_key(LOGS)})
# Frontmatter fields that tie a note to a thread: the provider's thread, the message an email is and
# the one a reply answers, and the note a draft answers (`source`).
_MESSAGE_FIELDS = ("message_id", "reply_to_message_id", "in_reply_to")


def thread_keys(rel: str, frontmatter: Mapping[str, Any]) -> frozenset[str]:
    """What ties this note to others of its conversation: its thread id, the message ids it is and
    answers, and the email note it answers (`source`; an email's own name is its key for that).

    Read with the typed note model's readers (h0.vault.model), so the gate, the index and every
    "which email does this draft answer?" agree on `type:` in any case and on any spelling of `source:`
    (`[[EMAIL_1]]`, unquoted, with a folder, an alias or a heading)."""
    keys = set()
    if model.kind_of(frontmatter.get("type")) is model.Kind.EMAIL:
        keys.add(f"n:{link_key(rel)}")
    if thread := model.identifier(frontmatter.get("thread_id")):
        keys.add(f"t:{thread}")
    for name in _MESSAGE_FIELDS:
        if value := model.identifier(frontmatter.get(name)):
            keys.add(f"m:{value.strip('<>')}")
    if source := model.source_key(frontmatter.get("source")):
        keys.add(f"n:{source}")
    return frozenset(keys)


def folder_keys(folders: str | Iterable[str] | None) -> tuple[str, ...]:
    """Folder names as compared: 'Journal, Health/' -> ('journal', 'health')."""
    items = folders.split(",") if isinstance(folders, str) else list(folders or ())
    return tuple(dict.fromkeys(k for k in (folder_key(str(i).strip().strip("/")) for i in items) if k))


@dataclass(frozen=True, slots=True)
class Disclosure:
    """The gate for one vault's private folders. Cheap to build; every question is answered from
    the path and frontmatter given (and, for threads, the keys of the private notes around it)."""

    folders: tuple[str, ...] = ()  # folder keys (folder_keys)

    @classmethod
    def for_vault(cls, root: Path | str | None, setting: str | Iterable[str] | None = "") -> Disclosure:
        """PRIVATE_FOLDERS plus this vault's recorded private folders (or, unrecorded, its diary folders)."""
        found: list[str] = list(folder_keys(setting))
        if root is not None:
            recorded = recorded_folders(Path(root))
            found += folder_keys(recorded if recorded is not None else diary_folders(Path(root)))
        return cls(tuple(dict.fromkeys(found)))

    def in_private_folder(self, rel: str) -> bool:
        key = folder_key(rel.replace("\\", "/").strip("/"))
        return any(key == folder or key.startswith(folder + "/") for folder in self.folders)

    def never(self, rel: str) -> bool:
        """Paths no consumer may see whatever their content: Logs/, hidden folders, private folders."""
        parts = rel.replace("\\", "/").strip("/").split("/")
        if any(part.startswith(".") for part in parts) or folder_key(parts[0]) in NEVER_FOLDERS:
            return True
        return self.in_private_folder(rel)

    def own_private(self, rel: str, frontmatter: Mapping[str, Any] | None) -> bool:
        """Private by the note itself: its path (never, private folder) or its properties."""
        return self.never(rel) or (frontmatter is not None and marked_private(frontmatter))

    def private(
        self, rel: str, frontmatter: Mapping[str, Any] | None, private_keys: frozenset[str] = frozenset()
    ) -> bool:
        """Private: by itself, or because its thread holds a private note (`private_keys`: their thread keys)."""
        return self.why(rel, frontmatter, private_keys) is not None

    def why(
        self, rel: str, frontmatter: Mapping[str, Any] | None, private_keys: frozenset[str] = frozenset()
    ) -> str | None:
        """Why the note is private, in words for its owner; None when it is not."""
        if self.never(rel):
            return "it is in a private folder (PRIVATE_FOLDERS, .h0/private-folders), Logs/ or a hidden folder"
        if frontmatter is None:
            return None
        if marked_private(frontmatter):
            return "its properties mark it private (`private: true` or a `private` tag)"
        if private_keys and thread_keys(rel, frontmatter) & private_keys:
            return "it belongs to a private thread (a private email or reply of the same conversation)"
        return None

    def private_keys(self, notes: Iterable[tuple[str, Mapping[str, Any] | None]]) -> frozenset[str]:
        """The thread keys of those of `notes` that are private by themselves: what makes their threads private."""
        keys: set[str] = set()
        for rel, fm in notes:
            if self.own_private(rel, fm):
                keys |= thread_keys(rel, fm or {})
        return frozenset(keys)

    def thread_private(self, keys: Iterable[str], private_keys: frozenset[str] | None) -> bool:
        """Whether a message or thread with these thread keys is private (a provider's message, a message kept
        as history, a past reply, a thread's context): it shares a key with a note private by itself, anywhere in
        the vault. `private_keys`: the keys such notes hold — the vault index's answer (`VaultIndex.private_keys`)
        or `private_keys(notes)` of the notes around it; None when they could not be read: private (fail closed)."""
        return private_keys is None or not private_keys.isdisjoint(keys)

    def shown(
        self, notes: Iterable[tuple[str, Mapping[str, Any] | None]]
    ) -> list[tuple[str, Mapping[str, Any] | None]]:
        """The notes of one conversation that may be shown: private ones, and all of a private thread, left out."""
        notes = list(notes)
        keys = self.private_keys(notes)
        return [(rel, fm) for rel, fm in notes if not self.private(rel, fm, keys)]

    def unprivating(
        self,
        before: tuple[str, Mapping[str, Any]] | None,
        after: tuple[str, Mapping[str, Any]],
        private_keys: frozenset[str] = frozenset(),
    ) -> str | None:
        """Why a change from `before` (None: a new note) to `after` would make a note less private, or None.

        Less private: it was private and would not be (a mark removed or made false, a tag dropped,
        a move out of a private folder, a thread id changed away from a private thread), or it carried
        the mark and would not (even when its folder keeps it private today)."""
        if before is None:
            return None
        was = self.why(*before, private_keys)
        if was is None:
            return None
        if marked_private(before[1]) and not marked_private(after[1]):
            return (
                f"{before[0]} is private ({was}); removing or falsifying its `private` mark or tag is the owner's call"
            )
        if self.why(*after, private_keys) is None:
            return f"{before[0]} is private ({was}); this change would make {after[0]} visible to models and agents"
        return None


def recorded_folders(root: Path) -> list[str] | None:
    """The private folders `h0 init` recorded for this vault (one per line, `#` comments), or None
    when nothing was recorded."""
    try:
        text = read_regular(root.joinpath(*RECORD_FILE), 65536).decode("utf-8", errors="replace")
    except OSError:
        return None
    return [line.strip() for line in text.splitlines()[:1000] if line.strip() and not line.lstrip().startswith("#")]


def diary_folders(root: Path) -> list[str]:
    """The vault's diary folders: top-level folders named like one (DIARY_NAMES, any case), and the
    folder of Obsidian's daily-notes plugin (`.obsidian/daily-notes.json`)."""
    wanted = {folder_key(name) for name in DIARY_NAMES}
    found: list[str] = []
    try:
        with_names = sorted(entry.name for entry in root.iterdir() if entry.is_dir() and not entry.is_symlink())
    except OSError:
        with_names = []
    found += [name for name in with_names if folder_key(name) in wanted]
    try:
        settings = json.loads(read_regular(root.joinpath(*DAILY_NOTES_SETTINGS), 65536).decode("utf-8"))
    except (OSError, ValueError):
        settings = None
    folder = settings.get("folder") if isinstance(settings, dict) else None
    if isinstance(folder, str) and folder.strip().strip("/") and ".." not in folder.split("/"):
        found.append(folder.strip().strip("/"))
    return list(dict.fromkeys(found))


def record_folders(root: Path, folders: Iterable[str]) -> Path:
    """Write this vault's private folders where the gate reads them (.h0/private-folders)."""
    path = root.joinpath(*RECORD_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Private folders of this vault (one per line; sub-folders included). Their notes never reach a model",
        "# or an MCP client. Written by `h0 init`; edit it as you like. PRIVATE_FOLDERS adds more.",
        *folders,
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
