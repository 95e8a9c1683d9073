"""The human's cockpit in the vault: H0_Dashboard.md rendered from `h0.report.collect.collect_status`
(the data `h0 status` prints).

Everything that comes from an email or a note is escaped (`h0.report.markdown`); the briefing's
content is `h0.report.briefing`; the daemon's writer thread that keeps both current is
`h0.report.dashwriter`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from h0.report.briefing import BRIEFINGS, collect_day, render_briefing
from h0.report.chart import send_ready_chart
from h0.report.control import said, waiting
from h0.report.followups import age
from h0.report.markdown import (
    COPY_HEAD,
    copy_rows,
    heading,
    md_draft,
    md_link,
    md_new,
    md_private,
    md_recipients,
    md_sender,
    md_subject,
    md_text,
    more,
    none_but_private,
    table,
    why_needed,
)
from h0.report.text import changed_by, draft_quality_line, local_time, mailbox_line
from h0.vault.layout import APPROVED, DRAFTS, NEEDS_ACTION

DASHBOARD_NOTE = "H0_Dashboard.md"
# The renderers and the folder too: the dashboard module is where callers find them.
__all__ = ["BRIEFINGS", "DASHBOARD_NOTE", "collect_day", "md_link", "md_text", "render_briefing", "render_dashboard"]


def render_dashboard(status: dict[str, Any]) -> str:
    """H0_Dashboard.md's content (without its "last change" line)."""
    daemon, sending, totals = status["daemon"], status["sending"], status["totals"]
    private = status["private"]
    lines = ["# H0 dashboard", ""]
    if daemon is None:
        lines += [
            "> [!failure] H0 is not running",
            "> Nothing is sent or triaged until it runs again: start it with `h0 watch`.",
            "",
        ]
    else:
        lines += [
            "> [!success] H0 is running",
            (
                f"> Since {local_time(daemon.get('started'))} (pid {daemon.get('pid')}) · mail: "
                f"{md_text(status['mail_backend'])}"
            ),
            "",
        ]
    lines += _mailbox_lines(status.get("mailbox"))
    if sending["paused"]:
        lines += ["> [!warning] Sending is paused", f"> {md_text(sending['pause_reason'], 300)}", ""]
    for cap in sending["caps"]:
        if cap["left"] == 0:
            slot = f"next slot at {local_time(cap['next_slot_at'])}" if cap["next_slot_at"] else "sending is off"
            lines += [f"> [!warning] The per-{cap['window']} send cap ({cap['limit']}) is reached", f"> {slot}.", ""]
    lines += table(
        ("send cap", "used", "left", "next slot", "oldest send leaves the window"),
        [
            (
                f"per {c['window']}",
                f"{c['used']} of {c['limit']}",
                str(c["left"]),
                local_time(c["next_slot_at"]) if c["next_slot_at"] else ("now" if c["left"] else "—"),
                local_time(c["oldest_leaves_at"]) if c["oldest_leaves_at"] else "—",
            )
            for c in sending["caps"]
        ],
    ) + [""]

    needs = status["needs_you"]
    lines.append(heading("Emails that need you", totals["needs_you"], len(needs) + private["needs_you"]))
    lines += (
        table(
            ("email", "from", "subject", "why"),
            [(md_link(n["path"]), md_sender(n["from"]), md_text(n["subject"], 80), why_needed(n)) for n in needs],
        )
        if needs
        else none_but_private("Nothing needs you.", private["needs_you"])
    )
    lines += more(totals["needs_you"] - private["needs_you"], len(needs), f"{NEEDS_ACTION}/")
    lines += md_private(private["needs_you"], "email") + [""]

    waiting = status["waiting_for_approval"]
    waiting_private = private["waiting_for_approval"]
    lines.append(
        heading("Drafts waiting for your approval", totals["waiting_for_approval"], len(waiting) + waiting_private)
    )
    if waiting:
        lines += [f"Move a draft into {APPROVED}/ to send it, or into Rejected/ to drop it.", ""]
        details = {item["path"]: item for item in status.get("waiting_for_approval_details", [])}
        lines += [
            f"- {md_draft(details.get(path, {'path': path}))}{md_new(details.get(path, {}))}"
            f"{md_text(changed_by(details.get(path, {})), 200) if changed_by(details.get(path, {})) else ''}"
            for path in waiting
        ]
    else:
        lines += none_but_private("No draft is waiting.", waiting_private)
    lines += more(totals["waiting_for_approval"] - waiting_private, len(waiting), f"{DRAFTS}/")
    lines += md_private(waiting_private, "draft") + [""]

    approved = status["approved_not_yet_sent"]
    approved_private = private["approved_not_yet_sent"]
    lines.append(heading("Approved, not sent yet", totals["approved_not_yet_sent"], len(approved) + approved_private))
    lines += (
        _drafts_table(approved, "why it waits", _why_it_waits)
        if approved
        else none_but_private("Nothing approved is waiting.", approved_private)
    )
    lines += md_private(approved_private, "draft") + [""]

    lines += _followup_sections(status.get("follow_ups") or {})
    lines += _control_section(status.get("control_notes") or {})
    quality = draft_quality_line(status.get("drafts") or {})
    if quality:
        lines += [quality, ""]
    lines += send_ready_chart(status.get("drafts") or {})

    returned = status["returned_to_drafts"]
    if totals["returned_to_drafts"]:
        lines.append(
            heading(
                f"Not sent — back in {DRAFTS}/ for you to fix",
                totals["returned_to_drafts"],
                len(returned) + private["returned_to_drafts"],
            )
        )
        lines += (
            _drafts_table(returned, "reason", lambda r: f"{md_text(r['code'], 40)}: {md_text(r['reason'], 200)}")
            if returned
            else []
        )
        lines += md_private(private["returned_to_drafts"], "draft")
        lines += ["", f"Fix the draft, then move it into {APPROVED}/ again.", ""]

    sends = status["recent_sends"]
    lines.append(f"## Last sends ({totals['sends_24h']} in the last 24 h)")
    lines += (
        table(
            ("sent", "note", "to", "subject"),
            [
                (
                    local_time(s["timestamp"]),
                    md_link(s.get("done_path") or s.get("path")),
                    md_recipients(s["recipients"]),
                    md_text(s.get("subject"), 80),
                )
                for s in sends
            ],
        )
        if sends
        else none_but_private("Nothing sent lately.", private["recent_sends"])
    )
    lines += md_private(private["recent_sends"], "send") + [""]
    lines += _copies_section(status)

    errors = status["recent_errors"]
    listed = len(errors) + private["recent_errors"]
    shown = f", showing {listed}" if totals["errors_24h"] > listed else ""
    lines.append(f"## Last errors ({totals['errors_24h']} in the last 24 h{shown})")
    lines += (
        table(
            ("time", "what", "note", "message"),
            [
                (
                    local_time(e["timestamp"]),
                    md_text(e.get("event"), 40),
                    md_link(e.get("returned_to") or e["path"]) if e.get("path") else "—",
                    md_text(e.get("message") or e.get("error"), 200),
                )
                for e in errors
            ],
        )
        if errors
        else none_but_private("No errors.", private["recent_errors"])
    )
    lines += md_private(private["recent_errors"], "error")
    return "\n".join(lines) + "\n"


