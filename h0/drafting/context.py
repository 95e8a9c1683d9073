"""Everything a reply may draw on, assembled in one place as one typed object: `DraftContext`.

For an email and the address a reply goes to: the owner's profile and lessons, the sender's
People note and the notes it links to, the notes most related to the email, the owner's last
replies to this sender and replies to similar emails, and the greeting and sign-off the reply
gets (h0.drafting.voice). The thread itself travels with the email (h0.handlers.thread).

The token budget (DRAFT_CONTEXT_TOKENS, ~4 characters a token) is spent in this order, each
item cut to its own cap, until it runs out; what did not fit is named in `omitted`:

    1 profile (who, tone, standing facts)   1,500 chars     5 notes linked from them   1,500 each, 4
    2 lessons from past edits               1,500           6 notes the email is about 1,500 each, 5
    3 the sender's People notes             2,500 each, 2   7 replies to similar mail    800 each, 2
    4 the owner's last replies to them        900 each, 3   8 their other waiting emails 800

A note is "about the email" when the email names it, or a code or capitalised name it holds — never a
shared common word (h0.vault.index.about) — and a note found through the email's people alone (a meeting
with the sender, a colleague's note) only when it shares the email's topic too (h0.drafting.relevance;
docs/drafting.md). The notes a People note links to come as what the person works on, but for an email that only
asks to meet, and from a hub (a "Clients" note every client's links to, a daily note naming everyone), only when
they share its topic. The replies of the email's own thread are in its conversation and never given again
(`thread`); a reply to another email only above a relevance floor (h0.drafting.past.similar) and, for
someone the owner knows, from their circle. Each note's frontmatter properties come first in its text,
as facts ("deadline: 2026-12-15"). A note's or past reply's commercial facts (rates,
budgets, fees, invoices, amounts) come only when one of its parties is someone the reply goes to
(`audience`; the one rule: h0.drafting.commercial).

The email (12,000 characters) and its thread (8,000) have their own bounds (h0.triage.prompt).
Private notes, Logs/, .obsidian/ and .h0/ never get here (h0.vault.disclosure).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from h0.calendar import Scheduling
from h0.drafting.commercial import for_audience, reply_for_audience
from h0.drafting.knowledgenotes import (
    KnowledgeNote,
    KnowledgeSource,
    PendingEmail,
)
from h0.drafting.memory import Memory
from h0.drafting.past import PastReplies
from h0.drafting.pastreply import PastReply
from h0.drafting.profile import Profile
from h0.drafting.relevance import (
    about_the_email,
    circle_of,
    in_circle,
    is_hub,
    linked_for,
    names_of,
    organisation_names,
    organisation_of,
    topic_words,
    without_names,
    without_owner,
    without_signature_names,
)
from h0.drafting.voice import Voice, voice_for
from h0.printable import one_line
from h0.triage.models import OwnerNote, ReplyContext
from h0.triage.prompt import today_line
from h0.vault.paths import link_key
from h0.vault.values import split_addresses

CHARS_PER_TOKEN = 4
# kind: (cap per item, most items)
CAPS: dict[str, tuple[int, int]] = {
    "profile": (1_500, 1),
    "lessons": (1_500, 1),
    "person": (2_500, 2),
    "past_reply": (900, 3),
    "linked": (1_500, 4),
    "related": (1_500, 5),
    "similar_reply": (800, 2),
    "pending": (800, 1),
}
MAX_PROPERTIES = 40
MAX_PROPERTY_CHARS = 300
# Bookkeeping, not facts: what Obsidian and H0 keep in a note's frontmatter for themselves.
NOT_FACTS = frozenset({"type", "tags", "tag", "aliases", "alias", "private", "cssclasses", "cssclass", "publish"})
WITHHELD = "its commercial facts left out: nobody they concern is on this email"
THREAD_SLACK = 6  # more of the latest replies asked for: those of this very thread are left out
RELATED_SLACK = 5  # more related notes asked for: those only about the email's people are left out
SIMILAR_SLACK = 8  # more similar replies asked for: those outside the conversation's circle are left out


@dataclass(frozen=True, slots=True)
class ContextItem:
    kind: str
    label: str  # "[[Dana Rivera]]", or "your sent mail of 2026-03-02, “Atlas”" for provider mail
    why: str
    text: str
    path: str | None = None  # the vault note it came from

    def owner_note(self) -> OwnerNote:
        return OwnerNote(label=self.label, kind=self.kind, text=self.text, why=self.why)


@dataclass(frozen=True, slots=True)
class DraftContext:
    """What one reply may draw on. `items` are in budget order; `omitted` names what did not fit."""

    recipient: str
    voice: Voice
    items: tuple[ContextItem, ...]
    omitted: tuple[str, ...] = ()
    budget_chars: int = 0
    used_chars: int = 0
    problems: tuple[str, ...] = ()  # the profile's or memory note's problems, in words
    elapsed_ms: float = 0.0
    language: str | None = None
    scheduling: Scheduling | None = None  # the email asks to meet: the free times (h0.drafting.scheduling)
    today: str = ""  # what day it is in the owner's time zone (h0.triage.prompt.today_line)

    def reply_context(self, briefing: str = "") -> ReplyContext:
        """The context as triage's prompt and rules engine take it (`briefing`: rules mode's, for a
        draft written without a model — h0.drafting.briefing)."""
        return ReplyContext(
            greeting=self.voice.greeting,
            sign_off=self.voice.sign_off,
            notes=[item.owner_note() for item in self.items],
            language=self.language,
            schedule=self.scheduling.prompt_text() if self.scheduling is not None else "",
            briefing=briefing,
            today=self.today,
        )

    def text(self) -> str:
        """Everything the model would read of the owner's, as one text (what fact checks look in)."""
        return "\n\n".join([*(f"{i.label}\n{i.text}" for i in self.items), self.voice.greeting, self.voice.sign_off])

    def links(
        self, kinds: Sequence[str] = ("person", "linked", "related", "past_reply", "similar_reply")
    ) -> list[ContextItem]:
        return [item for item in self.items if item.kind in kinds]

    def to_json(self) -> dict[str, Any]:
        return {
            "recipient": self.recipient,
            "greeting": self.voice.greeting,
            "sign_off": self.voice.sign_off,
            "voice_from": self.voice.source,
            "items": [
                {"kind": i.kind, "label": i.label, "path": i.path, "why": i.why, "text": i.text} for i in self.items
            ],
            "omitted": list(self.omitted),
            "budget_chars": self.budget_chars,
            "used_chars": self.used_chars,
            "problems": list(self.problems),
            "scheduling": scheduling_json(self.scheduling),
        }


