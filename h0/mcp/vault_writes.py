"""The vault server's writes: each one guarded, stamped on an agent's draft, audited, and recorded
with who made it — one at a time, or as a batch of changes (`apply_changes`). An agent's write to
a control note becomes a proposal beside it (h0.mcp.vault_control). No write of an MCP client makes
a note less private (h0.vault.disclosure.Disclosure.unprivating)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from loguru import logger
from pydantic import BaseModel, Field

from h0.errors import H0Error, NotFound, ParseError, PermissionDenied
from h0.mcp.base import current_client
from h0.mcp.live_index import LiveIndex
from h0.mcp.vault_control import ControlProposals
from h0.mcp.vault_guard import ApprovalGuard
from h0.mcp.vault_models import ChangeResult, ChangesApplied, ItemError, MoveResult
from h0.printable import printable
from h0.state import StateDB
from h0.vault import AuditLog, Vault
from h0.vault.audit import note_timestamp
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.last_change import CHANGED_BY, H0_CLIENT, name_key
from h0.vault.layout import DRAFTS
from h0.vault.note import Note
from h0.vault.paths import VaultPath, folder_key

# A note as a change sees it: (path, frontmatter or None when it cannot be read, body).
Seen = tuple[str, dict[str, Any] | None, str | None]
# The audit lines of a batch, written together when it ends: (event, fields).
Written = list[tuple[str, dict[str, Any]]]


class WriteChange(BaseModel):
    """write_note's arguments, as one change."""

    op: Literal["write"]
    path: str = Field(description="Vault-relative path; folders are created as needed.")
    frontmatter: dict[str, Any] = Field(description="The complete frontmatter mapping to write.")
    body: str = Field(description="The note body (Markdown).")
    if_match: str | None = Field(default=None, description="Hash from read_note: 'conflict' if the note changed.")
    create_only: bool = Field(default=False, description="'conflict' if the note already exists.")


class UpdateChange(BaseModel):
    """update_frontmatter's arguments, as one change."""

    op: Literal["update"]
    path: str
    set: dict[str, Any] = Field(description="Keys to add or change in the frontmatter.")
    remove: list[str] = Field(default_factory=list, description="Keys to delete from the frontmatter.")
    if_match: str | None = None


class MoveChange(BaseModel):
    """move_note's arguments, as one change."""

    op: Literal["move"]
    source: str
    destination: str = Field(description="New vault-relative path, or a folder ending in '/'.")
    overwrite: bool = False
    rename_if_exists: bool = False
    set_frontmatter: dict[str, Any] | None = None


Change = WriteChange | UpdateChange | MoveChange


def item_error(path: str, error: H0Error) -> ItemError:
    """The error as its item's answer, under the path the caller gave (the error's details keep the resolved one)."""
    return ItemError(
        path=path, error=error.code, message=error.message, details=json.loads(json.dumps(error.details, default=str))
    )


