"""Control notes: the root notes that steer H0, and a change to one that waits for the owner.

`H0_Rules.md` (what triage does), `H0_Profile.md` (who writes the replies) and `H0_Memory.md`
(lessons every prompt carries) steer everything H0 does, so only the owner changes them:

- An MCP client (an agent) never writes one. Its write — `write_note`, `update_frontmatter`,
  `apply_changes` — becomes a *proposal*: the whole note as it would be, written beside it as
  `H0_Rules.pending.md` with who proposed it (`h0_proposed_by`), the version it was made over
  (`h0_proposed_over`) and `h0_confirm: false`. Nothing takes effect. Moves of a control note
  or a proposal are refused. No MCP write can set `h0_confirm`: the vault server forces it false.
- The owner reads the proposal in Obsidian and sets `h0_confirm: true` on it. H0 (the daemon,
  within seconds; `h0 sweep`) then writes it over the control note and deletes the proposal —
  unless the control note changed since the proposal was made (the owner would lose that
  change) or an agent changed the proposal less than the approval settle period before it was
  confirmed (the owner cannot have read that version): then the proposal stays, with the
  reason in `h0_error`, and `h0_confirm` is set back to false.
- An edit made to a control note on disk (Obsidian, or any other program) takes effect at once:
  H0 cannot tell the owner's editor from another program with the same file access. The
  daemon records each such change in the audit log (`control_note_changed`), and `h0 status`
  and the dashboard show it, so a change the owner did not make is seen.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from h0.platform.fs import regular_file
from h0.vault.layout import MEMORY_NOTE, PROFILE_NOTE
from h0.vault.note import content_hash
from h0.vault.paths import VaultPath, folder_key

RULES_NOTE = "H0_Rules.md"
CONTROL_NOTES = (RULES_NOTE, PROFILE_NOTE, MEMORY_NOTE)
PENDING_SUFFIX = ".pending.md"

PROPOSED_FOR = "h0_proposed_for"
PROPOSED_BY = "h0_proposed_by"
PROPOSED_OVER = "h0_proposed_over"  # the control note's hash when the proposal was made ("none": it had none)
CONFIRM = "h0_confirm"
HOW_TO = "h0_how_to_confirm"
ERROR = "h0_error"
PENDING_KEYS = (PROPOSED_FOR, PROPOSED_BY, PROPOSED_OVER, CONFIRM, HOW_TO, ERROR)


def pending_name(note: str) -> str:
    """Where a proposed change to `note` waits: `H0_Rules.md` → `H0_Rules.pending.md`."""
    return note.removesuffix(".md") + PENDING_SUFFIX


_BY_KEY = {folder_key(name): name for name in CONTROL_NOTES} | {
    folder_key(pending_name(name)): name for name in CONTROL_NOTES
}


def control_note_of(root: Path, target: VaultPath) -> str | None:
    """The control note `target` is (or is the proposal of), by its name at the vault's root as the
    vault compares names (case, Unicode forms) and by where it really is (a symlinked folder); else None."""
    if "/" not in target.rel and (name := _BY_KEY.get(folder_key(target.rel))):
        return name
    real = Path(os.path.realpath(target.abs))
    if real.parent == Path(os.path.realpath(root)):
        return _BY_KEY.get(folder_key(real.name))
    return None


def is_pending(target: VaultPath) -> bool:
    return folder_key(target.rel.rsplit("/", 1)[-1]).endswith(PENDING_SUFFIX)


def confirmed(frontmatter: Mapping[str, Any]) -> bool:
    """The owner's confirmation on a proposal: `h0_confirm: true` (also yes, 1, as Obsidian's checkbox writes)."""
    value = frontmatter.get(CONFIRM)
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "yes", "1")


def proposal_frontmatter(
    frontmatter: Mapping[str, Any], note: str, by: str, over: str | None, error: str | None = None
) -> dict[str, Any]:
    """The frontmatter of a proposal: the proposed note's own (whatever pending keys it carried are
    replaced) and H0's keys saying what it is, who proposed it and how to confirm it — never confirmed."""
    own = applied_frontmatter(frontmatter)
    stamped: dict[str, Any] = {
        PROPOSED_FOR: note,
        PROPOSED_BY: by,
        PROPOSED_OVER: over or "none",
        CONFIRM: False,
        HOW_TO: (
            f"An agent proposed this version of {note}; it has no effect until you confirm it. Read it, then set "
            f"{CONFIRM} to true to make it {note}, or delete this note to refuse it."
        ),
    }
    if error:
        stamped[ERROR] = error
    return {**own, **stamped}


def applied_frontmatter(frontmatter: Mapping[str, Any]) -> dict[str, Any]:
    """A proposal's frontmatter as the control note gets it: without H0's proposal keys."""
    return {k: v for k, v in frontmatter.items() if k not in PENDING_KEYS}


MAX_CONTROL_BYTES = 1024 * 1024  # past this, a control note is not read whole (H0's readers stop far sooner)


def current_hash(root: Path, note: str) -> str | None:
    """The content hash of a control note as it is on disk (the hash `read_note` gives); None if absent."""
    try:
        with regular_file(Path(root) / note) as handle:
            return content_hash(handle.read(MAX_CONTROL_BYTES))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.EINVAL:  # a pipe, socket or device under the note's name: no note H0 reads
            return None
        raise


@dataclass(frozen=True, slots=True)
class Proposal:
    """A proposal waiting beside a control note, as the reports show it."""

    note: str
    path: str
    proposed_by: str
    confirmed: bool
    error: str | None