def scheduling_json(scheduling: Scheduling | None) -> dict[str, Any] | None:
    """The scheduling part as an MCP answer shows it: times and zones, never an event's title."""
    if scheduling is None:
        return None
    return {
        "asks_to_meet": True,
        "has_calendar": scheduling.has_calendar,
        "minutes": scheduling.minutes,
        "days_asked": scheduling.ask.said or None,
        "owner_timezone": scheduling.owner_zone_name,
        "sender_timezone": scheduling.sender_zone_name,
        "proposed_slots": scheduling.proposed_slots,
        "free_slots": [slot.iso(scheduling.owner_zone) for slot in scheduling.free[:20]],
        "questions": scheduling.questions(),
        "instructions": scheduling.prompt_text(),
    }


@dataclass(slots=True)
class _Budget:
    left: int
    items: list[ContextItem] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)

    def add(self, kind: str, label: str, why: str, text: str, path: str | None = None) -> None:
        cap, most = CAPS[kind]
        if sum(1 for i in self.items if i.kind == kind) >= most:
            self.omitted.append(f"{label} (more {kind.replace('_', ' ')} notes than fit)")
            return
        text = text.strip()
        if not text:
            return
        if len(text) > cap:
            text = text[:cap].rstrip() + " […]"
        if len(text) + len(label) > self.left:
            room = self.left - len(label) - 8
            if room < 200:
                self.omitted.append(f"{label} (over the token budget)")
                return
            text = text[:room].rstrip() + " […]"
        self.left -= len(text) + len(label)
        self.items.append(ContextItem(kind, label, why, text, path))


def recipient_of(address_or_header: str) -> tuple[str, str]:
    """(display name, lower-cased address) of a From/To value."""
    found = split_addresses([address_or_header or ""])  # the one reader of an address list (h0.vault.values)
    name, address = found[0] if found else ("", "")
    return name.strip().strip("\"'"), (address or address_or_header or "").strip().lower()


