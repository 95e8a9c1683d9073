"""What reaches a drafting prompt, judged on the world: for each email a person wrote that needs a reply, the
context H0 assembles (h0.drafting: `Drafting.context_for_email`, as triage calls it) against the notes a
good reply needs (the truth's `notes`).

The world's mail is kept as history first, as `h0 import` keeps it (h0.handlers.mail_history.history_message;
the owner's messages told by their export, h0.mail.owner.import_evidence), all of it — the messages already
read are not parsed again: the owner's sent replies are the past replies drafting draws on, the others the
threads' history. Each email is then drafted for as of its own date: only the replies the owner had sent
before it count (no reply of the future, none of its own answer).

Measured, per email and summed:

- **owner notes** — the items of the owner's notes (the sender's People notes, the notes they link to, the
  notes the email is about): an item is related when its note is one the truth names. The unrelated share,
  by items and by characters (goal: at most 15 % of each); and how many of the notes named were given.
- **past and similar replies** — a reply is related when it went to someone of the email's business: a person
  whose People note the truth names, or one working on a project whose note it names.
- **repeated thread replies** — a past reply that is one of the owner's own messages of the email's thread,
  which the prompt carries already as the conversation (goal: none).
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h0.drafting.past import PastReplies
from h0.drafting.pastreply import PastReply
from scripts.world.judge import Read
from scripts.world.persona import OWNER, PEOPLE

OWNER_NOTES = ("person", "linked", "related")
REPLIES = ("past_reply", "similar_reply")


class PastBefore(PastReplies):
    """The owner's past replies as they stood at `before` (epoch seconds): none sent later."""

    before: float = float("inf")
    given: list[PastReply]  # every reply handed out since `before` was set: which thread each is of

    def _kept(self, replies: Iterable[PastReply]) -> list[PastReply]:
        kept = [r for r in replies if r.when and r.when < self.before]
        self.given += kept
        return kept

    def to_address(self, address: str, limit: int = 3) -> list[PastReply]:
        return self._kept(super().to_address(address, limit + 400))[:limit]

    def addressed_to(self, address: str, limit: int = 3) -> list[PastReply]:
        return self._kept(super().addressed_to(address, limit + 400))[:limit]

    def similar(self, text: str, limit: int = 2, exclude: Iterable[PastReply] = ()) -> list[tuple[PastReply, float]]:
        found = super().similar(text, limit + 400, exclude)
        kept = {id(reply) for reply in self._kept(reply for reply, _ in found)}
        return [(reply, score) for reply, score in found if id(reply) in kept][:limit]


@dataclass
class Share:
    """Items and characters, all and unrelated, of one kind of context item."""

    items: int = 0
    unrelated_items: int = 0
    chars: int = 0
    unrelated_chars: int = 0
    unrelated: list[str] = field(default_factory=list)  # "email name: note or reply" of each unrelated item

    def count(self, related: bool, chars: int, name: str) -> None:
        self.items += 1
        self.chars += chars
        if not related:
            self.unrelated_items += 1
            self.unrelated_chars += chars
            self.unrelated.append(name)

    @property
    def item_share(self) -> float:
        return self.unrelated_items / self.items if self.items else 0.0

    @property
    def char_share(self) -> float:
        return self.unrelated_chars / self.chars if self.chars else 0.0


@dataclass
class ContextFigures:
    emails: int = 0
    owner_notes: Share = field(default_factory=Share)
    replies: Share = field(default_factory=Share)
    similar: Share = field(default_factory=Share)  # of `replies`, those given as replies to similar emails
    needed: int = 0  # notes the truth names
    given: int = 0  # of those, in the context
    missing: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)  # a reply of the email's own thread given again
    import_s: float = 0.0
    assemble_ms: float = 0.0
    hard: ContextFigures | None = None  # the same, of the hand-written hard cases alone (scripts/world/hard_cases/)

    @property
    def notes_given(self) -> float:
        return self.given / self.needed if self.needed else 1.0

    def lines(self, misses: int = 8) -> list[str]:
        notes, replies = self.owner_notes, self.replies
        out = [
            (
                f"context, owner notes    unrelated {notes.item_share:6.1%} of {notes.items} items, "
                f"{notes.char_share:6.1%} of {notes.chars:,} characters (goal ≤ 15 % each)"
            ),
            f"context, needed notes   given {self.notes_given:6.1%}  ({self.given}/{self.needed})",
            (
                f"context, past replies   unrelated {replies.item_share:6.1%} of {replies.items} items, "
                f"{replies.char_share:6.1%} of characters"
            ),
            f"context, similar replies {self.similar.items} given, {self.similar.unrelated_items} unrelated",
            f"context, thread replies repeated as past replies: {len(self.repeated)} (goal 0)",
        ]
        for label, names in (
            ("unrelated notes", notes.unrelated),
            ("notes missing", self.missing),
            ("unrelated replies", replies.unrelated),
            ("repeated", self.repeated),
        ):
            if names and misses:
                more = f", … (+{len(names) - misses})" if len(names) > misses else ""
                out.append(f"    {label}: {', '.join(names[:misses])}{more}")
        return out

    def as_dict(self) -> dict[str, float | int]:
        return {
            "emails": self.emails,
            "owner_notes_unrelated_items": self.owner_notes.item_share,
            "owner_notes_unrelated_chars": self.owner_notes.char_share,
            "owner_note_items": self.owner_notes.items,
            "needed_notes_given": self.notes_given,
            "replies_unrelated_items": self.replies.item_share,
            "replies_unrelated_chars": self.replies.char_share,
            "reply_items": self.replies.items,
            "similar_reply_items": self.similar.items,
            "similar_replies_unrelated": self.similar.unrelated_items,
            "thread_replies_repeated": len(self.repeated),
            "import_s": round(self.import_s, 2),
            "assemble_ms_per_email": round(self.assemble_ms, 2),
        }


