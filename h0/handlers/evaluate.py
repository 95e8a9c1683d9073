"""How good would H0's drafts be on the owner's own mail? (`h0 eval`, docs/eval.md)

Each reply the owner sent that H0 can pair with the email it answered (h0.handlers.eval_cases: notes in
`Done/` and the mail kept as history) is hidden; H0 drafts that email again exactly as triage would (same
triager, same context assembly), from the owner's mail, notes and lessons as they stood when the reply was
sent (h0.handlers.eval_asof); and the draft is judged against what the owner actually sent:

- with a model: **send-ready** or not, by the failures a person checks before sending — missed ask, wrong
  fact, wrong commitment, voice, padding, placeholder (h0.drafting.sendready) — each with its reason;
- without one (rules mode), H0 writes a briefing, not an answer, so no draft is ever send-ready: what it is
  judged on is what the briefing put before the owner — the email's questions that the owner's notes
  answer, and the facts of the owner's reply that the briefing holds.

Facts are compared in one form (h0.drafting.mailfacts); `similarity` (difflib over words) is still shown,
never the test. The gate is asked for each pair (h0.handlers.eval_cases): a private one is left out and
counted, never sent to a model; no private reply is a past reply either. Nothing is written to the vault but
the report note (h0.handlers.eval_report); the drafts exist only in memory.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from h0.config import Settings
from h0.drafting.briefing import questions
from h0.drafting.learning import similarity
from h0.drafting.mailfacts import FactSet, facts
from h0.drafting.sendready import Failure, Verdict, judge_draft
from h0.handlers.context import EmailTriager, HandlerContext
from h0.handlers.eval_asof import DraftingAsOf
from h0.handlers.eval_cases import Case
from h0.handlers.triage_plan import plan_reply
from h0.mail.compose.drafts import PLACEHOLDER
from h0.mail.incoming.htmltext import block_text
from h0.vault.sendable import message_body


@dataclass(frozen=True, slots=True)
class Briefed:
    """Rules mode: what the briefing put before the owner."""

    questions: tuple[str, ...]  # the email's questions (h0.drafting.briefing.questions)
    answered: tuple[str, ...]  # those the briefing gives lines of the owner's notes for


@dataclass(frozen=True, slots=True)
class Score:
    """How H0's draft for one case compares with what the owner sent."""

    case: Case
    decision: str
    draft: str
    verdict: Verdict | None  # None: rules mode, where H0 writes no answer to judge
    similarity: float
    facts: tuple[str, ...]  # the reply's facts the email did not already hold
    recalled: tuple[str, ...]  # those of them the draft holds too
    placeholders: int
    briefed: Briefed | None = None
    lessons_left_out: int = 0  # lessons drawn from this reply or later ones, not shown

    @property
    def send_ready(self) -> bool:
        return self.verdict is not None and self.verdict.send_ready


@dataclass(frozen=True, slots=True)
class EvalReport:
    provider: str
    model: str | None
    scores: tuple[Score, ...]
    private_left_out: int = 0  # pairs not drafted again: private (h0.handlers.eval_cases)
    rules: bool = False  # no model: briefings, judged on what they put before the owner

    @property
    def send_ready_share(self) -> float | None:
        return None if self.rules else _share(s.send_ready for s in self.scores)

    @property
    def failures(self) -> dict[str, int]:
        """How many drafts failed each way (a draft may fail several ways), in the taxonomy's order."""
        counted = Counter(f.value for s in self.scores if s.verdict for f in s.verdict.failures)
        return {f.value: counted[f.value] for f in Failure}

    @property
    def facts_recalled(self) -> float | None:
        total = sum(len(s.facts) for s in self.scores)
        return sum(len(s.recalled) for s in self.scores) / total if total else None

    @property
    def questions(self) -> tuple[int, int]:
        """(questions the emails asked, those the briefings answered from the owner's notes)."""
        briefed = [s.briefed for s in self.scores if s.briefed is not None]
        return sum(len(b.questions) for b in briefed), sum(len(b.answered) for b in briefed)

    @property
    def placeholders(self) -> int:
        return sum(s.placeholders for s in self.scores)

    def summary(self) -> str:
        facts_share = "n/a" if self.facts_recalled is None else f"{self.facts_recalled:.0%}"
        left_out = f"{self.private_left_out} private left out · " if self.private_left_out else ""
        model = f"model: {self.provider}{f' ({self.model})' if self.model else ''}"
        if self.rules:
            asked, answered = self.questions
            share = f" ({answered / asked:.0%})" if asked else ""
            return (
                f"{len(self.scores)} replies · {left_out}rules mode: H0 writes briefings, not answers (no send-ready "
                f"rate) · questions asked {asked} · answered by your notes {answered}{share} · your replies' facts "
                f"in the briefings {facts_share} · {model}"
            )
        ready = sum(s.send_ready for s in self.scores)
        failed = ", ".join(f"{kind} {n}" for kind, n in self.failures.items() if n) or "none"
        return (
            f"{len(self.scores)} replies · {left_out}send-ready {self.send_ready_share:.0%} ({ready}) · not, because: "
            f"{failed} · facts recalled {facts_share} · {model}"
        )