@dataclass(frozen=True, slots=True)
class Answering:
    """What a reply answers: an email from `sender` (a From header), the reply going to `reply_to` (an address).
    `exclude`: vault paths given otherwise (the email's thread), never repeated as notes. `audience`: everyone
    else the reply concerns (the others on the email, the people the owner wrote to in its thread; never the
    owner): with `reply_to`, whom a note's commercial facts may be shown for. `thread`: the email's thread keys
    (h0.vault.disclosure.thread_keys): a past reply holding one is of this conversation, which the prompt carries
    already, and is never given again. `to_meet`: all the email asks is to meet (the calendar answers it;
    h0.drafting.relevance.linked_for)."""

    reply_to: str
    sender: str
    subject: str
    body: str
    exclude: Sequence[str] = ()
    audience: Iterable[str] = ()
    thread: frozenset[str] = frozenset()
    to_meet: bool = False


def assemble(
    asked: Answering,
    *,
    profile: Profile,
    memory: Memory,
    knowledge: KnowledgeSource,
    past: PastReplies,
    budget_tokens: int,
) -> DraftContext:
    """The context of the reply `asked` for, from the owner's profile, lessons, knowledge and past replies."""
    started = time.perf_counter()
    name, sender_address = recipient_of(asked.sender)
    address = asked.reply_to.strip().lower() or sender_address
    budget = _Budget(budget_tokens * CHARS_PER_TOKEN)
    summary = profile.summary()
    if summary:
        budget.add("profile", "[[H0_Profile]]", "your profile", summary, "H0_Profile.md")
    if memory.lessons:
        lessons = "\n".join(f"- {lesson.line}" for lesson in memory.lessons)
        budget.add("lessons", "[[H0_Memory]]", "lessons from your edits of earlier drafts", lessons, "H0_Memory.md")
    seen: set[str] = set(asked.exclude)
    conversation = {a for a in (address, sender_address) if a}
    parties_on = frozenset({address, *(a.strip().lower() for a in asked.audience if a and "@" in a)} - {""})

    def shown(note: KnowledgeNote) -> tuple[str, str]:
        """The note's text for this reply, and what to add to why it is there (its money left out)."""
        seen_as = for_audience(note, parties_on, knowledge.resolve_link)
        return with_properties(seen_as), "" if seen_as is note else f"; {WITHHELD}"

    people: list[KnowledgeNote] = []
    for who in dict.fromkeys(a for a in (address, sender_address) if a):
        for note in knowledge.notes_for_address(who):
            if note.path not in seen:
                seen.add(note.path)
                people.append(note)
                why = "the sender's note" if who in _addresses_of(note) else f"mentions {who}"
                text, withheld = shown(note)
                budget.add("person", note.link, why + withheld, text, note.path)
    # The owner's replies of this very conversation are in its thread already (h0.handlers.thread): never repeated.
    latest = past.to_address(address, CAPS["past_reply"][1] + THREAD_SLACK)
    history = [r for r in latest if not (r.path is not None and r.path in seen) and not r.threads & asked.thread]
    history = history[: CAPS["past_reply"][1]]
    for reply in history:
        budget.add("past_reply", reply.link, f"your reply to {address}", _reply_text(reply, reply.text), reply.path)
    query = without_names(without_owner(f"{asked.subject}\n{asked.body}", profile.name), names_of(name, people))
    query = without_signature_names(query, organisation_of(people))
    words = topic_words(query)
    hub = partial(is_hub, knowledge)
    linked: list[KnowledgeNote] = []
    for person in people:
        for target in person.links:
            target_note = knowledge.resolve_link(target)
            if (
                target_note is None
                or target_note.path in seen
                or not linked_for(target_note, words, asked.to_meet, hub)
            ):
                continue
            seen.add(target_note.path)
            linked.append(target_note)
            text, withheld = shown(target_note)
            budget.add("linked", target_note.link, f"linked from {person.link}{withheld}", text, target_note.path)
    about: list[KnowledgeNote] = []
    wanted = CAPS["related"][1]
    found = knowledge.related(query, wanted + RELATED_SLACK, exclude=seen, addresses=sorted(conversation))
    # Their organisation, as their colleagues' People notes name it, signs for them too ("Brightline Labs" under the
    # name of someone H0 has no note of): taken out of the signature, and the notes looked up again.
    if (company := organisation_names(found, sender_address)) and (
        unsigned := without_signature_names(query, company)
    ) != query:
        query = unsigned
        found = knowledge.related(query, wanted + RELATED_SLACK, exclude=seen, addresses=sorted(conversation))
    named = frozenset(link_key(note.path) for note in people)  # the People notes a hub's lines about them link
    for related in found:
        if len(about) >= wanted or not about_the_email(related, words, parties_on, named, hub):
            continue
        seen.add(related.note.path)
        about.append(related.note)
        text, withheld = shown(related.note)
        budget.add("related", related.note.link, related.why + withheld, text, related.note.path)
    circle = circle_of(address, [*people, *linked, *about], knowledge.resolve_link) if people or history else None
    given = 0
    for reply, score in past.similar(query, CAPS["similar_reply"][1] + SIMILAR_SLACK, exclude=history):
        if given >= CAPS["similar_reply"][1]:
            break
        if (reply.path is not None and reply.path in seen) or reply.threads & asked.thread:
            continue
        if circle is not None and not in_circle(reply, circle):
            continue  # someone else's conversation: the owner's replies to this person speak for them
        given += 1
        text = reply_for_audience(reply.text, reply.to, parties_on)  # another's reply: its money is theirs
        withheld = "" if text is reply.text else f"; {WITHHELD}"
        why = f"your reply to a similar email (score {score}){withheld}"
        budget.add("similar_reply", reply.link, why, _reply_text(reply, text), reply.path)
    waiting = getattr(knowledge, "pending", None)  # the vault index knows the inbox; a scan does not
    if waiting is not None:
        others: list[PendingEmail] = waiting(sorted(conversation), exclude=seen)
        if others:
            lines = "\n".join(f"- {e.link} “{one_line(e.subject, 120)}”, {_day(e.when)}" for e in others)
            budget.add("pending", "Waiting in Needs_Action/", "other emails from them not answered yet", lines)
    voice = voice_for(address, name, profile, latest)
    problems = tuple(p.message for p in (*profile.problems, *memory.problems))
    used = budget_tokens * CHARS_PER_TOKEN - budget.left
    return DraftContext(
        address,
        voice,
        tuple(budget.items),
        tuple(budget.omitted),
        budget_tokens * CHARS_PER_TOKEN,
        used,
        problems,
        round((time.perf_counter() - started) * 1000, 3),
        profile.languages[0] if profile.languages else None,
        today=today_line(zone=profile.hours.zone, zone_name=profile.hours.zone_name),
    )


