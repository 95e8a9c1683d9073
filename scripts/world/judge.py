"""H0's judgments on the world, message by message, scored against the truth: precision and recall (or
exact match), with the misses by name.

Each judgment calls H0's own public function on the message as `h0 import` reads it (the importer's
`mail_files` / `messages_of`, then `email_full`: the body as text, HTML converted, the headers cleaned):

| judgment | H0's function | truth |
|---|---|---|
| reply text | `h0.drafting.replytext.split_reply(body).text` | the owner's reply exactly (same lines, each trimmed) |
| automated | `h0.mail.incoming.automated.automated_kind` (on `EmailFull.automated`) | receipts, notifications, lists, auto-replies |
| attack | `h0.triage.phishing.suspected_phishing`, "known" = whom the owner wrote to or a People note names | attacks |
| questions | `h0.drafting.briefing.questions` | each question exactly as written (person mail) |
| meeting | `h0.calendar.phrases.meeting_ask` on subject + `strip_quoted(body)` (as drafting calls it) | request, minutes, days, part of day |
| owner asks | `h0.followup.asks.rules_verdict` | the owner's sent mail asks its recipients something |
| needs a reply | `h0.followup.threads.reply_needed` on `h0.triage.rules.RulesEngine`'s decision (the default rules) and what the email asks (`h0.followup.asks`) | a person asks the owner something |

The pipeline's own figures (replies owed and awaited, drafts, flags on notes after import → sweep →
status) are the bench's (scripts/bench/bench_judgments.py).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from email.utils import getaddresses
from pathlib import Path

from h0.calendar.phrases import meeting_ask
from h0.drafting.briefing import questions
from h0.drafting.replytext import split_reply, strip_quoted
from h0.followup.asks import rules_verdict, with_asks
from h0.followup.threads import reply_needed
from h0.mail.deception.known import Known
from h0.mail.incoming.email_views import email_full
from h0.mail.incoming.importer import FileMessage, MailFile, mail_files, messages_of
from h0.triage.models import EmailInput
from h0.triage.phishing import suspected_phishing
from h0.triage.rules import RulesEngine
from scripts.world.model import Truth
from scripts.world.persona import OWNER, OWNER_DOMAIN, PEOPLE

NEEDS_THE_OWNER = frozenset({"draft_reply", "urgent", "needs_info"})


@dataclass
class Score:
    """One judgment's confusion counts and the names of its misses."""

    name: str
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    exact: bool = False  # an exact-match judgment: `tp` right of `tp + fn`
    missed: list[str] = field(default_factory=list)  # should have said yes (or said wrong)
    wrong: list[str] = field(default_factory=list)  # said yes where the truth is no
    note: str = ""

    def count(self, truth: bool, said: bool, name: str) -> None:
        if truth and said:
            self.tp += 1
        elif truth:
            self.fn += 1
            self.missed.append(name)
        elif said:
            self.fp += 1
            self.wrong.append(name)
        else:
            self.tn += 1

    def match(self, right: bool, name: str) -> None:
        self.exact = True
        self.count(True, right, name)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def line(self) -> str:
        if self.exact:
            return f"{self.name:<22} exact {self.recall:6.1%}  ({self.tp}/{self.tp + self.fn})"
        return (
            f"{self.name:<22} precision {self.precision:6.1%}  recall {self.recall:6.1%}  "
            f"(tp {self.tp}, fp {self.fp}, fn {self.fn})"
        )


@dataclass(frozen=True)
class Read:
    """A message as `h0 import` reads it, with its truth."""

    truth: Truth
    message: FileMessage

    @property
    def body(self) -> str:
        return email_full(self.message.fetched).body


def read_world(paths: Sequence[Path], truths: Iterable[Truth]) -> list[Read]:
    """The messages of `paths` (an mbox, .eml files, folders) that have a truth, in file order."""
    by_id = {truth.id: truth for truth in truths}
    found: list[Read] = []
    for file in mail_files(list(paths)):
        if not isinstance(file, MailFile):
            continue  # a file that cannot be read: not the world's
        for item in messages_of(file):
            if not isinstance(item, FileMessage):
                continue
            truth = by_id.get(str(item.fetched.headers.get("Message-ID") or "").strip())
            if truth is not None:
                found.append(Read(truth, item))
    return found


def same_lines(a: str, b: str) -> bool:
    """The same non-blank lines, each trimmed: the owner's words, whatever blank lines stand between."""

    def lines(text: str) -> list[str]:
        return [" ".join(line.split()) for line in text.replace("\r\n", "\n").split("\n") if line.strip()]

    return lines(a) == lines(b)


def known_people(reads: Sequence[Read]) -> Known:
    """Whom the owner knows: the People notes (their names and addresses), everyone she wrote to (To and Cc of
    her sent mail, with the names she gave them), and her own domain."""
    people = [(p.name, p.address) for p in PEOPLE]
    for read in reads:
        if read.truth.sent:
            headers = read.message.fetched.headers
            people += getaddresses([str(headers.get("To") or ""), str(headers.get("Cc") or "")])
    return Known.of(people, own=[OWNER_DOMAIN])


