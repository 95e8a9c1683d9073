"""The bundled demo vault: its examples put in place on first use, and `h0 demo reset` to run it again.

Git tracks only the demo vault's skeleton (its folders, `.gitkeep` files) and the marker: a demo run
moves and rewrites the examples, and a tracked example moved to `Done/` left the checkout dirty. So the
first command that runs the demo vault (`h0 watch`, `h0 sweep`, `h0 mcp …`) writes the examples below
into it (`seed_demo`; every file it writes is git-ignored), once, and records that in the vault's
`.h0/`. The demo vault (the repo's `vault/`, or a copy of it) then holds two example emails:
`EMAIL_example-001` already triaged, its reply waiting in `Drafts/reply-example-001.md`
for the human to drag into `Approved/` (a send to `Outbox/`: nothing really leaves), and
`EMAIL_example-002`, a newsletter still `pending` that triage archives.

Resetting restores those notes (and `H0_Rules.md`, `H0_Profile.md`, whose learned section a run rewrites) from the copies below, deletes what a
demo run wrote — every other note in H0's folders, `Logs/*.jsonl`, `Outbox/*.eml`,
`H0_Dashboard.md`, `Briefings/` — and clears the vault's send ledger in H0's state
database (outside the vault), without which the re-approved example would be answered
"already sent" and nothing visible would happen.

It must never wipe a real vault, so it refuses unless every one of these holds: the vault
holds the demo marker file `.h0-demo` (shipped in the bundled vault and copied with it;
`h0 init` never writes it; delete it and the vault is yours), MAIL_BACKEND is `outbox`,
and the vault's ledger holds no send through a real backend (gmail, smtp). It takes the
vault's daemon lock, so it never runs under a live `h0 watch`. It deletes files only directly in
H0's own folders (never in a subfolder a person made) and refuses a vault where one of those
folders is a link to somewhere else.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from h0.drafting.profile import DEFAULT_PROFILE_TEXT
from h0.errors import InvalidRequest
from h0.platform.fs import read_head, write_new
from h0.state import DB_FILE, state_dir_for
from h0.vault.layout import DONE, DRAFTS, FOLDERS, LOGS, MEMORY_NOTE, NEEDS_ACTION, NOTE_FOLDERS, OUTBOX, PROFILE_NOTE
from h0.vault.sending_computer import SENDER_NOTE

if TYPE_CHECKING:
    from h0.config import Settings

MARKER = ".h0-demo"
DASHBOARD = "H0_Dashboard.md"
BRIEFINGS = "Briefings"
KEEP = ".gitkeep"

MARKER_TEXT = """\
This folder is H0's demo vault. `h0 demo reset` puts its example notes back and deletes what
H0 wrote here (Done/, Logs/, Outbox/, H0_Dashboard.md, Briefings/ and the other notes in its
folders) — only in a folder holding this file, and never in one H0 sent real mail from.
Delete this file to make the vault your own: `h0 demo reset` then refuses to touch it.
"""

EXAMPLE_EMAIL = """\
---
type: email
status: awaiting_approval
message_id: example-001
rfc822_message_id: "<CAexample001@mail.example.com>"
thread_id: example-thread-001
from: "Dana Rivera <dana.rivera@example.com>"
to: you@example.com
cc: []
subject: Can we move Thursday's review to Friday?
received: 2026-11-20T09:14:00Z
labels: [INBOX, UNREAD]
has_attachments: false
attachment_names: []
decision: draft_reply
confidence: 0.6
reasoning: A direct question from dana.rivera@example.com (?)
triaged_at: 2026-11-20T09:15:02Z
triaged_by: rules
draft: Drafts/reply-example-001.md
---
```text
Hi,

Something came up on Thursday afternoon. Could we move the design review to Friday at
10:00 instead? Let me know if that works for you.

Thanks,
Dana
```
"""

EXAMPLE_REPLY = """\
---
to: dana.rivera@example.com
subject: "Re: Can we move Thursday's review to Friday?"
status: pending_approval
reply_to_message_id: example-001
thread_id: example-thread-001
source: Needs_Action/EMAIL_example-001.md
draft_id: reply-example-001
---
Hi Dana,

Friday at 10:00 works for me. I'll move the invite.

Best,

