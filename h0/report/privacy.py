"""What the reports may name: the disclosure gate (h0.vault.disclosure) as the vault index answers for it now,
and the phrase every renderer uses for what it counts instead.

H0_Dashboard.md and Briefings/ are notes any MCP client can read, and `h0 status` (text or --json) is read by
whatever runs it, an agent's shell tool included: a private email, draft, send or error — whatever makes it
private for the gate: its marks and tags (a `#private` in its text too), its folder, its thread, a private
person's mail, properties that do not parse — is counted there ("2 private emails"), never named. The collectors
(h0.report.collect, h0.report.briefing's `collect_day`, h0.report.followups) leave it out of their lists and count
it; the renderers only ever see what may be named.

Each collection asks one `ReportGate`, over this process's vault index (`VaultIndex.shared`, the index drafting
uses too) compared with the vault first (`report_view`: a stat of each note, and only the notes changed since the
index last saw them read again). When the index cannot be opened or read, nothing is named: every note and every
address counts as private (fail closed).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from loguru import logger

from h0.config import Settings
from h0.errors import H0Error
from h0.mail.compose.recipients import FIELDS
from h0.vault import Vault
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.index.db import Damaged
from h0.vault.paths import nfc
from h0.vault.values import addresses

T = TypeVar("T")
_PLURAL = {"person": "people", "copy": "copies"}
# Where an audit record says its note went, is, or was: the first found is the one judged.
_NOTE_FIELDS = ("done_path", "returned_to", "failed_path", "path", "note")
# What the index may raise when its file is gone or broken under it: then nothing more is named.
INDEX_ERRORS = (H0Error, Damaged, sqlite3.Error, OSError)


class ReportGate:
    """One collection's questions to the gate: is this note private, is this address a private person's, may
    this audit record be named? Answered by the vault index (`index`), which the gate's rules are kept in
    (h0.vault.index.privacy); `index` None, or an index that fails while asked: everything is private."""

    def __init__(self, index: VaultIndex | None) -> None:
        self.index = index
        self._private: dict[str, bool] = {}  # by path (NFC): the index's answer, asked once per collection
        self.gate: Disclosure | None = None  # the gate, knowing the private people as the index holds them now
        if index is not None:
            try:
                people = index.private_addresses()
            except INDEX_ERRORS as exc:
                self._fail(exc)
            else:
                self.gate = index.disclosure.with_people(lambda: people)

    def private(self, rel: str) -> bool:
        """Whether the note at `rel` may not be named (the gate's answer, from the index)."""
        key = nfc(rel)
        found = self._private.get(key)
        if found is None:
            self.judge([rel])
            found = self._private.get(key, True)
        return found

    def judge(self, paths: Iterable[str]) -> None:
        """Ask the index about these notes at once (a folder's listing): `private` then answers from memory."""
        wanted = [path for path in dict.fromkeys(paths) if nfc(path) not in self._private]
        if not wanted:
            return
        shown: set[str] = set()
        if self.index is not None:
            try:
                shown = set(self.index.shown(wanted))
            except INDEX_ERRORS as exc:
                self._fail(exc)
        self._private.update((nfc(path), path not in shown) for path in wanted)

    def person(self, address: str) -> bool:
        """Whether `address` is a private person's (h0.vault.disclosure.Disclosure.address_private)."""
        return self.gate is None or self.gate.address_private(address)

    def mail(self, found: Iterable[str]) -> bool:
        """Whether mail naming these addresses is private (the gate's `mail_private`: a private person's)."""
        return self.gate is None or self.gate.mail_private(found)

    def note_at(self, *paths: object) -> bool:
        """Whether the note a record names may not be named: the first of `paths` (where a record says the note
        went, is, or was) that the index holds — by its path, or by its name wherever it moved. A note found
        nowhere is judged by the index as a note it cannot read: private (fail closed), since a record outlives its
        note, and a deleted private note leaves nothing to tell it by."""
        named = [path for path in paths if isinstance(path, str) and path]
        if self.index is None or not named:
            return True
        try:
            found = next((held for path in named if (held := self.index.notes_at(path))), None)
            if found is None:
                return self.index.is_private(named[0])
        except INDEX_ERRORS as exc:
            self._fail(exc)
            return True
        self.judge(found)
        return any(self.private(rel) for rel in found)

    def _fail(self, exc: BaseException) -> None:
        logger.warning("the vault index cannot say what is private ({}): the reports name nothing", exc)
        self.index, self.gate = None, None


def report_view(settings: Settings, vault: Vault) -> ReportGate:
    """The gate for one collection: this process's vault index, compared with the vault first."""
    disclosure = Disclosure.for_vault(vault.root, settings.private_folders)
    try:
        # Compared with the vault now: a stat a note, and only the notes changed since the index saw them read.
        index = VaultIndex.shared(vault.root, settings.h0_state_dir, disclosure, look=True)
    except INDEX_ERRORS as exc:
        logger.warning("the vault index cannot be opened ({}): the reports name nothing", exc)
        return ReportGate(None)
    return ReportGate(index)


def split(items: Iterable[T], private: Callable[[T], bool]) -> tuple[list[T], int]:
    """The items that may be named, and how many were left out."""
    kept: list[T] = []
    left = 0
    for item in items:
        if private(item):
            left += 1
        else:
            kept.append(item)
    return kept, left


def private_count(count: int, noun: str) -> str:
    """'1 private email', '3 private emails', '2 private people'."""
    plural = _PLURAL.get(noun, f"{noun}s")
    return f"{count} private {noun if count == 1 else plural}"


def not_named(count: int, noun: str) -> str:
    """How a list says what it leaves out: '…and 2 private emails, not named here'."""
    return f"…and {private_count(count, noun)}, not named here"


def record_private(view: ReportGate, record: dict[str, Any]) -> bool:
    """Whether an audit record is about a note that may not be named (where it went, where it is now, where
    it was: `ReportGate.note_at`), or names a private person (its sender or a recipient). A record about no
    note (the daemon's own) is judged by the people it names alone."""
    paths = [record[k] for k in _NOTE_FIELDS if isinstance(record.get(k), str) and record[k]]
    if paths and view.note_at(*paths):
        return True
    named = [record.get("sender"), record.get("to")]
    lists = record.get("recipients")
    if isinstance(lists, dict):
        named += [lists.get(field) for field in FIELDS]
    return view.mail(address for value in named for address in addresses(value))