def email_input(read: Read) -> EmailInput:
    """The email as triage sees it (h0.handlers.triage_plan): with what ingest found in its headers (automated)
    and what the sender's own words ask (h0.followup.asks)."""
    full = email_full(read.message.fetched)
    email = EmailInput.model_validate(
        {
            "from": full.sender,
            "to": [full.to] if full.to else [],
            "cc": [full.cc] if full.cc else [],
            "subject": full.subject,
            "body": full.body,
            "received": full.date,
            "labels": list(full.labels),
            "message_id": full.rfc822_message_id,
            "auth": full.authentication,
            "automated": full.automated or "",
        }
    )
    return with_asks(email)


def _question_key(text: str) -> str:
    """A question as a person reads it: spaces as one, Markdown escapes undone (briefings show "\\$40k")."""
    return " ".join(re.sub(r"\\(.)", r"\1", text).split())


def judge(reads: Sequence[Read]) -> list[Score]:
    """Every per-message judgment on `reads` (see the module)."""
    inbound = [r for r in reads if not r.truth.sent]
    known = known_people(reads)
    scores = [
        _reply_text([r for r in reads if r.truth.sent and r.truth.reply_text is not None]),
        _automated(inbound),
        _attack(inbound, known),
        *_questions([r for r in inbound if r.truth.category == "person"]),
        *_meeting(inbound),
        _owner_asks([r for r in reads if r.truth.sent and r.truth.asks is not None]),
        _needs_reply(inbound, known),
    ]
    return scores


def _reply_text(reads: Sequence[Read]) -> Score:
    score = Score("reply text")
    for read in reads:
        score.match(same_lines(split_reply(read.body).text, read.truth.reply_text or ""), read.truth.name)
    return score


def _automated(reads: Sequence[Read]) -> Score:
    score = Score("automated")
    for read in reads:
        said = email_full(read.message.fetched).automated is not None
        score.count(read.truth.automated, said, read.truth.name)
    return score


def _attack(reads: Sequence[Read], known: Known) -> Score:
    score = Score("attack")
    real_flagged = 0
    for read in reads:
        said = suspected_phishing(email_input(read), known) is not None
        score.count(read.truth.attack is not None, said, read.truth.name)
        if said and read.truth.attack is None and read.truth.category == "person":
            real_flagged += 1
    score.note = f"false positives on real correspondents: {real_flagged}"
    return score


def _questions(reads: Sequence[Read]) -> list[Score]:
    found = Score("questions (each)")
    whole = Score("questions (message)")
    for read in reads:
        truth = {_question_key(q) for q in read.truth.questions}
        said = {_question_key(q) for q in questions(read.body)}
        for question in sorted(truth | said):
            found.count(question in truth, question in said, f"{read.truth.name}: {question[:60]}")
        whole.match(truth == said, read.truth.name)
    return [found, whole]


def _meeting(reads: Sequence[Read]) -> list[Score]:
    asks, length, days, part = (
        Score("meeting request"),
        Score("meeting length"),
        Score("meeting days"),
        Score("meeting part of day"),
    )
    by_language = {lang: Score(f"meeting request ({lang})") for lang in ("en", "de", "fr")}
    for read in reads:
        full = email_full(read.message.fetched)
        today = dt.datetime.fromisoformat(read.truth.date).date()
        ask = meeting_ask(f"{full.subject}\n{strip_quoted(full.body) or full.body}", today)
        truth = read.truth.meeting
        asks.count(truth is not None, ask is not None, read.truth.name)
        if read.truth.lang in by_language:
            by_language[read.truth.lang].count(truth is not None, ask is not None, read.truth.name)
        if truth is None or ask is None:
            continue
        length.match(ask.minutes == truth["minutes"], read.truth.name)
        said_days = sorted(d.isoformat() for d in ask.days if d.weekday() < 5) if ask.days is not None else None
        days.match(said_days == truth["days"], read.truth.name)
        if truth["part"] is not None or ask.part is not None:
            part.match(ask.part == truth["part"], read.truth.name)
    return [asks, *by_language.values(), length, days, part]


def _owner_asks(reads: Sequence[Read]) -> Score:
    score = Score("owner asks")
    for read in reads:
        full = email_full(read.message.fetched)
        score.count(bool(read.truth.asks), rules_verdict(full.body, full.subject).asks, read.truth.name)
    return score


def _needs_reply(reads: Sequence[Read], known: Known) -> Score:
    """H0's `reply_needed` (the rule replies owed are built on: h0.followup.threads) on the default rules' decision
    and the email's own words, for mail a person wrote: never machine-made mail, never a suspected attack (triage's
    own check, with the same known domains as the attack judgment), never mail From the owner's own address that
    her sent mail does not vouch for."""
    engine = RulesEngine(None)  # the default rules, the ones `h0 init` writes
    score = Score("needs a reply (rules)")
    for read in reads:
        email = email_input(read)
        decision = engine.triage(email).decision.decision
        person = not email.automated and email.sender_address != OWNER
        attack = suspected_phishing(email, known) is not None
        said = person and not attack and reply_needed(decision, bool(email.asks))
        score.count(read.truth.needs_reply, said, read.truth.name)
    return score


def report(scores: Sequence[Score], misses: int = 8, out: Callable[[str], None] = print) -> None:
    for score in scores:
        out(score.line() + (f"   [{score.note}]" if score.note else ""))
        for label, names in (("missed", score.missed), ("wrong", score.wrong)):
            if names and misses:
                shown = ", ".join(names[:misses]) + (f", … (+{len(names) - misses})" if len(names) > misses else "")
                out(f"    {label}: {shown}")
