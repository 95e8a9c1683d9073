"""What the reports may name: one look at the vault's private marks per collection (h0.drafting.privatemarks,
judged by h0.vault.disclosure), and the phrase every renderer uses for what it counts instead.

H0_Dashboard.md and Briefings/ are notes any MCP client can read, and `h0 status` (text or --json) is read by
whatever runs it, an agent's shell tool included: a private email, draft, send or error — private by its own
mark, its folder or its thread, or written by or to a private person — is counted there ("2 private emails"),
never named. The collectors (h0.report.collect, h0.report.briefing's `collect_day`, h0.followup.report) leave
it out of their lists and count it; the renderers only ever see what may be named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from h0.config import Settings
from h0.drafting.privatemarks import PrivateMarks, PrivateView
from h0.mail.compose.recipients import FIELDS
from h0.vault import Vault
from h0.vault.disclosure import Disclosure
from h0.vault.model import addresses

T = TypeVar("T")
_PLURAL = {"person": "people", "copy": "copies"}
# Where an audit record says its note went, is, or was: the first found is the one judged.
_NOTE_FIELDS = ("done_path", "returned_to", "failed_path", "path", "note")


def report_view(settings: Settings, vault: Vault) -> PrivateView:
    """This process's look at the vault's private marks, for one collection."""
    disclosure = Disclosure.for_vault(vault.root, settings.private_folders)
    return PrivateMarks.for_vault(vault.root, disclosure).look()


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


def record_private(view: PrivateView, record: dict[str, Any]) -> bool:
    """Whether an audit record is about a note that may not be named (where it went, where it is now, where
    it was: h0.drafting.privatemarks.PrivateView.note_at), or names a private person (its sender or a
    recipient). A record about no note (the daemon's own) is judged by the people it names alone."""
    paths = [record[k] for k in _NOTE_FIELDS if isinstance(record.get(k), str) and record[k]]
    if paths and view.note_at(*paths):
        return True
    named = [record.get("sender"), record.get("to")]
    lists = record.get("recipients")
    if isinstance(lists, dict):
        named += [lists.get(field) for field in FIELDS]
    return view.anyone(address for value in named for address in addresses(value))
