"""An agent's write to a control note becomes a proposal beside it: nothing an MCP client writes
steers H0 until the owner confirms it in Obsidian (h0.vault.control says how).

`write_note` / `update_frontmatter` (alone or in `apply_changes`) on `H0_Rules.md`,
`H0_Profile.md`, `H0_Memory.md` — or on their `.pending.md` proposals — write the proposal
(`H0_Rules.pending.md`) instead, stamped with who proposed it and never confirmed; the answer
names the proposal's path. `if_match` and `create_only` apply to the note the agent named. A
move of a control note or a proposal, either way, is refused. The daemon's own server writes
control notes directly: its one client is H0 (lessons, the learned section of the profile).
"""

from __future__ import annotations

from typing import Any, NoReturn

from h0.errors import Conflict, PermissionDenied
from h0.printable import printable
from h0.vault import AuditLog, Vault
from h0.vault.audit import note_timestamp
from h0.vault.control import control_note_of, current_hash, is_pending, pending_name, proposal_frontmatter
from h0.vault.note import Note
from h0.vault.notefile import changed_since_read
from h0.vault.paths import VaultPath

_NO_MOVE = (
    "{note} steers H0 and is the owner's: no tool moves it, renames it or moves a note onto it (or onto "
    "its proposal). To propose a change, write it with write_note: the owner confirms it in Obsidian."
)


class ControlProposals:
    """Turns an MCP client's write to a control note into a proposal beside it; refuses moves of one."""

    def __init__(self, vault: Vault, audit: AuditLog) -> None:
        self.vault = vault
        self.audit = audit

    def note_of(self, target: VaultPath) -> str | None:
        return control_note_of(self.vault.root, target)

    def propose(
        self,
        tool: str,
        note: str,
        target: VaultPath,
        frontmatter: dict[str, Any],
        body: str,
        if_match: str | None,
        create_only: bool,
        client: str | None,
    ) -> Note:
        """Write the proposal of `note` (the whole note as the agent would have it); the live note is untouched."""
        named = current_hash(self.vault.root, pending_name(note) if is_pending(target) else note)
        if create_only and named is not None:
            raise Conflict(f"A note already exists at {target.rel}.", path=target.rel)
        if if_match is not None and if_match != named:
            raise changed_since_read(target.rel, if_match, named)
        by = f"{tool} from {printable(client or 'an unnamed MCP client', 80)} at {note_timestamp()}"
        fm = proposal_frontmatter(frontmatter, note, by, current_hash(self.vault.root, note))
        return self.vault.write_note(pending_name(note), fm, body)

    def propose_update(
        self,
        tool: str,
        note: str,
        target: VaultPath,
        changes: dict[str, Any],
        remove: list[str],
        if_match: str | None,
        client: str | None,
    ) -> Note:
        """update_frontmatter on a control note (or its proposal): the proposal of the note so changed."""
        base = self.vault.read_note(target.rel)
        if if_match is not None and base.hash != if_match:
            raise Conflict(f"{base.path} changed since it was read.", path=base.path)
        merged = {k: v for k, v in base.frontmatter.items() if k not in remove}
        merged.update(changes)
        return self.propose(tool, note, target, merged, base.body, None, False, client)

    def check_move(self, tool: str, src: VaultPath, dst: VaultPath) -> None:
        for end in (src, dst):
            if note := self.note_of(end):
                self._refuse(tool, note, src.rel, dst.rel)

    def _refuse(self, tool: str, note: str, source: str, destination: str) -> NoReturn:
        self.audit.write(
            "control_note_refused", "warning", tool=tool, reason="move", path=destination, source=source, note=note
        )
        raise PermissionDenied(_NO_MOVE.format(note=note), path=destination, source=source, reason="control_note")
