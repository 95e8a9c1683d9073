"""Past replies are judged when they are given, against the whole vault (h0.drafting.past over the vault index):
a note made private anywhere a moment ago takes its thread's replies away at once, and an index that cannot
say which threads are private gives no reply at all (fail closed)."""

from __future__ import annotations

from pathlib import Path

from h0.drafting.past import PastReplies
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.private_threads import IndexThreads
from tests.drafting.conftest import sent_by_h0
from tests.drafting.test_disclosure_prompts import write

GATE = Disclosure(("journal",))
TOM = "tom@example.org"


def replies_to_tom(root: Path, state: Path) -> tuple[PastReplies, VaultIndex]:
    for n, thread in ((1, "T-1"), (2, "T-2")):
        head = {"to": TOM, "subject": f"Re: {n}", "status": "sent", "thread_id": thread}
        write(
            root,
            f"Done/to-tom-{n}.md",
            {**head, "rfc822_message_id": f"<tom-{n}@x>"},
            f"Hi Tom,\n\nThe quarterly budget review, draft {n}.",
        )
    index = VaultIndex.open(root, state, GATE)
    past = PastReplies(root, disclosure=GATE, owner=sent_by_h0(root, state), threads=IndexThreads(index))
    return past, index


def test_a_note_made_private_anywhere_takes_its_threads_replies_away_at_once(tmp_path: Path):
    root, state = tmp_path / "vault", tmp_path / "state"
    past, index = replies_to_tom(root, state)
    assert sorted(r.path for r in past.to_address(TOM)) == ["Done/to-tom-1.md", "Done/to-tom-2.md"]
    write(root, "Journal/about tom.md", {"thread_id": "T-1"}, "between us")  # a private folder, not Done/
    index.changed([str(root / "Journal/about tom.md")])  # as the watcher reports it
    assert [r.path for r in past.to_address(TOM)] == ["Done/to-tom-2.md"]
    assert [r.path for r in past.all()] == ["Done/to-tom-2.md"]
    assert [r.path for r, _ in past.similar("About the quarterly budget review draft, Tom")] == ["Done/to-tom-2.md"]


def test_an_index_that_cannot_say_which_threads_are_private_gives_no_past_reply(tmp_path: Path):
    root, state = tmp_path / "vault", tmp_path / "state"
    past, index = replies_to_tom(root, state)
    assert len(past.to_address(TOM)) == 2
    index.db.path.unlink()  # the index's file gone under it, and a folder in its place: it cannot be rebuilt
    index.db.path.mkdir()
    assert past.to_address(TOM) == [] and past.all() == [] and past.addressed_to(TOM) == []
