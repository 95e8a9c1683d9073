"""Which notes are the owner's private ones: never returned for drafting context or related notes,
never shown to an MCP client (an MCP client is an LLM, often a remote one), never put in a prompt.

A note is private when its frontmatter says `private: true` (yes, 1), or when it lies in a folder
listed in the PRIVATE_FOLDERS setting (comma-separated vault folders, e.g. `Journal, Health`;
sub-folders included, names compared as Obsidian compares them: case and Unicode form aside).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from h0.vault.paths import folder_key


def private_folders(setting: str | Iterable[str] | None) -> tuple[str, ...]:
    """PRIVATE_FOLDERS as folder keys: 'Journal, Health/' -> ('journal', 'health')."""
    items = setting.split(",") if isinstance(setting, str) else list(setting or ())
    return tuple(key for key in (folder_key(str(item).strip().strip("/")) for item in items) if key)


def in_private_folder(rel: str, folders: tuple[str, ...]) -> bool:
    key = folder_key(rel.replace("\\", "/").strip("/"))
    return any(key == folder or key.startswith(folder + "/") for folder in folders)


def marked_private(frontmatter: Mapping[str, Any]) -> bool:
    value = frontmatter.get("private")
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value == 1
    return isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "on")


def is_private(rel: str, frontmatter: Mapping[str, Any], folders: tuple[str, ...]) -> bool:
    return marked_private(frontmatter) or in_private_folder(rel, folders)
