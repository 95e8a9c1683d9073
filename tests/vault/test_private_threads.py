"""A message that is not a note (a provider's message, history, sent mail) judged by its thread keys: the
gate's one question (`Disclosure.keys_private`) and the two ways of finding the keys private notes hold
(h0.vault.private_threads) — the index and a walk of the vault — which must give one answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.index import VaultIndex
from h0.vault.private_threads import IndexThreads, ScannedThreads

GATE = Disclosure(("journal",))


def write(root: Path, rel: str, head: dict[str, object], body: str = "text") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key}: {json.dumps(value)}\n" for key, value in head.items())
    path.write_text(f"---\n{lines}---\n{body}\n", encoding="utf-8")


def message(thread: str | None, message_id: str) -> frozenset[str]:
    """A provider's message's keys, as every consumer builds them: named as a note's frontmatter names them."""
    return thread_keys("", {"thread_id": thread, "message_id": message_id})


def test_a_message_is_private_when_a_key_of_its_is_held_privately_and_when_nobody_can_tell():
    held = frozenset({"t:T1"})
    assert GATE.keys_private(message("T1", "m9"), held)
    assert not GATE.keys_private(message("T2", "m9"), held)
    assert GATE.keys_private(message("T2", "m9"), None)  # unknown: kept private
    assert not GATE.keys_private(frozenset(), frozenset())


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, "Projects/deal.md", {"private": "yes", "thread_id": "T-marked"})  # anywhere, marked
    write(root, "Journal/call.md", {"in_reply_to": "<m-journal@x>"})  # in a private folder
    write(root, "Notes/tagged.md", {"tags": "#Private", "source": "[[EMAIL_7]]"})  # a tag, tied by `source`
    write(root, "Needs_Action/EMAIL_1.md", {"type": "email", "thread_id": "T-open", "message_id": "m1"})
    write(root, "Logs/failed/bounced.md", {"thread_id": "T-logs"})  # Logs/ ties nothing: never indexed either
    write(root, ".trash/old.md", {"private": True, "thread_id": "T-trash"})
    return root


ASKED = {
    "t:T-marked": True,
    "m:m-journal@x": True,
    "n:email_7": True,
    "t:T-open": False,
    "m:m1": False,
    "t:T-logs": False,
    "t:T-trash": False,
}


def test_the_index_and_a_walk_of_the_vault_find_the_same_private_keys(vault: Path, tmp_path: Path):
    index = VaultIndex.open(vault, tmp_path / "state", GATE)
    expected = frozenset(key for key, private in ASKED.items() if private)
    assert IndexThreads(index).private_keys(ASKED) == expected
    assert ScannedThreads(vault, GATE).private_keys(ASKED) == expected


def test_more_keys_than_one_look_up_holds_are_all_asked(vault: Path, tmp_path: Path):
    """The index looks at 500 keys a query: a private key sorted after the 500th is still found."""
    index = VaultIndex.open(vault, tmp_path / "state", GATE)
    many = [f"t:A-{i:04d}" for i in range(1200)] + ["t:T-marked"]
    assert IndexThreads(index).private_keys(many) == frozenset({"t:T-marked"})


def test_a_damaged_index_answers_unknown_so_every_message_stays_private(vault: Path, tmp_path: Path):
    index = VaultIndex.open(vault, tmp_path / "state", GATE)
    index.db.path.unlink()  # the index's file gone under it, and a folder in its place: it cannot be rebuilt
    index.db.path.mkdir()
    found = IndexThreads(index).private_keys(["t:T-open"])
    assert found is None and GATE.keys_private(message("T-open", "m1"), found)


def test_the_index_and_the_vault_servers_view_never_cut_a_long_list_of_keys_short(vault: Path, tmp_path: Path):
    """Given 1,200 thread keys asked at once with the one a private note holds sorted last, VaultIndex.private_keys
    and the vault server's view (ClientView) still find it: no key is silently left unlooked at."""
    from h0.mcp.vault_view import ClientView

    index = VaultIndex.open(vault, tmp_path / "state", GATE)
    many = frozenset({f"t:A-{i:04d}" for i in range(1200)} | {"t:T-marked"})
    assert max(many) == "t:T-marked"
    assert index.private_keys(many) == frozenset({"t:T-marked"})
    view = ClientView(lambda: GATE, daemon_filing=False, wait=lambda: index)
    assert view.private_keys(many) == frozenset({"t:T-marked"})
