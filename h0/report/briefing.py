"""Briefings/<day>.md: what arrived that (local) day, what H0 decided, what was sent, what waits.

`collect_day` picks the day's audit records and asks the gate about the latest BRIEFING_ROWS of each
list (h0.report.privacy): a record about a private note, or naming a private person, is counted, never
handed on; earlier ones are only counted ("see Logs/"); `render_briefing` writes the rest.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from typing import Any

from h0.report.audittail import current_errors, sent_recipients
from h0.report.followups import age
from h0.report.markdown import (
    COPY_HEAD,
    copy_rows,
    md_link,
    md_private,
    md_recipients,
    md_sender,
    md_text,
    table,
    why_needed,
)
from h0.report.privacy import ReportGate, not_named, record_private, split
from h0.report.text import local_time
from h0.vault.audit import iso
from h0.vault.layout import DRAFTS, LOGS

BRIEFINGS = "Briefings"
BRIEFING_ROWS = 50
_UNSENT = frozenset({"send_refused", "send_held", "email_delivery_failed"})


def collect_day(day: dt.date, records: list[dict[str, Any]], private: ReportGate) -> dict[str, Any]:
    """The (local) day's arrivals, decisions, sends and refusals from the audit `records`: of each list, how
    many (`counts`), the latest BRIEFING_ROWS without the private ones, and how many of those were private
    (`private`)."""
    start = dt.datetime.combine(day, dt.time.min).astimezone()
    since, until = iso(start), iso(start + dt.timedelta(days=1))
    today = [
        r
        for r in records
        if since <= str(r.get("timestamp", "")) < until
        and (r.get("stream") == "h0" or (r.get("stream") == "gmail_mcp" and r.get("event") == "email_sent"))
    ]
    ingested = [r for r in today if r.get("event") == "email_ingested"]
    decided = [r for r in today if r.get("event") == "triage_decision"]
    filed = {
        (r.get("path"), r.get("idempotency_key")): r.get("done_path") for r in today if r.get("event") == "email_filed"
    }
    sent = [
        {**r, "done_path": filed.get((r.get("path"), r.get("idempotency_key")))}
        for r in today
        if r.get("event") == "email_sent"
    ]
    arrived_paths = {str(r.get("path")) for r in ingested}
    arrived = ingested + [{**r, "path": r.get("note")} for r in decided if str(r.get("note")) not in arrived_paths]
    copies = [r for r in today if r.get("event") == "copy_filed"]  # filed in Done/ instead of sent
    lists = {
        "arrived": arrived,
        "decided": decided,
        "sent": sent,
        "copies": copies,
        "unsent": current_errors(today, since, _UNSENT),
    }
    judged = {name: split(rows[-BRIEFING_ROWS:], lambda r: record_private(private, r)) for name, rows in lists.items()}
    return {
        "day": day.isoformat(),
        "decisions": dict(Counter(str(r.get("decision")) for r in decided).most_common()),  # counts: private too
        "counts": {name: len(rows) for name, rows in lists.items()},
        **{name: rows for name, (rows, _) in judged.items()},
        "private": {name: left for name, (_, left) in judged.items()},
        "woke": [r for r in today if r.get("event") == "note_unsnoozed" and not record_private(private, r)],
    }


def render_briefing(today: dict[str, Any], status: dict[str, Any]) -> str:
    """Briefings/<day>.md from `collect_day`'s facts and the status now (h0.report.collect)."""
    day = dt.date.fromisoformat(today["day"])
    private, counts = today["private"], today["counts"]
    earlier = {name: counts[name] - len(today[name]) - private[name] for name in counts}
    lines = [f"# H0 briefing — {day:%A %d %B %Y}", "", "What is happening right now: [[H0_Dashboard]].", ""]

    lines.append(f"## Arrived ({counts['arrived']})")
    rows = [
        (
            local_time(r["timestamp"]),
            md_link(_name(r.get("path"))),
            md_sender(r.get("sender")) or "—",
            md_text(r.get("subject") or "—", 80),
        )
        for r in today["arrived"]
    ]
    lines += _rows(
        ("time", "email", "from", "subject"), rows, "Nothing arrived.", earlier["arrived"], private["arrived"], "email"
    )

    decided = today["decided"]
    lines.append(f"## What H0 decided ({counts['decided']})")
    if today["decisions"]:
        lines += [" · ".join(f"{md_text(name, 30)}: {n}" for name, n in today["decisions"].items()), ""]
    lines += _rows(
        ("time", "email", "decision", "why"),
        [
            (
                local_time(r["timestamp"]),
                md_link(_name(r.get("note"))),
                md_text(r.get("decision"), 30),
                md_text(r.get("reasoning"), 200),
            )
            for r in decided
        ],
        "No email was triaged.",
        earlier["decided"],
        private["decided"],
        "email",
    )

    lines.append(f"## Sent ({counts['sent']})")
    lines += _rows(
        ("time", "note", "to", "subject"),
        [
            (
                local_time(r["timestamp"]),
                md_link(r.get("done_path") or r.get("path")),
                md_recipients(sent_recipients(r)),
                md_text(r.get("subject"), 80),
            )
            for r in today["sent"]
        ],
        "Nothing was sent.",
        earlier["sent"],
        private["sent"],
        "send",
    )
    if counts["copies"]:
        lines.append(f"## Copies filed, not sent ({counts['copies']})")
        lines += ["H0 filed these in Done/ instead of sending them: the same message was sent already.", ""]
        lines += _rows(COPY_HEAD, copy_rows(today["copies"]), "", earlier["copies"], private["copies"], "copy")
    if counts["unsent"]:
        lines.append(f"## Not sent, and not sent since ({counts['unsent']})")
        lines += _rows(
            ("time", "note", "why"),
            [
                (
                    local_time(r["timestamp"]),
                    md_link(r.get("returned_to") or r.get("failed_path") or r.get("path")),
                    md_text(r.get("message") or r.get("reason"), 200),
                )
                for r in today["unsent"]
            ],
            "",
            earlier["unsent"],
            private["unsent"],
            "draft",
        )

    lines += _briefing_followups(today["woke"], status)
    totals = status["totals"]
    lines += ["## Waiting for you", ""]
    lines.append(f"- Emails that need you: {totals['needs_you']}")
    lines += [f"    - {md_link(n['path'])}: {why_needed(n)}" for n in status["needs_you"]]
    if status["private"]["needs_you"]:
        lines.append(f"    - {not_named(status['private']['needs_you'], 'email')}")
    lines.append(f"- Drafts waiting for your approval: {totals['waiting_for_approval']}")
    lines.append(f"- Approved, not sent yet: {totals['approved_not_yet_sent']}")
    lines.append(f"- Not sent, back in {DRAFTS}/ to fix: {totals['returned_to_drafts']}")
    return "\n".join(lines) + "\n"


