"""Keep an eye on the control notes: apply the proposals the owner confirmed, record changes made outside H0.

The daemon calls `ControlWatch.check()` every couple of seconds and `h0 sweep` once; it costs a
`stat` of each control note and of each proposal while nothing changes. What it does is said in
h0.vault.control; every step is a line in the daemon's audit log (`Logs/h0_<date>.jsonl`):

- `control_note_confirmed` — the owner's confirmed proposal became the control note;
- `control_note_not_confirmed` — a confirmed proposal H0 did not apply, with why (also on the proposal);
- `control_note_changed` — a control note changed on disk, not by H0's own write (the first look
  after start only remembers each note; what changed while no daemon ran is not reported).

Never raises for a note: a proposal or a note that cannot be read is logged and left as it is.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from loguru import logger

from h0.errors import H0Error
from h0.platform.fileio import FileSignature, file_signature
from h0.state import StateDB
from h0.vault.audit import AuditLog
from h0.vault.control import (
    CONFIRM,
    CONTROL_NOTES,
    ERROR,
    PROPOSED_BY,
    PROPOSED_OVER,
    Proposal,
    applied_frontmatter,
    confirmed,
    current_hash,
    pending_name,
)
from h0.vault.last_change import H0_CLIENT, name_key
from h0.vault.note import Note
from h0.vault.store import Vault

OUTSIDE = "outside H0's tools (in Obsidian or by another program)"


@dataclass(frozen=True, slots=True)
class Seen:
    signature: FileSignature
    hash: str | None


def proposals(vault: Vault) -> list[Proposal]:
    """The proposals waiting beside the control notes (for `h0 status` and the dashboard)."""
    found = []
    for note in CONTROL_NOTES:
        path = pending_name(note)
        if not os.path.lexists(vault.root / path):
            continue
        try:
            fm = vault.read_note(path).frontmatter
        except H0Error as exc:
            found.append(Proposal(note, path, "(cannot be read)", False, exc.message))
            continue
        by, problem = fm.get(PROPOSED_BY), fm.get(ERROR)
        found.append(
            Proposal(note, path, str(by) if by else "(not said)", confirmed(fm), str(problem) if problem else None)
        )
    return found


class ControlWatch:
    """Applies confirmed proposals and notices changes to the control notes of one vault (thread-safe)."""

    def __init__(self, vault: Vault, audit: AuditLog, state: StateDB | None, settle_seconds: float) -> None:
        self.vault = vault
        self.audit = audit
        self.state = state
        self.settle_seconds = settle_seconds
        self._seen: dict[str, Seen] = {}
        self._lock = threading.Lock()

    def check(self) -> None:
        with self._lock:
            for note in CONTROL_NOTES:
                try:
                    self._apply_if_confirmed(note)
                    self._notice(note)
                except (H0Error, OSError) as exc:
                    logger.warning("control note {}: {}", note, getattr(exc, "message", None) or exc)

    # ------------------------------------------------------------------ proposals

    def _apply_if_confirmed(self, note: str) -> None:
        pending = pending_name(note)
        if not os.path.lexists(self.vault.root / pending):
            return
        proposal = self.vault.read_note(pending)
        if not confirmed(proposal.frontmatter):
            return
        reason = self._why_not(note, proposal)
        if reason is not None:
            self.vault.update_frontmatter(pending, {CONFIRM: False, ERROR: reason}, if_match=proposal.hash)
            self.audit.write("control_note_not_confirmed", "warning", note=note, path=pending, reason=reason)
            logger.warning("{}: not applied — {}", pending, reason)
            return
        written = self.vault.write_note(note, applied_frontmatter(proposal.frontmatter), proposal.body)
        os.unlink(self.vault.root / pending)
        self._record(written)
        self._seen[note] = Seen(file_signature(self.vault.root / note), written.hash)
        by = proposal.frontmatter.get(PROPOSED_BY)
        self.audit.write("control_note_confirmed", note=note, hash=written.hash, proposed_by=str(by) if by else None)
        logger.info("{}: the change you confirmed ({}) is in effect", note, by or "a proposal")

    def _why_not(self, note: str, proposal: Note) -> str | None:
        """Why a confirmed proposal must not be applied (None: apply it)."""
        over = str(proposal.frontmatter.get(PROPOSED_OVER) or "")
        live = current_hash(self.vault.root, note) or "none"
        if over != live:
            return (
                f"{note} changed after this proposal was made, and applying it would undo that change. Compare the "
                f"two and bring what you want over into {note} yourself, then delete this note."
            )
        writes = self._writes(pending_name(note))
        by_agent = [w for w in writes if w.get("client") != H0_CLIENT]
        if by_agent:
            last = by_agent[-1]
            if last.get("note_hash") == proposal.hash:
                return "This version was written by an agent, confirmation and all; H0 takes only yours."
            try:
                confirmed_at = os.stat(self.vault.root / pending_name(note)).st_mtime
            except OSError:
                return None
            gap = confirmed_at - float(last.get("at") or 0.0)
            if gap < self.settle_seconds:
                return (
                    f"An agent changed this proposal {max(gap, 0.0):.0f} s before you confirmed it, so you may not "
                    f"have read this version. Read it, then set {CONFIRM} to true again."
                )
        return None

    # ------------------------------------------------------------------ changes on disk

    def _notice(self, note: str) -> None:
        path = self.vault.root / note
        signature = file_signature(path)
        before = self._seen.get(note)
        if before is not None and before.signature == signature:
            return
        digest = current_hash(self.vault.root, note) if signature is not None else None
        self._seen[note] = Seen(signature, digest)
        if before is None or before.hash == digest:
            return  # the first look remembers; a touch that changed nothing is no change
        if digest is not None and any(
            w.get("note_hash") == digest and w.get("client") == H0_CLIENT for w in self._writes(note)
        ):
            return  # H0's own write: a lesson, the learned voice, a rule's timeout, a confirmed proposal
        self.audit.write(
            "control_note_changed", "warning", note=note, hash=digest, by=OUTSIDE, removed=digest is None or None
        )
        logger.warning("{} changed {}; the change is in effect", note, OUTSIDE)

    def _writes(self, name: str) -> list[dict[str, Any]]:
        if self.state is None:
            return []
        try:
            return self.state.note_writes(name_key(name))
        except H0Error as error:
            logger.debug("note writes of {} not read: {}", name, error.message)
            return []

    def _record(self, written: Note) -> None:
        if self.state is None:
            return
        try:
            self.state.record_note_writes(
                [(name_key(written.path), written.path, written.hash, "owner_confirmed", H0_CLIENT)]
            )
        except H0Error as error:
            logger.debug("confirmed write not recorded: {}", error.message)
