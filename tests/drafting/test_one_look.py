"""Without a watcher (`h0 sweep`), drafting compares the vault with its index before each context it
assembles — except inside `Drafting.looked_once`, where a batch of emails costs one look: a walk of
the vault per email was most of a sweep after a big import (94 s against 21 s for 1,843 emails)."""

from __future__ import annotations

from pathlib import Path

from h0.drafting.context import Answering
from h0.drafting.service import Drafting, indexed_knowledge
from h0.vault import init_vault
from h0.vault.disclosure import Disclosure

DANA = "dana@rivera.example"


class CountingLooks:
    """The index as drafting's knowledge, counting the looks at the vault drafting asks of it."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.looks = 0

    def freshen(self, *, fed: bool) -> None:
        self.looks += 1
        self.inner.freshen(fed=fed)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def person(root: Path, fact: str) -> None:
    (root / "People").mkdir(exist_ok=True)
    (root / "People" / "Dana Rivera.md").write_text(f"---\nemail: {DANA}\n---\n{fact}\n", encoding="utf-8")


def facts(drafting: Drafting) -> str:
    context = drafting.context(Answering(reply_to=DANA, sender=DANA, subject="Friday", body="Can we meet on Friday?"))
    return context.text()


def test_a_batch_looks_once_and_a_context_on_its_own_looks_each_time(tmp_path: Path):
    root = tmp_path / "vault"
    root.mkdir()
    init_vault(root)
    person(root, "Dana prefers mornings.")
    inner = indexed_knowledge(root, tmp_path / "state", Disclosure.for_vault(root))
    assert inner is not None
    knowledge = CountingLooks(inner)
    drafting = Drafting(root, knowledge=knowledge)

    with drafting.looked_once():
        assert all("Dana prefers mornings." in facts(drafting) for _ in range(3))
    assert knowledge.looks == 1

    person(root, "Dana moved to Lisbon.")  # changed between two batches: the next one sees it
    with drafting.looked_once():
        assert "Dana moved to Lisbon." in facts(drafting)
    assert knowledge.looks == 2

    person(root, "Dana is on leave until May.")  # a context on its own looks at the vault first
    assert "Dana is on leave until May." in facts(drafting)
    assert "Dana is on leave until May." in facts(drafting)
    assert knowledge.looks == 4