def _addresses_of(note: KnowledgeNote) -> set[str]:
    return set(note.person.own_addresses)


def with_properties(note: KnowledgeNote) -> str:
    """The note's text, its frontmatter properties first as facts ("deadline: 2026-12-15"): a fact kept
    in a property is as much the owner's as one in the text. (What a reply may see of a note's
    commercial facts is decided before: h0.drafting.commercial.for_audience.)"""
    facts = properties(note.frontmatter)
    return f"Properties: {'; '.join(facts)}\n\n{note.text}" if facts else note.text


def properties(frontmatter: Mapping[str, Any]) -> list[str]:
    """`key: value` for each property that states a fact (not H0's or Obsidian's bookkeeping)."""
    facts: list[str] = []
    for key, value in list(frontmatter.items())[:MAX_PROPERTIES]:
        name = str(key).strip()
        if not name or name.lower() in NOT_FACTS:
            continue
        values = value if isinstance(value, list) else [value]
        shown = [_scalar(v) for v in values if _scalar(v)]
        if shown:
            facts.append(f"{name}: {', '.join(shown)}"[:MAX_PROPERTY_CHARS])
    return facts


def _scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return ""
    return " ".join(str(value).split())


def _day(when: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(when)) if when else "undated"


def _reply_text(reply: PastReply, text: str) -> str:
    return f"Sent {_day(reply.when)} to {', '.join(reply.to)}, subject “{reply.subject}”:\n{text}"