class NoteWriter:
    """Every write and move a vault tool makes goes through here: the guard first, then the vault,
    then the audit line and the record of who wrote what (at once, or when a batch ends)."""

    def __init__(
        self,
        vault: Vault,
        guard: ApprovalGuard,
        audit: AuditLog,
        live: LiveIndex,
        state_dir: Path | None,
        *,
        daemon_filing: bool,
        gate: Callable[[], Disclosure] | None = None,
        keys: Callable[[frozenset[str], str | None], frozenset[str]] = lambda keys, besides: frozenset(),
    ) -> None:
        self.vault = vault
        # The gate as it is at each change (the server's: the private folders of now, the index's private people).
        self.gate = gate if gate is not None else lambda: Disclosure.for_vault(vault.root)
        self.private_keys = keys  # the thread keys a private note holds (the server's index answers)
        self.guard = guard
        self.audit = audit
        self.live = live
        self.daemon_filing = daemon_filing
        self.record = WriteRecord(vault.root, state_dir, daemon_filing)
        self.proposals = ControlProposals(vault, audit)

    def write(
        self,
        tool: str,
        path: str,
        frontmatter: dict[str, Any],
        body: str,
        if_match: str | None,
        create_only: bool,
        done: Written | None = None,
    ) -> Note:
        target = self.vault.resolve(path, write=True)
        self.guard.check_write(tool, target)
        self._keep_private(tool, self._current(target.rel), (target.rel, frontmatter, body))
        if not self.daemon_filing and (control := self.proposals.note_of(target)):
            proposal = self.proposals.propose(
                tool, control, target, frontmatter, body, if_match, create_only, self.record.client()
            )
            return self._written(done, tool, proposal, proposal_for=control)
        frontmatter = {**frontmatter, **self._stamp(tool, target)}
        note = self.vault.write_note(target.rel, frontmatter, body, if_match=if_match, create_only=create_only)
        return self._written(done, tool, note)

    def update(
        self,
        tool: str,
        path: str,
        changes: dict[str, Any],
        remove: list[str],
        if_match: str | None,
        done: Written | None = None,
    ) -> Note:
        target = self.vault.resolve(path, write=True)
        self.guard.check_write(tool, target)
        before = self._current(target.rel)
        if before is not None:
            kept = {k: v for k, v in (before[1] or {}).items() if k not in remove}
            self._keep_private(
                tool, before, (target.rel, {**kept, **changes} if before[1] is not None else None, before[2])
            )
        if not self.daemon_filing and (control := self.proposals.note_of(target)):
            proposal = self.proposals.propose_update(
                tool, control, target, changes, remove, if_match, self.record.client()
            )
            return self._written(done, tool, proposal, proposal_for=control)
        changes = {**changes, **self._stamp(tool, target)}
        note = self.vault.update_frontmatter(target.rel, changes, remove=tuple(remove), if_match=if_match)
        return self._written(done, tool, note)

    def move(
        self,
        tool: str,
        source: str,
        destination: str,
        overwrite: bool,
        rename_if_exists: bool,
        set_frontmatter: dict[str, Any] | None,
        done: Written | None = None,
    ) -> MoveResult:
        src = self.vault.resolve(source, write=True)
        dst = self.vault.destination_for(destination, src)
        self.guard.check_move(tool, src, dst)
        if not self.daemon_filing:
            self.proposals.check_move(tool, src, dst)
        before = self._current(src.rel)
        if before is not None:
            after = {**before[1], **(set_frontmatter or {})} if before[1] is not None else None
            self._keep_private(tool, before, (dst.rel, after, before[2]))
        moved = self.vault.move_note(
            src.rel, dst.rel, overwrite=overwrite, rename_if_exists=rename_if_exists, set_frontmatter=set_frontmatter
        )
        self._log(done, "note_moved", tool=tool, source=moved.source, destination=moved.destination, hash=moved.hash)
        return MoveResult(moved=True, **asdict(moved))

    def apply_all(self, changes: list[Change]) -> ChangesApplied:
        """Each change as its own tool would make it, in order; one that fails is answered in its place."""
        results: list[ChangeResult] = []
        done: Written = []
        try:
            with self.vault.batch():  # each folder fsynced once, at the end (before answering)
                for change in changes:
                    try:
                        results.append(self._apply(change, done))
                    except H0Error as error:
                        failed = item_error(change.source if isinstance(change, MoveChange) else change.path, error)
                        results.append(ChangeResult(ok=False, **failed.model_dump()))
        finally:
            self.audit.write_many(done)
            self.record.record(done)
        return ChangesApplied(results=results)

    def _apply(self, change: Change, done: Written) -> ChangeResult:
        if isinstance(change, WriteChange):
            note = self.write(
                "apply_changes", change.path, change.frontmatter, change.body, change.if_match, change.create_only, done
            )
            return ChangeResult(ok=True, path=note.path, hash=note.hash)
        if isinstance(change, UpdateChange):
            note = self.update("apply_changes", change.path, change.set, change.remove, change.if_match, done)
            return ChangeResult(ok=True, path=note.path, hash=note.hash)
        moved = self.move(
            "apply_changes",
            change.source,
            change.destination,
            change.overwrite,
            change.rename_if_exists,
            change.set_frontmatter,
            done,
        )
        # The move's own answer, its destination as where the note is now.
        return ChangeResult(ok=True, path=moved.destination, **moved.model_dump(exclude={"moved", "destination"}))

    def _current(self, rel: str) -> Seen | None:
        """The note at `rel` as it is now (None: there is none; frontmatter None: it cannot be read, so it is
        private until it can), to judge what a change does to its privacy."""
        if self.daemon_filing:
            return None
        try:
            note = self.vault.read_note(rel)
        except NotFound:
            return None
        except ParseError:
            return rel, None, None
        return rel, note.frontmatter, note.body

    def _keep_private(self, tool: str, before: Seen | None, after: Seen) -> None:
        """Refuse (permission_denied, with the reason) a change that would make a note less private."""
        if self.daemon_filing or before is None:
            return
        keys = thread_keys(before[0], before[1] or {}) | thread_keys(after[0], after[1] or {})
        why = self.gate().unprivating(before, after, self.private_keys(keys, before[0]) if keys else frozenset())
        if why is not None:
            raise PermissionDenied(
                f"{why}. An MCP client cannot make a note less private; its owner can, in Obsidian.",
                path=before[0],
                tool=tool,
                reason="private",
            )

    def _written(self, done: Written | None, tool: str, note: Note, **proposal_for: str) -> Note:
        """`note`, said written (`proposal_for`: the control note it proposes a change to)."""
        self._log(done, "note_written", tool=tool, path=note.path, hash=note.hash, **proposal_for)
        return note

    def _log(self, done: Written | None, event: str, **fields: Any) -> None:
        """An audit line (and the record of who wrote what) now, or (in a batch) with the batch's others when it ends."""
        fields["client"] = self.record.client()
        self.live.changed([p for p in (fields.get("path"), fields.get("source"), fields.get("destination")) if p])
        if done is None:
            self.audit.write(event, **fields)
            self.record.record([(event, fields)])
        else:
            done.append((event, fields))

    def _stamp(self, tool: str, target: VaultPath) -> dict[str, str]:
        """On a draft an agent writes (not H0 itself): who wrote it, through which tool, when — shown on the
        draft (and, from the state database, on the dashboard). Whatever the agent put there is replaced."""
        if self.daemon_filing or folder_key(target.top) != folder_key(DRAFTS):
            return {}
        client = printable(self.record.client() or "an unnamed MCP client", 80)
        return {CHANGED_BY: f"{tool} from {client} at {note_timestamp()}"}


class WriteRecord:
    """Who wrote which note through this server, in H0's state database (h0.vault.last_change reads it)."""

    def __init__(self, root: Path, state_dir: Path | None, daemon: bool) -> None:
        self.root = root
        self.state_dir = state_dir
        self.daemon = daemon
        self._state: StateDB | None = None
        self._failed = False

    def client(self) -> str | None:
        return H0_CLIENT if self.daemon else current_client()

    def record(self, events: Written) -> None:
        rows = [
            (name_key(path), path, fields.get("hash"), str(fields.get("tool")), fields.get("client"))
            for event, fields in events
            if (path := fields.get("path") if event == "note_written" else fields.get("destination"))
        ]
        if not rows or self._failed:
            return
        try:
            if self._state is None:
                self._state = StateDB.for_vault(self.root, self.state_dir)
            self._state.record_note_writes(rows)
        except H0Error as error:
            # Without the record a change made just before approval is still seen by its file
            # time; say once that who made it will not be named.
            self._failed = True
            logger.warning("cannot record note writes in H0's state database: {}", error.message)
