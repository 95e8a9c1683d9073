"""`h0 eval`'s report: a table for the terminal, a note for `Logs/` with every draft beside what the owner
sent and why it would or would not be sent as it is, and the same as JSON for a script.

Words from mail and from a model are shown inert: table cells escaped (h0.printable), drafts and replies
each in a fenced block nothing in it can close (h0.mail.incoming.htmltext.inert_block), so no link,
embed or image in them renders or fetches in Obsidian.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from h0.handlers.evaluate import EvalReport, Score
from h0.mail.incoming.htmltext import inert_block
from h0.printable import printable


def table(report: EvalReport) -> str:
    """The report as a Markdown table (a terminal shows it as it is; Obsidian renders it)."""
    if report.rules:
        rows = [
            "| reply | to | decision | questions | answered by your notes | your facts in the briefing |",
            "|---|---|---|---|---|---|",
        ]
        for s in report.scores:
            asked, answered = (len(s.briefed.questions), len(s.briefed.answered)) if s.briefed else (0, 0)
            rows.append(
                f"| {_cell(s.case.label)} | {_cell(_to(s))} | {s.decision} | {asked} | {answered} | {_facts(s)} |"
            )
        return "\n".join(rows)
    rows = [
        "| reply | to | decision | send-ready | why not | facts | similarity |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in report.scores:
        why = ", ".join(f.value for f in s.verdict.failures) if s.verdict else ""
        rows.append(
            f"| {_cell(s.case.label)} | {_cell(_to(s))} | {s.decision} | {'yes' if s.send_ready else 'no'} | "
            f"{why or '—'} | {_facts(s)} | {s.similarity:.2f} |"
        )
    return "\n".join(rows)


def report_note(report: EvalReport, now: dt.datetime) -> str:
    """The note written to Logs/: the summary, the table, then each draft beside the reply it stands for."""
    lead = (
        "H0 has no model here: each email got a briefing (what your notes say on each question), not an answer. "
        "It is judged on what it put before you.\n\n"
        if report.rules
        else "Would you have sent H0's draft as it is? Each reply of yours was hidden while H0 drafted its email "
        "again, from your mail, notes and lessons as they were then.\n\n"
    )
    parts = [
        f"# H0 eval, {now:%Y-%m-%d %H:%M}\n\n{lead}**{_cell(report.summary())}**\n\n{table(report)}\n\n## The drafts\n"
    ]
    parts += [_draft_section(s) for s in report.scores]
    return "\n".join(parts)


def _draft_section(s: Score) -> str:
    head = f"### {_cell(s.case.label)}\n\nTo {_cell(_to(s))} · decision: {s.decision}"
    if s.briefed is not None:
        unanswered = [q for q in s.briefed.questions if q not in s.briefed.answered]
        head += f" · questions answered by your notes: {len(s.briefed.answered)} of {len(s.briefed.questions)}"
        if unanswered:
            head += "\n\nNot answered by your notes: " + "; ".join(f"“{_cell(q)}”" for q in unanswered)
    elif s.verdict is not None:
        head += " · **send-ready**" if s.send_ready else " · **not send-ready**"
        head += "".join(f"\n- {f.failure.value}: {_cell(f.detail)}" for f in s.verdict.findings)
    if s.lessons_left_out:
        head += f"\n\n({s.lessons_left_out} lesson(s) drawn from this reply or later ones were not shown.)"
    draft = inert_block(s.draft) if s.draft else "_(no draft: H0 would not have replied)_\n"
    return f"{head}\n\nH0's draft:\n\n{draft}\nWhat you sent:\n\n{inert_block(s.case.sent_text)}"


def as_json(report: EvalReport) -> dict[str, Any]:
    asked, answered = report.questions
    return {
        "provider": report.provider,
        "model": report.model,
        "mode": "rules" if report.rules else "model",
        "send_ready_share": report.send_ready_share,
        "failures": None if report.rules else report.failures,
        "facts_recalled": report.facts_recalled,
        "questions_asked": asked if report.rules else None,
        "questions_answered_by_notes": answered if report.rules else None,
        "placeholders": report.placeholders,
        "private_left_out": report.private_left_out,
        "replies": [_reply_json(s) for s in report.scores],
    }


def _reply_json(s: Score) -> dict[str, Any]:
    return {
        "sent": s.case.label,
        "sent_note": s.case.sent_path,
        "email": s.case.email.path,
        "decision": s.decision,
        "send_ready": None if s.verdict is None else s.send_ready,
        "failures": None
        if s.verdict is None
        else [{"kind": f.failure.value, "detail": f.detail} for f in s.verdict.findings],
        "questions": list(s.briefed.questions) if s.briefed else None,
        "answered_by_notes": list(s.briefed.answered) if s.briefed else None,
        "similarity": round(s.similarity, 3),
        "facts": list(s.facts),
        "recalled": list(s.recalled),
        "placeholders": s.placeholders,
        "lessons_left_out": s.lessons_left_out,
        "draft": s.draft,
    }


def _to(s: Score) -> str:
    return s.case.email.facts.sender or "?"


def _facts(s: Score) -> str:
    return f"{len(s.recalled)}/{len(s.facts)}" if s.facts else "—"


def _cell(text: str) -> str:
    return printable(text).replace("|", "\\|")
