"""Could the human have read this version of a note before approving it?

The human approves what they read. A draft whose content changed moments before it arrived
in Approved/ — an agent's write through H0's vault server, an edit by any program with file
access, a file renamed or copied onto its name, H0's own rewrite — was on screen in that form
for at most that long, so it is held with when and by whom ("changed 2 s before you approved
it, outside H0's tools — read it and approve again"). The same goes for an attachment.

Two windows (README, "Only your move sends"):
- `APPROVAL_FRESH_SECONDS` (3 s) for a change by no agent: the human's own edit in Obsidian,
  H0's drafting. Short, because a person who edits a draft and then drags it rarely does both
  within it — Obsidian saves about 2 s after the last keystroke, and reading the draft over
  and reaching for the file list takes longer; a quick edit-then-drag costs one more drag.
- `APPROVAL_SETTLE_SECONDS` (10 s) for a write by an MCP client other than H0's daemon: no
  person edits through MCP, so there the window can be as long as the settle period without
  ever tripping a human.

The moment of arrival is the note's status-change time (a rename sets it; POSIX), or, where
the OS keeps none (Windows), the daemon's move event; a `h0 sweep` on Windows has neither and
relies on the settle rule alone. The last change is the latest of: the note's mtime, the
daemon's last event for the path it was moved from (it sees a rename onto that name, and an
mtime set back), and the writes H0's servers recorded for the note's name (h0.state
`note_writes`), a recorded write whose hash is the note's current one naming who made it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from h0.platform.fs import status_change_time
from h0.vault.paths import folder_key

H0_CLIENT = "H0"  # the client name recorded for the daemon's own writes
SLACK_S = 1.0  # the daemon's event and the server's record of one write may be this far apart


@dataclass(frozen=True, slots=True)
class Arrival:
    """How a note came into Approved/, as the daemon's events saw it (only the daemon can vouch)."""

    kind: str = "unknown"  # moved (from another folder: the human's drag) | written (in place) | unknown
    at: float | None = None  # epoch seconds of the move
    source_changed_at: float | None = None  # the last write event of the path it was moved from


@dataclass(frozen=True, slots=True)
class Change:
    """The last change of a note (or a file) before it was approved."""

    at: float  # epoch seconds
    tool: str | None = None  # the H0 tool that made it; None: not through H0's servers
    client: str | None = None  # the MCP client that called the tool (H0_CLIENT: the daemon)

    @property
    def by_agent(self) -> bool:
        return self.tool is not None and self.client != H0_CLIENT

    def describe(self) -> str:
        if self.tool is None:
            return "outside H0's tools (in Obsidian or by another program)"
        if self.client == H0_CLIENT:
            return "by H0"
        return f"by an agent ({self.tool} from the MCP client {self.client or '(unnamed)'})"


# The frontmatter key the vault server stamps on a draft an agent writes: "write_note from claude-code at …".
CHANGED_BY = "h0_changed_by"


def name_key(path: str) -> str:
    """What note writes are recorded under: the file name, as folders are compared."""
    return folder_key(path.replace("\\", "/").rsplit("/", 1)[-1])


def last_change(
    note_hash: str, mtime: float, writes: Sequence[Mapping[str, Any]], observed_at: float | None = None
) -> Change:
    """The last change to a note whose current content hashes to `note_hash`.

    `writes` are the recorded writes of its name, oldest first; `observed_at` the daemon's
    last event for the path it came from. The latest recorded write names the change when
    it produced these very bytes; otherwise the bytes came from outside H0's tools, at the
    latest of the times known.
    """
    latest = writes[-1] if writes else None
    if latest is not None and latest.get("note_hash") == note_hash:
        change = Change(float(latest["at"]), str(latest.get("tool") or "?"), latest.get("client"))
    else:
        change = Change(max([mtime] + ([float(latest["at"])] if latest is not None else [])))
    if observed_at is not None and observed_at > change.at + SLACK_S:
        change = Change(observed_at)  # touched again after: a rename onto its name, an mtime set back
    return change


def settle_left(*, moved: bool, quiet_for: float, settle_s: float) -> float:
    """Seconds before a note in Approved/ may be sent under the settle rule (APPROVAL_SETTLE_SECONDS): none
    for a note the human moved in; for one written in place (an editor's autosave, a script, an agent), until
    it has been unchanged for `settle_s`. The one rule the daemon, the mail server and the reports ask."""
    return 0.0 if moved else max(0.0, settle_s - quiet_for)


def too_fresh(arrived_at: float, change: Change, *, fresh_s: float, agent_s: float) -> float | None:
    """Seconds from `change` to `arrived_at` when that is too short to have read the result (negative:
    it changed after arriving); None when it had been there long enough."""
    window = max(agent_s, fresh_s) if change.by_agent else fresh_s
    gap = arrived_at - change.at
    return gap if gap < window else None


def arrival_time(info: os.stat_result, observed: float | None = None) -> float | None:
    """When a note arrived in Approved/: the status change its rename made (POSIX), else the
    daemon's observation of the move, else unknown (None)."""
    changed = status_change_time(info)
    return changed if changed is not None else observed


def file_changed_at(info: os.stat_result) -> float:
    """The last change of a file's bytes or identity that the OS records (mtime can be set back; the
    status-change time cannot)."""
    changed = status_change_time(info)
    return max(info.st_mtime, changed) if changed is not None else info.st_mtime


def when(gap: float) -> str:
    """'2 s before', 'less than a second before', '5 s after' (for messages to the human). File times
    tick in steps of a few ms, so a gap within a second either way reads 'less than a second before'."""
    if gap <= -1:
        return f"{-gap:.0f} s after"
    return "less than a second before" if gap < 0.5 else f"{gap:.0f} s before"
