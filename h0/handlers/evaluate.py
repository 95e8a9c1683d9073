"""How good would H0's drafts be on the owner's own mail? (`h0 eval`)

Each reply the owner sent that H0 can pair with the email it answered is hidden; H0 drafts that
email again exactly as triage would (same triager, same context assembly), from the vault as it
was — the owner's replies sent at or after the hidden one are left out of past replies — and the
draft is compared with what the owner actually sent:

- **send-ready**: the sent words match the draft's at a difflib ratio of at least
  `SEND_READY_SIMILARITY` (the same definition as the dashboard's send-ready rate);
- **facts recalled**: the share of the reply's facts (amounts, dates, times, codes, addresses,
  links, proper names) that are not in the email itself and that the draft also holds;
- **voice**: the same greeting, the same sign-off, the same language, a length within half to
  twice the owner's;
- **placeholders**: `[FILL: …]` the draft left for the owner.

The disclosure gate is asked for each pair, through the vault index (h0.vault.index: `is_private`): a pair
whose email or reply is private — by its own mark, its folder, its thread or a private person's — is left out
of the run, never sent to a model, and counted ("4 private left out"); no private reply is a past reply either
(h0.drafting.past, and `PastAsOf` asks the gate about each reply's people).

Nothing is written to the vault but the report note (`Logs/eval_<time>.md`, unless told not to);
the drafts exist only in memory.
"""

from __future__ import annotations

import datetime as dt
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from h0.config import Settings
from h0.drafting.learning import SEND_READY_SIMILARITY, similarity
from h0.drafting.past import PastReplies
from h0.drafting.pastreply import PastReply
from h0.drafting.replytext import split_reply
from h0.drafting.service import Drafting
from h0.errors import H0Error
from h0.handlers.context import EmailTriager, HandlerContext
from h0.handlers.triage_plan import plan_reply
from h0.mail.compose.drafts import CUTOFF, PLACEHOLDER, message_body
from h0.mail.owner import OwnerAuthority, note_message_key
from h0.printable import printable
from h0.triage import DRAFT_MARKER
from h0.vault import Vault
from h0.vault.disclosure import Disclosure
from h0.vault.layout import DONE, NEEDS_ACTION
from h0.vault.model import note_facts, source_path
from h0.vault.note import Note