%% h0: not sent below %%
Replying to [[EMAIL_example-001]] — H0 drafted this and the text above was already edited:
move this note to Approved/ to send it (the demo's outbox backend writes it to Outbox/),
or to Rejected/ to drop it.
"""

EXAMPLE_NEWSLETTER = """\
---
type: email
status: pending
message_id: example-002
rfc822_message_id: "<weekly-47@news.example.org>"
thread_id: example-thread-002
from: "The Example Weekly <newsletter@news.example.org>"
to: you@example.com
cc: []
subject: "The Example Weekly #47: five tools for calmer mornings"
received: 2026-11-21T06:00:00Z
labels: [INBOX, UNREAD]
has_attachments: false
attachment_names: []
---
```text
This week: five tools for calmer mornings, a reader's note-taking setup, and the
one-line habit that saves an hour a week.

You are receiving this email because you subscribed to The Example Weekly.
Unsubscribe at any time from your email preferences.
```
"""

# Vault-relative path → the text shipped (the bundled vault's files are byte-identical:
# tests/test_demo.py checks it).
EXAMPLES: dict[str, str] = {
    MARKER: MARKER_TEXT,
    f"{NEEDS_ACTION}/EMAIL_example-001.md": EXAMPLE_EMAIL,
    f"{DRAFTS}/reply-example-001.md": EXAMPLE_REPLY,
    f"{NEEDS_ACTION}/EMAIL_example-002.md": EXAMPLE_NEWSLETTER,
}
# In H0's note folders every file but the examples and .gitkeep was written by a demo run.
SEEDED = ".h0/demo-seeded"  # the examples were put in place once (git-ignored, like all of .h0/)


def shipped() -> dict[str, str]:
    """Every file of the demo as shipped, vault-relative path → text: the examples and the control notes."""
    from h0.triage import RULES_FILENAME
    from h0.triage.default_rules import DEFAULT_RULES_TEXT

    return {**EXAMPLES, RULES_FILENAME: DEFAULT_RULES_TEXT, PROFILE_NOTE: DEFAULT_PROFILE_TEXT}


def is_demo(root: Path) -> bool:
    """Whether `root` is H0's demo vault: it holds the marker file (never a link to one)."""
    marker = Path(root) / MARKER
    return marker.is_file() and not marker.is_symlink()


def seed_demo(root: Path) -> list[str]:
    """Put the demo's files in place in the demo vault, once (the module's docstring says why); the files
    written. Never in a vault without the marker; never over a file that is there; not after a demo run
    (a checkout from before the examples were untracked: `Done/` holds them already)."""
    root = Path(root)
    if not is_demo(root) or (root / SEEDED).exists():
        return []
    ran = any((root / DONE / Path(rel).name).exists() for rel in EXAMPLES if rel != MARKER)
    written = [] if ran else [rel for rel, text in shipped().items() if write_new(root / rel, text)]
    (root / SEEDED).parent.mkdir(exist_ok=True)
    write_new(root / SEEDED, "The demo's examples were put in place; `h0 demo reset` puts them back.\n")
    return written


@dataclass
class ResetReport:
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    sends_forgotten: int = 0

    def line(self, root: Path) -> str:
        return (
            f"Reset the demo vault {root}: restored {len(self.restored)} example file(s), removed "
            f"{len(self.removed)} file(s) H0 or the demo wrote, forgot {self.sends_forgotten} send(s)."
        )


def refusal(root: Path, settings: Settings) -> str | None:
    """Why `root` must not be reset (one line saying what to do), or None if it is H0's demo vault."""
    root = Path(root)
    if not is_demo(root):
        return (
            f"{root} is not H0's demo vault (it has no {MARKER} file), so it is left alone: reset only "
            "ever touches the bundled vault/ or a copy of it. Use --vault to name the demo vault."
        )
    linked = [name for name in (*FOLDERS, BRIEFINGS) if (root / name).is_symlink()]
    if linked:
        return (
            f"{', '.join(linked)} in {root} is a link to another folder: reset deletes files only in the "
            "demo vault's own folders, so it leaves this vault alone."
        )
    if settings.mail_backend != "outbox":
        return (
            f"MAIL_BACKEND={settings.mail_backend}: the demo runs on the outbox backend, and a vault "
            "configured to send real mail is never reset. Unset MAIL_BACKEND to reset the demo."
        )
    real = _real_sends(root, settings)
    if real:
        return (
            f"{root} has sent real mail ({real} send(s) through gmail or smtp in H0's ledger): it is "
            f"not a demo any more, so it is left alone. Delete its {MARKER} file to make that plain."
        )
    return None


def reset_demo(root: Path, settings: Settings) -> ResetReport:
    """Restore the examples, delete the demo's runtime files, forget its sends. The caller holds
    the vault's daemon lock and has checked `refusal()`."""
    root = Path(root)
    refused = refusal(root, settings)
    if refused is not None:
        raise InvalidRequest(refused)
    report = ResetReport()
    for folder in NOTE_FOLDERS:
        for entry in _files(root / folder):
            rel = f"{folder}/{entry.name}"
            if entry.name != KEEP and rel not in EXAMPLES:
                _remove(entry, rel, report)
    for entry in _files(root / LOGS):
        if entry.name.endswith(".jsonl") or f"{LOGS}/{entry.name}" == SENDER_NOTE:
            _remove(entry, f"{LOGS}/{entry.name}", report)
    for entry in _files(root / OUTBOX):
        if entry.name.endswith(".eml"):
            _remove(entry, f"{OUTBOX}/{entry.name}", report)
    dashboard = root / DASHBOARD
    if dashboard.is_file() or dashboard.is_symlink():
        _remove(dashboard, DASHBOARD, report)
    briefings = root / BRIEFINGS
    if briefings.is_symlink():
        _remove(briefings, BRIEFINGS, report)
    elif briefings.is_dir():
        report.removed += sorted(p.relative_to(root).as_posix() for p in briefings.rglob("*") if not p.is_dir())
        shutil.rmtree(briefings)  # rmtree never follows a symlink inside it
    memory = root / MEMORY_NOTE  # lessons a demo run drew (with an LLM): the demo starts without any
    if memory.is_file() or memory.is_symlink():
        _remove(memory, MEMORY_NOTE, report)
    for rel, text in shipped().items():
        path = root / rel
        data = text.encode("utf-8")
        if path.is_symlink() or (path.exists() and not path.is_file() and not path.is_dir()):
            path.unlink()  # a link (never its target), or a pipe or socket under an example's name
        elif path.is_file() and read_head(path, len(data) + 1) == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        report.restored.append(rel)
    report.sends_forgotten = _forget_sends(root, settings)
    return report


def forget_former_demo(root: Path, settings: Settings) -> int:
    """At a fresh demo vault's first run: the sends H0's ledger still holds for this path (a former copy of
    the demo, deleted and cloned again; the ledger lives outside the vault) forgotten, as `reset_demo` does,
    and only where it may (`refusal`). How many were forgotten."""
    return 0 if refusal(root, settings) is not None else _forget_sends(root, settings)


def _files(folder: Path) -> list[os.DirEntry[str]]:
    """The files (and symlinks) directly in `folder`; subfolders are left alone."""
    try:
        with os.scandir(folder) as entries:
            return sorted(
                (e for e in entries if e.is_symlink() or e.is_file(follow_symlinks=False)), key=lambda e: e.name
            )
    except (FileNotFoundError, NotADirectoryError):
        return []


def _remove(entry: os.DirEntry[str] | Path, rel: str, report: ResetReport) -> None:
    os.unlink(entry.path if isinstance(entry, os.DirEntry) else entry)  # a symlink itself, never its target
    report.removed.append(rel)


def _ledger(root: Path, settings: Settings) -> Path | None:
    path = state_dir_for(root, settings.h0_state_dir) / DB_FILE
    return path if path.is_file() else None


def _real_sends(root: Path, settings: Settings) -> int:
    path = _ledger(root, settings)
    if path is None:
        return 0
    with closing(_connect(path)) as db:
        row = db.execute("SELECT COUNT(*) FROM sends WHERE backend IS NOT NULL AND backend != 'outbox'").fetchone()
    return int(row[0])


def _forget_sends(root: Path, settings: Settings) -> int:
    """Clear the vault's send ledger (sends, first-seen attachments); its secret stays."""
    path = _ledger(root, settings)
    if path is None:
        return 0
    with closing(_connect(path)) as db:
        db.execute("BEGIN IMMEDIATE")
        count = db.execute("DELETE FROM sends").rowcount
        db.execute("DELETE FROM approvals")
        db.execute("COMMIT")
    return count


def _connect(path: Path) -> sqlite3.Connection:
    # Straight SQL on the two tables H0's ledger keeps per send; another process (Claude
    # Code's mail server) may have the database open: wait for it rather than fail.
    return sqlite3.connect(path, timeout=30, isolation_level=None)
