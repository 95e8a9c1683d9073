"""What a re-draft of `h0 eval` may see: the owner's mail, notes and lessons as they stood when the reply it
hides was sent — never that reply, anything sent after it, or a lesson drawn from either.

- **Past replies** (`PastAsOf`): the owner's replies from every source drafting reads — notes in `Done/`,
  the mail kept as history (h0.state.history), the provider's sent mail — sent before the hidden one; no
  private one (of a private thread, or to a private person). The greeting and sign-off learned per person
  come from these too.
- **Notes** (`KnowledgeAsOf`): a note that dates itself (`date:` or `created:`) after the hidden reply did
  not exist yet, and an email still waiting that arrived after it had not arrived; every other note is read
  as it is now (H0 keeps no history of notes).
- **Lessons** (`DraftingAsOf.memory`): those of `H0_Memory.md` drawn only from replies sent before
  (h0.drafting.memory.Memory.learned_before: a lesson's links are its provenance).
- The email's thread comes from history before the email itself (h0.handlers.thread.kept_earlier).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from h0.config import Settings
from h0.drafting.knowledgenotes import KnowledgeNote, KnowledgeSource, PendingEmail, RelatedKnowledge
from h0.drafting.memory import Memory
from h0.drafting.past import PastReplies
from h0.drafting.pastreply import PastReply
from h0.drafting.service import Drafting
from h0.state.history import MailHistory
from h0.vault.disclosure import Disclosure

MORE = 50  # replies asked for beyond `limit`, some of which may be hidden


class PastAsOf(PastReplies):
    """The owner's past replies as they stood just before a hidden reply was sent, without a private one (of a
    private thread: h0.drafting.past; or to a private person: the gate's `mail_private`)."""

    def __init__(
        self,
        root: Path,
        sent_cache: Path | None,
        disclosure: Disclosure,
        owner: Any,
        history: MailHistory | None = None,
    ) -> None:
        super().__init__(root, sent_cache, disclosure, owner, history)
        self.before: float = float("inf")
        self.hidden: str | None = None

    def _kept(self, replies: Iterable[PastReply]) -> list[PastReply]:
        return [
            r
            for r in replies
            if (r.path is None or r.path != self.hidden)
            and (not r.when or r.when < self.before)
            and not self.disclosure.mail_private(r.to)
        ]

    def to_address(self, address: str, limit: int = 3) -> list[PastReply]:
        return self._kept(super().to_address(address, limit + MORE))[:limit]

    def addressed_to(self, address: str, limit: int = 3) -> list[PastReply]:
        return self._kept(super().addressed_to(address, limit + MORE))[:limit]

    def all(self) -> list[PastReply]:
        return self._kept(super().all())

    def similar(self, text: str, limit: int = 2, exclude: Iterable[PastReply] = ()) -> list[tuple[PastReply, float]]:
        found = super().similar(text, limit + MORE, exclude)
        kept = {id(r) for r in self._kept(r for r, _ in found)}
        return [(r, s) for r, s in found if id(r) in kept][:limit]


def _dated_after(note: KnowledgeNote, before: float) -> bool:
    return any(when >= before for when in note.person.dates)


class KnowledgeAsOf:
    """The vault's knowledge without the notes that date themselves at or after `before`, and without the
    emails that were still to arrive; everything else asked of the knowledge it wraps."""

    def __init__(self, knowledge: KnowledgeSource) -> None:
        self.inner = knowledge
        self.before: float = float("inf")

    def __getattr__(self, name: str) -> Any:  # freshen, changed, index: the wrapped source's
        return getattr(self.inner, name)

    def _shown(self, note: KnowledgeNote | None) -> bool:
        return note is not None and not _dated_after(note, self.before)

    def notes_for_address(self, address: str) -> list[KnowledgeNote]:
        return [n for n in self.inner.notes_for_address(address) if self._shown(n)]

    def related(
        self, text: str, limit: int = 5, exclude: Iterable[str] = (), addresses: Iterable[str] = ()
    ) -> list[RelatedKnowledge]:
        found = self.inner.related(text, limit + MORE, exclude, addresses)
        return [r for r in found if self._shown(r.note)][:limit]

    def resolve_link(self, target: str) -> KnowledgeNote | None:
        note = self.inner.resolve_link(target)
        return note if self._shown(note) else None

    def is_private(self, path: str) -> bool:
        return self.inner.is_private(path)

    def pending(self, addresses: Iterable[str], exclude: Iterable[str] = (), limit: int = 5) -> list[PendingEmail]:
        waiting = getattr(self.inner, "pending", None)
        if waiting is None:
            return []
        found: list[PendingEmail] = waiting(addresses, exclude, limit + MORE)
        return [e for e in found if e.when and e.when < self.before][:limit]


class DraftingAsOf(Drafting):
    """A drafting state of its own (never the process's shared one) whose past replies, notes and lessons
    stand as they did before `as_of`'s moment."""

    before: float = float("inf")
    sent_at: Mapping[str, float] = MappingProxyType({})
    lessons_left_out: int = 0
    past_as_of: PastAsOf
    knowledge_as_of: KnowledgeAsOf

    @classmethod
    def for_eval(cls, settings: Settings, sent_at: Mapping[str, float]) -> DraftingAsOf:
        drafting = cast(DraftingAsOf, cls.build(settings))  # `build` makes a `cls`
        history = drafting.past.history
        past = PastAsOf(drafting.root, drafting.sent_cache, drafting.disclosure, drafting.owner, history)
        past.threads = drafting.threads  # private threads told by the drafting state's index, not a walk
        drafting.past = drafting.past_as_of = past
        drafting.knowledge = drafting.knowledge_as_of = KnowledgeAsOf(drafting.knowledge)
        drafting.sent_at = sent_at
        return drafting

    def as_of(self, before: float, hidden: str | None) -> None:
        """From now on, draft as of `before` (epoch seconds; 0: unknown, nothing hidden by date), `hidden`
        (the reply's note, if it has one) never shown."""
        self.before = before or float("inf")
        self.past_as_of.before = self.knowledge_as_of.before = self.before
        self.past_as_of.hidden = hidden

    def memory(self) -> Memory:
        kept, left_out = super().memory().learned_before(self.sent_at.get, self.before)
        self.lessons_left_out = left_out
        return kept