def evaluate(
    cases: Sequence[Case],
    ctx: HandlerContext,
    triager: EmailTriager,
    settings: Settings,
    *,
    sent_at: Mapping[str, float] | None = None,
    left_out: int = 0,
) -> EvalReport:
    """Draft each case's email again, its reply hidden, and judge the draft against the reply (the cases were
    chosen by the gate: h0.handlers.eval_cases.EvalPrivacy; no private reply is a past reply either: the as-of
    drafting's past replies ask the gate); `sent_at`: when each reply in Done/ was sent, by name (a lesson's
    provenance); `left_out`: the private pairs, for the report."""
    drafting = DraftingAsOf.for_eval(settings, sent_at or {})
    rules = getattr(triager, "llm", None) is None
    scores: list[Score] = []
    for case in cases:
        drafting.as_of(case.sent_at, case.sent_path)
        plan = plan_reply(case.email, ctx, triager, drafting)
        text = message_body(plan.draft.body).strip() if plan.draft is not None else ""
        known = plan.context.text() if plan.context is not None else ""
        if plan.context is not None and plan.context.scheduling is not None:
            known += "\n\n" + plan.context.scheduling.prompt_text()
        read = plan.read or block_text(case.email.body)
        scores.append(score(case, str(plan.record["decision"]), text, read, known, rules, drafting.lessons_left_out))
    provider = getattr(triager, "provider_name", "rules")
    model = getattr(triager, "model_name", None)
    return EvalReport(str(provider), model, tuple(scores), left_out, rules)


def score(
    case: Case, decision: str, draft: str, email: str, known: str = "", rules: bool = False, lessons_left_out: int = 0
) -> Score:
    """`draft` judged against the owner's reply; `email`: the email's words and its thread as the triager read
    them; `known`: the owner's notes the draft was given; `rules`: a briefing, judged on what it holds."""
    in_email, in_draft = FactSet(facts(email)), FactSet(facts(draft))
    new = [f for f in facts(case.sent_text) if not in_email.says(f)]
    reply_facts = tuple(dict.fromkeys(f.shown for f in new))
    recalled = tuple(dict.fromkeys(f.shown for f in new if in_draft.says(f)))
    briefed = verdict = None
    if rules:
        asked = tuple(questions(block_text(case.email.body)))  # the email's own, as its briefing asked them
        briefed = Briefed(asked, tuple(q for q in asked if f"**“{q}”**" in draft))
    else:
        verdict = judge_draft(draft, case.sent_text, email=email, known=known)
    return Score(
        case=case,
        decision=decision,
        draft=draft,
        verdict=verdict,
        similarity=similarity(draft, case.sent_text) if draft else 0.0,
        facts=reply_facts,
        recalled=recalled,
        placeholders=len(PLACEHOLDER.findall(draft)),
        briefed=briefed,
        lessons_left_out=lessons_left_out,
    )


def _share(flags: Iterable[bool]) -> float:
    values = [1.0 if f else 0.0 for f in flags]
    return statistics.fmean(values) if values else 0.0
