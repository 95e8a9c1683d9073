"""This vault's record of its private folders, which the disclosure gate (h0.vault.disclosure) reads: the folders
`h0 init` recorded in `<vault>/.h0/private-folders` (one per line, `#` comments; in a dot folder, which no MCP tool
may write), and, while nothing is recorded, the vault's diary folders. Reading and writing the record only: what
a missing, readable or unreadable record means for a note is the gate's to say."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from h0.platform.fileio import atomic_write
from h0.platform.fs import read_regular
from h0.vault.paths import folder_key

# Folders people keep a diary in: proposed by `h0 init`, private by default until it records a choice.
DIARY_NAMES = ("Journal", "Journals", "Diary", "Daily", "Daily Notes", "Dailies")
RECORD_FILE = (".h0", "private-folders")  # in the vault: a dot folder, which no MCP tool may write
DAILY_NOTES_SETTINGS = (".obsidian", "daily-notes.json")


def recorded_folders(root: Path) -> list[str] | None:
    """The private folders `h0 init` recorded for this vault (one per line, `#` comments), or None
    when nothing was recorded (no such file). OSError when the file exists but cannot be read."""
    try:
        text = read_regular(root.joinpath(*RECORD_FILE), 65536).decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
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
    # The careful writer: a whole new file renamed into place (never half a record, never into a FIFO's reader).
    atomic_write(path, ("\n".join(lines) + "\n").encode("utf-8"), mode=0o644)
    return path