def _drafts_table(drafts: list[dict[str, Any]], why: str, why_of: Callable[[dict[str, Any]], str]) -> list[str]:
    """A table of drafts (approved and waiting, or returned): each one's link, recipients, subject, and `why`."""
    return table(
        ("draft", "to", "subject", why),
        [
            (md_link(d["path"]), md_recipients(d["recipients"]) + md_new(d), md_subject(d["subject"]), why_of(d))
            for d in drafts
        ],
    )


def _why_it_waits(approved: dict[str, Any]) -> str:
    retry_at = approved["retry_at"]
    return md_text(approved["reason"], 200) + (f" (next try {local_time(retry_at, seconds=True)})" if retry_at else "")


def _mailbox_lines(mailbox: dict[str, Any] | None) -> list[str]:
    """The mailbox H0 is connected to: the owner's own address and the sign-in's state, nothing else (no provider
    text: a refusal's reason stays in `h0 status`); a warning when it needs the owner."""
    if not mailbox:
        return []
    line = f"Mailbox: {mailbox_line(mailbox, md_text, why=False)}"
    if mailbox["state"] in ("not_signed_in", "refused"):
        return [f"> [!warning] {line}", ""]
    return [line, ""]


def _copies_section(status: dict[str, Any]) -> list[str]:
    """Copies filed in Done/ instead of sent in the last 24 h (a sync tool's copy of a sent draft): the latest,
    the private ones counted (h0.report.collect)."""
    total = status["totals"].get("copies_filed_24h") or 0
    if not total:
        return []
    copies, private = status.get("copies_filed") or [], status["private"].get("copies_filed", 0)
    shown = len(copies) + private
    lines = [f"## Copies filed, not sent ({total} in the last 24 h{f', showing {shown}' if total > shown else ''})"]
    lines += ["H0 filed these in Done/ instead of sending them: the same message was sent already.", ""]
    return lines + (table(COPY_HEAD, copy_rows(copies)) if copies else []) + md_private(private, "copy") + [""]


