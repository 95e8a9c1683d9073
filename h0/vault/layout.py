"""The vault's folder skeleton and `h0 init`."""

from __future__ import annotations

from pathlib import Path

NEEDS_ACTION = "Needs_Action"
DRAFTS = "Drafts"
APPROVED = "Approved"
REJECTED = "Rejected"
DONE = "Done"
LOGS = "Logs"
DRAFTING_STREAM = "drafting"  # Logs/drafting_<date>.jsonl: what H0 wrote, what was sent, how alike
FAILED = "Logs/failed"
OUTBOX = "Outbox"
BRIEFINGS = "Briefings"
# H0's notes at the vault's root, each read by its own code (the owner's profile and lessons).
PROFILE_NOTE = "H0_Profile.md"
MEMORY_NOTE = "H0_Memory.md"

FOLDERS = (NEEDS_ACTION, DRAFTS, APPROVED, REJECTED, DONE, LOGS, FAILED, OUTBOX)
NOTE_FOLDERS = (NEEDS_ACTION, DRAFTS, APPROVED, REJECTED, DONE, FAILED)
# A folder is an H0 vault when it holds one of the folders where H0's work lives (`h0 init` makes
# them all; the bundled vault/ ships them). A home folder or an Obsidian vault without H0 has none.
WORK_FOLDERS = (NEEDS_ACTION, DRAFTS, APPROVED)


def is_h0_vault(root: Path) -> bool:
    """Whether `root` is an H0 vault: a folder holding Needs_Action/, Drafts/ or Approved/."""
    return any((root / name).is_dir() for name in WORK_FOLDERS)


def init_vault(root: Path) -> list[str]:
    """Create the missing H0 folders inside an existing vault; return those created.

    Nothing that exists is touched. The vault folder itself must exist: creating it
    silently would hide a typo in the path.
    """
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder; create the vault (or open it in Obsidian) first.")
    created: list[str] = []
    for name in FOLDERS:
        folder = root / name
        if not folder.exists():
            folder.mkdir(parents=True)
            created.append(name)
    return created