def _briefing_followups(woke: list[dict[str, Any]], status: dict[str, Any]) -> list[str]:
    """The day's follow-ups: replies owed and awaited now, notes back from a snooze today."""
    fu = status.get("follow_ups") or {}
    if not fu:
        return []
    lines = [f"## Follow-ups ({fu['owed_total']} owed, {fu['awaited_total']} awaited)", ""]
    lines += [
        f"- Reply owed: {md_link(_name(o['path']))} — {md_sender(o['sender'])}, {age(o['working_days'])}"
        for o in fu["owed"]
    ]
    lines += [
        f"- No answer from {md_text(a['waiting_on'], 60)}: {md_link(_name(a['path']))}, {age(a['working_days'])}"
        for a in fu["awaited"]
    ]
    private = fu.get("owed_private", 0) + fu.get("awaited_private", 0)
    lines += [f"- {not_named(private, 'email')}"] if private else []
    lines += [
        f"- Back from snooze at {local_time(r['timestamp'])}: {md_link(_name(r.get('path')))} — "
        f"{md_text(r.get('reason'), 120)}"
        for r in woke
    ]
    if len(lines) == 2:
        lines.append("No reply owed or overdue, nothing back from a snooze.")
    return lines + [""]


def _rows(
    head: tuple[str, ...], rows: Sequence[tuple[str, ...]], empty: str, earlier: int, private: int, noun: str
) -> list[str]:
    """A section's table (or `empty` when it has nothing at all), after a line for the `earlier` rows it
    does not show, before the line counting its `private` rows (h0.report.privacy)."""
    more = [f"*…and {earlier} earlier ones (see {LOGS}/).*", ""] if earlier > 0 else []
    if rows:
        body = [*table(head, rows), ""]
    else:
        body = [empty, ""] if empty and not more and not private else []
    return more + body + ([*md_private(private, noun)[1:], ""] if private else [])


def _name(path: object) -> str:
    """An email note by its name: it moves from Needs_Action/ to Done/, and the link still resolves."""
    return str(path or "").rsplit("/", 1)[-1]