def _control_section(control: dict[str, Any]) -> list[str]:
    """Agents' proposed changes to the control notes and the last day's changes H0 did not see the owner make."""
    proposed, recent = control.get("proposals") or [], control.get("recent") or []
    if not proposed and not recent:
        return []
    lines = [f"## Control notes ({len(proposed)} proposed change(s) wait for you)", ""]
    for p in proposed:
        lines += [
            f"> [!warning] {md_text(p['note'])}: an agent's change waits for you in {md_link(p['path'])}",
            f"> {md_text(waiting(p), 600)}",
            "",
        ]
    lines += [f"- {local_time(e['timestamp'])} {md_text(e.get('note'))}: {md_text(said(e), 400)}" for e in recent]
    return [*lines, ""] if recent else lines


def _followup_sections(fu: dict[str, Any]) -> list[str]:
    """Replies owed and awaited with their age, snoozed notes, notes back from a snooze (h0.report.followups)."""
    if not fu:
        return []
    lines = [heading("Replies you owe", fu["owed_total"], len(fu["owed"]) + fu["owed_private"])]
    lines += (
        table(
            ("email", "from", "subject", "waiting"),
            [
                (md_link(o["path"]), md_sender(o["sender"]), md_text(o["subject"], 80), age(o["working_days"]))
                for o in fu["owed"]
            ],
        )
        if fu["owed"]
        else none_but_private("No reply owed.", fu["owed_private"])
    )
    lines += more(fu["owed_total"] - fu["owed_private"], len(fu["owed"]), f"{NEEDS_ACTION}/ (`follow_up: reply_owed`)")
    lines += md_private(fu["owed_private"], "email") + [""]
    lines.append(
        heading("Replies you are waiting for", fu["awaited_total"], len(fu["awaited"]) + fu["awaited_private"])
    )
    lines += (
        table(
            ("follow-up", "from", "subject", "waiting", "draft"),
            [
                (
                    md_link(a["path"]),
                    md_text(a["waiting_on"], 60),
                    md_text(a["subject"], 80),
                    age(a["working_days"]),
                    md_link(a["draft"]) if a["draft"] else "—",
                )
                for a in fu["awaited"]
            ],
        )
        if fu["awaited"]
        else none_but_private("No answer is overdue.", fu["awaited_private"])
    )
    awaited_public = fu["awaited_total"] - fu["awaited_private"]
    lines += more(awaited_public, len(fu["awaited"]), f"{NEEDS_ACTION}/ (`follow_up: reply_awaited`)")
    lines += md_private(fu["awaited_private"], "email") + [""]
    if fu["back"] or fu["back_private"] or fu["snoozed_total"]:
        lines.append(f"## Snoozed ({fu['snoozed_total']} hidden until their time)")
        lines += [f"- back: {md_link(b['path'])} — {md_text(b['reason'], 120)}" for b in fu["back"]] or (
            [] if fu["back_private"] else ["Nothing came back in the last day."]
        )
        lines += md_private(fu["back_private"], "note") + [""]
    return lines
