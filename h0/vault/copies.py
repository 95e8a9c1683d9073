"""The names sync tools give the copies they make of a note, and the name each copy is a copy of.

Vaults synced between a computer and a phone grow copies: Syncthing keeps the losing side of a
conflict as `note.sync-conflict-20261128-101010-ABCDEFG.md`, iCloud Drive adds a number
(`note 2.md`), Dropbox, Nextcloud and Obsidian Sync a parenthesis (`note (conflicted copy
2026-11-28).md`, `note (Mara's conflicted copy 2026-11-28).md`, `note (Mara's iPhone).md`), and
browsers and Google Drive a number in one (`note (1).md`). `original_name` takes those marks off
(all of them, however many a copy of a copy has); `is_copy_name` says whether there was one.

A name can look like a copy without being one ("Untitled 2.md" is Obsidian's own second new note),
so nothing is refused for its name alone: the send path asks only to wait while a note of the
original name is in Approved/ (h0.mail.outgoing), and to tell a sync tool's copy of a `send_anyway`
draft from another draft (h0.mail.compose.drafts). Not recognised: OneDrive's `note-LAPTOP.md`
(a computer's name after a hyphen is any hyphenated name); such a copy is still never sent twice
when its content is the same, which is what the send's identity is made of.
"""

from __future__ import annotations

import re

from h0.vault.paths import NOTE_SUFFIX

_COPY_MARKS = (
    re.compile(r"\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}$"),  # Syncthing
    re.compile(r" \([^()]*conflict[^()]*\)$", re.IGNORECASE),  # Dropbox, Nextcloud, Obsidian Sync
    re.compile(r" \([^()]*['’]s [^()]+\)$"),  # a device's copy: "(Mara's iPhone)", "(Mara’s MacBook Pro)"
    re.compile(r" \(\d{1,3}\)$"),  # "(1)": browsers, Google Drive, Windows
    re.compile(r" (?:[2-9]|[1-9]\d)$"),  # iCloud Drive: " 2"
)


def original_name(name: str) -> str:
    """The name `name` is a sync tool's copy of (`note 2.md` → `note.md`), or `name` itself."""
    stem, suffix = (name[: -len(NOTE_SUFFIX)], name[-len(NOTE_SUFFIX) :]) if _is_note(name) else (name, "")
    while True:
        for mark in _COPY_MARKS:
            shorter = mark.sub("", stem, count=1)
            if shorter != stem and shorter.strip():
                stem = shorter
                break
        else:
            return stem + suffix


def is_copy_name(name: str) -> bool:
    """Whether `name` carries a sync tool's copy mark."""
    return original_name(name) != name


def _is_note(name: str) -> bool:
    return name.lower().endswith(NOTE_SUFFIX)
