"""The conversations of the world: people asking the owner things (questions, meetings), the owner
answering or asking, news that needs nothing, out-of-office answers — each message with its truth.

A `Conversation` collects the messages of one thread in order; `World` holds every message and works
out, once all are written, which questions stayed unanswered (owed) and which of the owner's asks
still wait (awaited: no answer in the thread, and the person has not written to her since at all).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from dataclasses import dataclass, field

from scripts.world import shapes, texts
from scripts.world.model import Mail, Truth, header_date
from scripts.world.persona import OWNER, OWNER_NAME, Person

WORKDAY_HOURS = (7, 17)  # UTC: 8:00–18:00 in Berlin


def message_id(kind: str, n: int, domain: str) -> str:
    digest = hashlib.sha256(f"{kind}{n}".encode()).hexdigest()[:10]
    return f"<{kind}.{n:05d}.{digest}@{domain}>"


def meeting_days(spec: str | None, day: dt.date) -> list[str] | None:
    """The working days a request names, read from the day it was written (see texts.DaySpec)."""
    if spec is None:
        return None
    monday = day - dt.timedelta(days=day.weekday())
    if spec == "today":
        days = [day]
    elif spec == "tomorrow":
        days = [day + dt.timedelta(days=1)]
    elif spec == "this_week":
        days = [day + dt.timedelta(days=i) for i in range(5 - day.weekday())]
    elif spec == "next_week":
        days = [monday + dt.timedelta(days=7 + i) for i in range(5)]
    elif spec.startswith("nw:"):
        days = [monday + dt.timedelta(days=7 + int(spec[3:]))]
    else:
        days = [day + dt.timedelta(days=(int(w) - day.weekday()) % 7) for w in spec[3:].split(",")]
    return sorted(d.isoformat() for d in days if d.weekday() < 5)


def their_greeting(person: Person, rng: random.Random) -> str:
    if person.lang == "de":
        return "Guten Tag Frau Hartmann," if person.formal else rng.choice(("Hallo Lena,", "Hi Lena,", "Liebe Lena,"))
    if person.lang == "fr":
        return rng.choice(("Bonjour Lena,", "Bonjour Madame Hartmann,")) if person.formal else "Salut Lena,"
    return rng.choice(("Hi Lena,", "Hello Lena,", "Lena,"))


def their_closing(person: Person, rng: random.Random) -> str:
    closing = {
        "de": ("Viele Grüße", "Beste Grüße", "Mit freundlichen Grüßen")
        if person.formal
        else ("Viele Grüße", "LG", "Bis bald"),
        "fr": ("Cordialement,", "Bien à vous,", "Bonne journée,"),
        "en": ("Best,", "Thanks,", "Cheers,", "Best regards,"),
    }[person.lang]
    text = f"{rng.choice(closing)}\n{person.first}"
    if rng.random() < 0.3:
        text += f"\n\n-- \n{person.name}\n{person.role}, {person.company}\n+49 40 555 {rng.randint(1000, 9999)}"
    return text


@dataclass
class World:
    rng: random.Random
    end: dt.datetime
    mails: list[tuple[Mail, Truth]] = field(default_factory=list)
    counter: int = 0

    def next_n(self) -> int:
        self.counter += 1
        return self.counter

    def add(self, mail: Mail, truth: Truth) -> None:
        if mail.when < self.end:
            self.mails.append((mail, truth))

    def settle(self) -> None:
        """Owed and awaited, from the whole world: what a person would say at its end."""
        ordered = sorted(self.mails, key=lambda pair: pair[0].when)
        by_thread: dict[str, list[tuple[Mail, Truth]]] = {}
        for pair in ordered:
            by_thread.setdefault(pair[1].thread, []).append(pair)
        for index, (mail, truth) in enumerate(ordered):
            later = by_thread[truth.thread][by_thread[truth.thread].index((mail, truth)) + 1 :]
            if truth.needs_reply and not truth.sent:
                truth.owed = not any(t.sent for _, t in later)
            if truth.sent and truth.asks is not None:
                recipients = _recipients(mail)
                answered = any(not t.sent and not t.automated and t.sender in recipients for _, t in later)
                wrote_since = any(
                    not t.sent and not t.automated and t.sender in recipients for _, t in ordered[index + 1 :]
                )
                mine_after = any(t.sent for _, t in later)
                truth.awaited = bool(truth.asks) and not answered and not wrote_since and not mine_after


def _recipients(mail: Mail) -> set[str]:
    found: set[str] = set()
    for name, value in mail.headers:
        if name in ("To", "Cc"):
            found |= {part.strip().rpartition("<")[2].rstrip(">").lower() for part in value.split(",")}
    return found


@dataclass
class Conversation:
    world: World
    person: Person
    subject: str
    when: dt.datetime
    lang: str
    kind: str
    root: str = ""
    last_id: str = ""
    references: list[str] = field(default_factory=list)
    history: list[tuple[str, dt.datetime, str]] = field(default_factory=list)  # (sender name, date, body)

    def _headers(self, sender: str, to: str, msg_id: str, subject: str) -> list[tuple[str, str]]:
        headers = [
            ("From", sender),
            ("To", to),
            ("Subject", subject),
            ("Date", header_date(self.when)),
            ("Message-ID", msg_id),
        ]
        if self.last_id:
            headers += [("In-Reply-To", self.last_id), ("References", " ".join(self.references))]
        return headers

    def _subject(self) -> str:
        if not self.last_id:
            return self.subject
        prefix = {"de": "AW: ", "fr": "RE : "}.get(self.lang, "Re: ") if self.world.rng.random() < 0.4 else "Re: "
        return prefix + self.subject

    def advance(self, low_h: float, high_h: float) -> None:
        self.when += dt.timedelta(hours=self.world.rng.uniform(low_h, high_h))

    def _record(self, msg_id: str, sender_name: str, body: str) -> None:
        self.root = self.root or msg_id
        self.last_id = msg_id
        self.references.append(msg_id)
        self.history.append((sender_name, self.when, body))

    def from_them(self, body: str, truth: dict[str, object], *, html: bool = False) -> Truth:
        n = self.world.next_n()
        msg_id = message_id(self.kind, n, self.person.domain)
        headers = self._headers(
            f"{self.person.name} <{self.person.address}>", f"{OWNER_NAME} <{OWNER}>", msg_id, self._subject()
        )
        quoted = ""
        if self.history and self.world.rng.random() < 0.7:
            name, when, earlier = self.history[-1]
            header, lines = shapes.quoted_history(self.lang, "gmail", name, OWNER, when, self.subject, earlier)
            quoted = f"\n\n{header}\n{lines}"
        alternative = None
        if html:
            paragraphs = "".join(f"<p>{p.replace(chr(10), '<br>')}</p>" for p in body.split("\n\n"))
            alternative = f"<html><body>{paragraphs}</body></html>"
        mail = Mail(headers, body + quoted, alternative, ("Inbox", "Opened"), self.when)
        label = Truth(
            name=f"{self.lang}-{self.kind}-{n:04d}",
            id=msg_id,
            category="person",
            lang=self.lang,
            date=self.when.isoformat(),
            sender=self.person.address,
            thread=self.root or msg_id,
        )
        for key, value in truth.items():
            setattr(label, key, value)
        self._record(msg_id, self.person.name, body)
        self.world.add(mail, label)
        return label

    def from_owner(self, paragraphs: list[str], *, asks: bool, quote: bool) -> Truth:
        rng = self.world.rng
        n = self.world.next_n()
        msg_id = message_id(self.kind + "-sent", n, "hartmann-studio.de")
        original = None
        if quote and self.history:
            name, when, earlier = self.history[-1]
            original = (name, when, self.subject, earlier)
        body, reply, shape = shapes.owner_reply(self.person, rng, paragraphs=paragraphs, original=original)
        headers = self._headers(
            f"{OWNER_NAME} <{OWNER}>", f"{self.person.name} <{self.person.address}>", msg_id, self._subject()
        )
        mail = Mail(headers, body, None, ("Sent",), self.when)
        label = Truth(
            name=f"{self.lang}-{self.kind}-sent-{n:04d}",
            id=msg_id,
            category="owner",
            lang=self.lang,
            date=self.when.isoformat(),
            sender=OWNER,
            thread=self.root or msg_id,
            sent=True,
            reply_text=reply,
            asks=asks,
            shape=shape,
        )
        self._record(msg_id, OWNER_NAME, reply)
        self.world.add(mail, label)
        return label


def ask_body(person: Person, rng: random.Random, day: dt.date) -> tuple[str, dict[str, object]]:
    """A person's email that asks the owner something: questions, a request to meet, or both."""
    lang = person.lang
    parts = [their_greeting(person, rng)]
    if rng.random() < 0.6:
        parts.append(rng.choice(texts.CONTEXT[lang]))
    asked: list[str] = []
    meeting: dict[str, object] | None = None
    notes = [person.note]
    roll = rng.random()
    if roll < 0.4 and day.weekday() < 4:
        ask = rng.choice(texts.MEETINGS[lang])
        if ask.days and ask.days.startswith("wd:") and str(day.weekday()) in ask.days[3:].split(","):
            ask = texts.MEETINGS[lang][1]  # never "on Thursday" written on a Thursday: it would be ambiguous
        meeting = {"minutes": ask.minutes, "days": meeting_days(ask.days, day), "part": ask.part, "said": ask.text}
        parts.append(ask.text)
        if ask.question:
            asked.append(ask.question)
    if roll >= 0.25 or meeting is None:
        chosen = rng.sample(texts.QUESTIONS[lang], rng.randint(1, 3 if meeting is None else 1))
        if rng.random() < 0.5:
            parts.append(" ".join(q.text for q in chosen))
        else:
            parts.append("\n".join(q.text for q in chosen))
        asked += [q.text for q in chosen]
        for question in chosen:
            if "project" in question.needs and person.project:
                notes.append(f"Projects/{person.project}.md")
            if "rates" in question.needs:
                notes.append("Notes/Studio rates.md")
    parts.append(their_closing(person, rng))
    return "\n\n".join(parts), {
        "needs_reply": True,
        "questions": asked,
        "meeting": meeting,
        "notes": list(dict.fromkeys(notes)),
    }


def no_reply_body(person: Person, rng: random.Random) -> str:
    return "\n\n".join(
        (their_greeting(person, rng), rng.choice(texts.NO_REPLY[person.lang]), their_closing(person, rng))
    )