def business_of(notes: Sequence[str]) -> set[str]:
    """The addresses of the email's business: people whose People note is named, or who work on a named project."""
    return {p.address for p in PEOPLE if p.note in notes or (p.project and f"Projects/{p.project}.md" in notes)}


def judge_context(world: Path, reads: Sequence[Read], every: int = 1) -> ContextFigures:
    """The context of every `every`-th email of `reads` that needs a reply and names the notes it needs."""
    from loguru import logger

    from h0.config import load_settings
    from h0.drafting import Drafting
    from h0.drafting.commercial import audience_of
    from h0.drafting.replytext import strip_quoted
    from h0.handlers.ingest import email_frontmatter
    from h0.handlers.mail_history import history_message
    from h0.mail.incoming.email_views import email_full
    from h0.mail.owner import import_evidence
    from h0.state import StateDB
    from h0.state.history import MailHistory
    from h0.vault import init_vault
    from h0.vault.disclosure import thread_keys
    from h0.vault.model import note_facts

    figures = ContextFigures()
    wanted = [r for r in reads if not r.truth.sent and r.truth.needs_reply and r.truth.notes][::every]
    logger.disable("h0")  # the drafting state's lines are not the figures
    try:
        with tempfile.TemporaryDirectory(prefix="h0-context-") as tmp:
            root, state = Path(tmp) / "vault", Path(tmp) / "state"
            shutil.copytree(world / "vault", root)
            init_vault(root)
            settings = load_settings(vault_path=str(root), h0_state_dir=str(state), owner_emails=OWNER)
            db = StateDB.for_vault(root, state)
            started = time.perf_counter()
            now = time.time()
            kept = {}
            for read in reads:
                mine = import_evidence(read.message.source, read.message.fetched.headers) is not None
                row = history_message(email_full(read.message.fetched), outbound=mine, now=now)
                kept[row.key] = row
            MailHistory(db).commit(list(kept.values()))
            figures.import_s = time.perf_counter() - started
            drafting = Drafting.build(settings)
            past = PastBefore(
                root,
                drafting.sent_cache,
                drafting.disclosure,
                drafting.owner,
                MailHistory(db),
                threads=drafting.threads,
            )
            drafting.past = past
            history = MailHistory(db)
            started = time.perf_counter()
            for read in wanted:
                full = email_full(read.message.fetched)
                fm = email_frontmatter(full, full.rfc822_message_id)
                path = f"Needs_Action/EMAIL_{full.id}.md"
                facts = note_facts(path, fm)
                at = dt.datetime.fromisoformat(read.truth.date).timestamp()
                past.before, past.given = at, []
                earlier = history.thread(facts.thread_id or "", before=at) if facts.thread_id else []
                text = (strip_quoted(full.body) or full.body) if earlier else full.body
                wrote_to = [a for m in earlier if m.outbound for _, a in m.recipients]
                context = drafting.context_for_email(
                    facts, text, None, exclude=[path], audience=audience_of(facts, (OWNER,), wrote_to)
                )
                keys = thread_keys(path, fm) | thread_keys("", {"message_id": full.rfc822_message_id})
                _count(figures, read, context.items, keys, past.given)
                if read.truth.name.startswith("hc-"):
                    figures.hard = figures.hard or ContextFigures()
                    _count(figures.hard, read, context.items, keys, past.given)
            figures.assemble_ms = (time.perf_counter() - started) * 1000 / max(1, len(wanted))
    finally:
        logger.enable("h0")
    return figures


def _count(
    figures: ContextFigures, read: Read, items: Sequence[Any], thread: frozenset[str], handed: Sequence[PastReply]
) -> None:
    truth = read.truth
    figures.emails += 1
    business = business_of(truth.notes)
    given: set[str] = set()
    for item in items:
        if item.kind in OWNER_NOTES:
            given.add(item.path or "")
            figures.owner_notes.count(item.path in truth.notes, len(item.text), f"{truth.name}: {item.label}")
        elif item.kind in REPLIES:
            sent_to = item.text.split("\n", 1)[0].partition(" to ")[2].partition(", subject")[0]
            related = any(address in sent_to.split(", ") for address in business)
            figures.replies.count(related, len(item.text), f"{truth.name}: {item.label}")
            if item.kind == "similar_reply":
                figures.similar.count(related, len(item.text), f"{truth.name}: {item.label}")
            # The reply the item was made of (its link and its words), and whether it is of the email's thread.
            made_of = [r for r in handed if r.link == item.label and item.text.endswith(r.text.strip()[-200:])]
            if any(r.threads & thread for r in made_of):
                figures.repeated.append(f"{truth.name}: {item.label}")
    figures.needed += len(truth.notes)
    figures.given += len(set(truth.notes) & given)
    figures.missing += [f"{truth.name}: {note}" for note in truth.notes if note not in given]