LIGHT_LENGTH = (0.5, 2.0)  # a draft between half and twice the owner's length "matches" it
_LINK = re.compile(r"\[\[([^\]|#]+)")
_FACT = re.compile(
    r"[€$£]\s?\d[\d,.]*"  # amounts
    r"|\b\d[\d,.]*\s?(?:%|€|eur|usd|seats?|days?|weeks?|hours?|roles?)\b"  # quantities
    r"|\b\d{1,2}:\d{2}\b"  # times
    r"|\b\d{1,2}\.?\s(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-zäé]*\b"  # 14 May, 2. August
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s\d{1,2}\b"  # May 14
    r"|\b\d{4}-\d{2}-\d{2}\b"  # ISO dates
    r"|\b[A-Z]{2,}-\d+\b"  # codes: INV-2231
    r"|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"  # addresses
    r"|\b[\w-]+(?:\.[\w-]+)+/[\w/.-]*"  # links without a scheme: cal.example/alex
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b",  # days
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Case:
    """One reply the owner sent, and the email it answered."""

    email: Note
    sent_path: str
    sent_text: str  # what the owner sent, above the cut-off, quoted history cut
    sent_at: float  # epoch seconds (0: unknown)


@dataclass(frozen=True, slots=True)
class Score:
    """How H0's draft for one case compares with what the owner sent."""

    case: Case
    decision: str
    draft: str
    similarity: float
    facts: tuple[str, ...]  # the reply's facts the email did not already hold
    recalled: tuple[str, ...]  # those of them the draft holds too
    greeting: bool
    sign_off: bool
    length_ratio: float
    placeholders: int

    @property
    def send_ready(self) -> bool:
        return self.similarity >= SEND_READY_SIMILARITY

    @property
    def voice(self) -> bool:
        low, high = LIGHT_LENGTH
        return self.greeting and self.sign_off and low <= self.length_ratio <= high


@dataclass(frozen=True, slots=True)
class EvalReport:
    provider: str
    model: str | None
    scores: tuple[Score, ...]
    private_left_out: int = 0  # pairs not drafted again: private (find_cases)

    @property
    def send_ready_share(self) -> float:
        return _share(s.send_ready for s in self.scores)

    @property
    def facts_recalled(self) -> float | None:
        total = sum(len(s.facts) for s in self.scores)
        return sum(len(s.recalled) for s in self.scores) / total if total else None

    @property
    def voice_share(self) -> float:
        return _share(s.voice for s in self.scores)

    @property
    def placeholders(self) -> int:
        return sum(s.placeholders for s in self.scores)

    def summary(self) -> str:
        facts = "n/a" if self.facts_recalled is None else f"{self.facts_recalled:.0%}"
        left_out = f"{self.private_left_out} private left out · " if self.private_left_out else ""
        return (
            f"{len(self.scores)} replies · {left_out}send-ready {self.send_ready_share:.0%} · facts recalled {facts} · "
            f"voice {self.voice_share:.0%} · placeholders left {self.placeholders} · "
            f"model: {self.provider}{f' ({self.model})' if self.model else ''}"
        )


class PastAsOf(PastReplies):
    """The owner's past replies as they stood just before a hidden reply was sent, without a private one (of a
    private thread: h0.drafting.past; or to a private person: the gate's `address_private`)."""

    def __init__(
        self, root: Path, sent_cache: Path | None, disclosure: Disclosure, owner: OwnerAuthority | None
    ) -> None:
        super().__init__(root, sent_cache, disclosure, owner)
        self.before: float = float("inf")
        self.hidden: str | None = None

    def _kept(self, replies: Iterable[PastReply]) -> list[PastReply]:
        return [
            r
            for r in replies
            if r.path != self.hidden and (not r.when or r.when < self.before) and not self.disclosure.mail_private(r.to)
        ]

    def to_address(self, address: str, limit: int = 3) -> list[PastReply]:
        return self._kept(super().to_address(address, limit + 50))[:limit]

    def all(self) -> list[PastReply]:
        return self._kept(super().all())

    def similar(self, text: str, limit: int = 2, exclude: Iterable[PastReply] = ()) -> list[tuple[PastReply, float]]:
        found = super().similar(text, limit + 50, exclude)
        kept = {id(r) for r in self._kept(r for r, _ in found)}
        return [(r, s) for r, s in found if id(r) in kept][:limit]


def find_cases(
    vault: Vault, limit: int, owner: OwnerAuthority, private: Callable[[str], bool]
) -> tuple[list[Case], int]:
    """The newest `limit` replies in `Done/` the owner's identity vouches for (h0.mail.owner: a note that
    merely says `status: sent` is nobody's reply), whose email is still in the vault; and how many newer
    pairs were left out as private (`private(path)`: the gate's answer for the email or the reply)."""
    listing = vault.list_notes(DONE, "status:sent", with_frontmatter=True)
    vouched = owner.owned_notes([(n.path, note_message_key(n.frontmatter or {})) for n in listing.notes])
    found: list[Case] = []
    left_out = 0
    sent = sorted(listing.notes, key=lambda n: note_facts(n.path, n.frontmatter or {}).sent_at or 0.0, reverse=True)
    for entry in (n for n in sent if n.path in vouched):
        if len(found) >= limit:
            break
        try:
            note = vault.read_note(entry.path)
            email = _answered(vault, note)
        except H0Error:
            continue
        if email is None:
            continue
        if private(email.path) or private(note.path):
            left_out += 1  # never drafted again: its words would reach the model
            continue
        text = split_reply(message_body(note.body)).text  # the owner's words: quoted history cut
        if text:
            found.append(Case(email, note.path, text, note.facts.sent_at or 0.0))
    return found, left_out


def _answered(vault: Vault, sent: Note) -> Note | None:
    """The email a sent reply answered: its `source:` (any spelling of the link), else the "Replying to
    [[…]]" link H0 wrote; looked for by name in Done/ and Needs_Action/ (an answered email moves)."""
    links = [sent.facts.source, *(source_path(f"[[{link}]]") for link in _LINK.findall(sent.body.partition(CUTOFF)[2]))]
    for link in links:
        name = (link or "").rsplit("/", 1)[-1].removesuffix(".md")
        if not name:
            continue
        for folder in (DONE, NEEDS_ACTION):
            path = f"{folder}/{name}.md"
            if vault.exists(path):
                email = vault.read_note(path)
                if email.facts.is_email or not email.facts.type_word:  # no `type:` at all: an email too
                    return email
    return None


def drafting_for(settings: Settings) -> tuple[Drafting, PastAsOf]:
    """A drafting state of its own (never the process's shared one), its past replies hideable."""
    drafting = Drafting.build(settings)
    past = PastAsOf(drafting.root, drafting.sent_cache, drafting.disclosure, drafting.owner)
    past.threads = drafting.threads  # private threads told by the drafting state's index, not a walk
    drafting.past = past
    return drafting, past


def evaluate(
    cases: Sequence[Case],
    ctx: HandlerContext,
    triager: EmailTriager,
    settings: Settings,
    *,
    left_out: int = 0,
) -> EvalReport:
    """Draft each case's email again, its reply hidden, and score the draft against the reply. `left_out`: the
    private pairs `find_cases` left out, for the report."""
    drafting, past = drafting_for(settings)
    scores: list[Score] = []
    for case in cases:
        past.before = case.sent_at or float("inf")
        past.hidden = case.sent_path
        decision, draft = plan_reply(case.email, ctx, triager, drafting)
        text = message_body(draft.body).strip() if draft is not None else ""
        # The template's first line is H0's marker (a draft holding it is never sent): the owner deletes it.
        text = text.removeprefix(DRAFT_MARKER).strip()
        scores.append(score(case, decision, text))
    provider = getattr(triager, "provider_name", "rules")
    return EvalReport(str(provider), getattr(triager, "model_name", None), tuple(scores), left_out)


def score(case: Case, decision: str, draft: str) -> Score:
    ours, theirs = split_reply(draft), split_reply(case.sent_text)
    email_words = message_body(case.email.body).lower()
    facts = tuple(f for f in facts_in(case.sent_text) if f.lower() not in email_words)
    recalled = tuple(f for f in facts if f.lower() in draft.lower())
    sent_words = len(case.sent_text.split())
    return Score(
        case=case,
        decision=decision,
        draft=draft,
        similarity=similarity(draft, case.sent_text) if draft else 0.0,
        facts=facts,
        recalled=recalled,
        greeting=_same(ours.greeting, theirs.greeting),
        sign_off=_same(ours.sign_off, theirs.sign_off),
        length_ratio=len(draft.split()) / sent_words if sent_words else 0.0,
        placeholders=len(PLACEHOLDER.findall(draft)),
    )


def facts_in(text: str) -> list[str]:
    """Amounts, dates, times, codes, addresses, links and days in a reply, each once."""
    return list(dict.fromkeys(m.group(0).strip().rstrip(".,") for m in _FACT.finditer(text)))


def _same(ours: str | None, theirs: str | None) -> bool:
    def norm(line: str | None) -> str:
        return re.sub(r"[\W_]+", " ", (line or "").lower()).strip()

    return norm(ours) == norm(theirs)


def _share(flags: Iterable[bool]) -> float:
    values = [1.0 if f else 0.0 for f in flags]
    return statistics.fmean(values) if values else 0.0


def table(report: EvalReport) -> str:
    """The report as a Markdown table (a terminal shows it as it is; Obsidian renders it)."""
    rows = [
        "| reply | to | decision | similarity | send-ready | facts | greeting | sign-off | length | placeholders |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in report.scores:
        to = s.case.email.facts.sender or "?"
        facts = f"{len(s.recalled)}/{len(s.facts)}" if s.facts else "—"
        rows.append(
            f"| {_cell(s.case.sent_path)} | {_cell(to)} | {s.decision} | {s.similarity:.2f} | "
            f"{'yes' if s.send_ready else 'no'} | {facts} | {_tick(s.greeting)} | {_tick(s.sign_off)} | "
            f"{s.length_ratio:.1f}× | {s.placeholders} |"
        )
    return "\n".join(rows)


def report_note(report: EvalReport, now: dt.datetime) -> str:
    return (
        f"# H0 eval, {now:%Y-%m-%d %H:%M}\n\n"
        "How H0's drafts compare with the replies you actually sent (each reply hidden while H0 drafted it).\n\n"
        f"**{report.summary()}**\n\n{table(report)}\n"
    )


def _tick(flag: bool) -> str:
    return "✓" if flag else "✗"


def _cell(text: str) -> str:
    return printable(text).replace("|", "\\|")
