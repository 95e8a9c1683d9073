"""Which notes may enter a prompt: the one rule, asked by every part of drafting.

Never: anything under `Logs/`, `.obsidian/`, `.h0/` or another hidden folder; a note whose
frontmatter says `private: true` (also `yes`, `1`); a note inside a folder the owner lists in
PRIVATE_FOLDERS. H0's own control notes (rules, dashboard) are not knowledge either; the
profile and the memory note enter a prompt only through their own parsers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from h0.vault import control
from h0.vault.layout import APPROVED, DONE, DRAFTS, LOGS, NEEDS_ACTION, OUTBOX, REJECTED
from h0.vault.paths import folder_key
from h0.vault.privacy import marked_private

# The control notes' names are decided once, with who may change them (h0.vault.control).
PROFILE_NOTE = control.PROFILE_NOTE
MEMORY_NOTE = control.MEMORY_NOTE
BRIEFINGS = "Briefings"
# H0's notes at the vault's root: read by their own code, never as the owner's knowledge.
# An agent's proposed change to a control note (`H0_Memory.pending.md`) is not the owner's word either.
CONTROL_NOTES = frozenset(
    {"h0_rules.md", "h0_dashboard.md", PROFILE_NOTE.lower(), MEMORY_NOTE.lower()}
    | {control.pending_name(name).lower() for name in control.CONTROL_NOTES}
)
# H0's mail folders: emails are strangers' words and drafts are H0's; past replies are read
# from Done/ by their own code (h0.drafting.past), never as knowledge notes.
MAIL_FOLDERS = frozenset(folder_key(f) for f in (NEEDS_ACTION, DRAFTS, APPROVED, REJECTED, DONE, OUTBOX, BRIEFINGS))
NEVER = frozenset(folder_key(f) for f in (LOGS,))


class PrivacyRule:
    """Decides, for a vault-relative path (and its frontmatter once read), whether it may be shown to a model."""

    def __init__(self, private_folders: Iterable[str] = ()) -> None:
        self.private_folders = tuple(
            folder_key(f.strip().strip("/")) for f in private_folders if f and f.strip().strip("/")
        )

    def never(self, rel: str) -> bool:
        """True for paths no prompt may hold whatever their content: Logs/, hidden folders, private folders."""
        parts = rel.split("/")
        if any(part.startswith(".") for part in parts):
            return True
        if folder_key(parts[0]) in NEVER:
            return True
        return self.in_private_folder(rel)

    def in_private_folder(self, rel: str) -> bool:
        key = folder_key(rel)
        return any(key == folder or key.startswith(folder + "/") for folder in self.private_folders)

    def is_private(self, rel: str, frontmatter: Mapping[str, Any] | None = None) -> bool:
        """Private: in a never-folder, in a PRIVATE_FOLDERS folder, or marked `private: true`."""
        if self.never(rel):
            return True
        return frontmatter is not None and marked_private(frontmatter)

    @staticmethod
    def mail_folder(rel: str) -> bool:
        """In one of H0's mail folders (or a control note at the root): not the owner's knowledge."""
        parts = rel.split("/")
        if len(parts) == 1:
            return parts[0].lower() in CONTROL_NOTES
        return folder_key(parts[0]) in MAIL_FOLDERS
