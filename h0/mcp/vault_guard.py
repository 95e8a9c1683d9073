"""The vault server's human-in-the-loop guard: no tool writes into, edits in or moves out of Approved/.

Approval is the human's act alone, so no tool creates, edits or moves a note into `Approved/`,
edits one there, or moves one out — except the daemon's own server (`daemon_filing`), which files
the notes it sent (or held, or saw bounce) into Done/, Drafts/ or Logs/failed/. "In Approved/"
means what the path resolves to (`h0.vault.approval`: symlinks, `..`, case, Unicode), and —
defensively, since it is Approved/ on macOS and Windows — any first folder that case-folds to
`approved`. Each refusal is `permission_denied` with one audit line.

Nor does any tool write, edit or move `Logs/H0_Sender.md`, the note that says which computer sends
(h0.vault.sending_computer): H0 writes it, and the owner moves sending with `h0 sending take`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, NoReturn

from h0.errors import PermissionDenied
from h0.vault import AuditLog
from h0.vault.approval import ApprovalFolder, same_directory
from h0.vault.layout import APPROVED, DONE, DRAFTS, FAILED, LOGS
from h0.vault.paths import VaultPath, folder_key
from h0.vault.sending_computer import SENDER_NOTE

DAEMON_FILING_FOLDERS = (DONE, DRAFTS, FAILED)  # sent, held or invalid, bounced
_APPROVED_KEY = folder_key(APPROVED)

_INTO_APPROVED = (
    "Only the human approves: no tool may create, edit or move a note into Approved/. "
    "Write the draft to Drafts/ and let the human move it."
)
_EDIT_IN_APPROVED = (
    "A note in Approved/ is what the human approved: no tool may change it. To change it, "
    "ask the human to move it back to Drafts/, then edit it there."
)
_OUT_OF_APPROVED = (
    "Only the human moves notes out of Approved/ (H0's daemon files the ones it sent itself). "
    "To withdraw an approval, ask the human to move the note back to Drafts/ or to Rejected/."
)
_DAEMON_FILING_ONLY = (
    "H0's daemon files notes from Approved/ only into Done/, Drafts/ or Logs/failed/; "
    "anything else is the human's move."
)
_SENDING_CLAIM = (
    f"{SENDER_NOTE} says which computer sends this vault's drafts: H0 writes it, and the owner moves sending "
    "with `h0 sending take`. No tool writes, edits or moves it."
)
_THROUGH_SYMLINK = (
    "This note is a symlink: H0 does not write through links (a write would replace the link "
    "with a copy). Write to the note it points to instead."
)


class ApprovalGuard:
    """Checks each write and move a vault tool is about to make; refuses (and audits) the human's alone."""

    def __init__(self, root: Path, audit: AuditLog, *, daemon_filing: bool) -> None:
        self.approval = ApprovalFolder(root)
        self.audit = audit
        self.daemon_filing = daemon_filing
        self.filing_folders = tuple(root / name for name in DAEMON_FILING_FOLDERS)
        self.logs = root / LOGS

    def is_sending_claim(self, target: VaultPath) -> bool:
        """Whether `target` is the sending claim: by its path in any case, or by where it resolves to."""
        name = SENDER_NOTE.rsplit("/", 1)[1].casefold()
        return target.rel.casefold() == SENDER_NOTE.casefold() or (
            target.abs.name.casefold() == name and same_directory(target.abs.parent, self.logs)
        )

    def in_approval(self, target: VaultPath) -> bool:
        return folder_key(target.top) == _APPROVED_KEY or self.approval.contains(target.abs)

    def check_write(self, tool: str, target: VaultPath) -> None:
        """write_note and update_frontmatter: never in Approved/, never the sending claim, never through a symlink."""
        if self.is_sending_claim(target):
            self._refuse(tool, "sending_claim", _SENDING_CLAIM, target.rel)
        try:
            mode: int | None = os.lstat(target.abs).st_mode
        except OSError:
            mode = None
        if self.in_approval(target):
            if mode is None:
                self._refuse(tool, "into_approved", _INTO_APPROVED, target.rel)
            self._refuse(tool, "edit_in_approved", _EDIT_IN_APPROVED, target.rel)
        if mode is not None and stat.S_ISLNK(mode):
            self._refuse(tool, "symlink", _THROUGH_SYMLINK, target.rel)

    def check_move(self, tool: str, src: VaultPath, dst: VaultPath) -> None:
        """move_note (and a batch's moves): never into Approved/; out of it only as the daemon's own filing; never
        the sending claim, from or onto."""
        for end in (src, dst):
            if self.is_sending_claim(end):
                self._refuse(tool, "sending_claim", _SENDING_CLAIM, end.rel, source=src.rel)
        if self.in_approval(dst):
            self._refuse(tool, "into_approved", _INTO_APPROVED, dst.rel, source=src.rel)
        if not self.in_approval(src):
            return
        if not self.daemon_filing:
            self._refuse(tool, "out_of_approved", _OUT_OF_APPROVED, dst.rel, source=src.rel)
        if not any(same_directory(dst.abs.parent, folder) for folder in self.filing_folders):
            self._refuse(tool, "not_a_filing_folder", _DAEMON_FILING_ONLY, dst.rel, source=src.rel)

    def _refuse(self, tool: str, reason: str, message: str, path: str, **fields: Any) -> NoReturn:
        self.audit.write("approval_guard_refused", "warning", tool=tool, reason=reason, path=path, **fields)
        raise PermissionDenied(message, path=path, **fields)
