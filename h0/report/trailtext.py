"""How a trail reads: each event's stage and what it says in one line, for `h0 log NOTE`."""

from __future__ import annotations

from typing import Any

from h0.mail.compose.recipients import describe_recipients, recipient_lists, shown_sender
from h0.report.logread import local_time, plain
from h0.report.trail import Trail

_STAGES = {
    "email_ingested": "ingest",
    "email_duplicate_skipped": "ingest",
    "ingest_failed": "ingest",
    "triage_decision": "triage",
    "draft_created": "draft",
    "draft_approved": "approval",
    "pre_send_audit": "pre-send",
    "email_sent": "sent",
    "already_sent": "sent",
    "send_retry": "retry",
    "source_filed": "filing",
    "email_filed": "filing",
    "source_not_filed": "filing",
    "filing_incomplete": "filing",
    "draft_edited_during_send": "filing",
    "send_refused": "refused",
    "send_held": "held",
    "draft_rejected": "rejected",
    "email_delivery_failed": "bounced",
    "copy_filed": "copy",
    "send_outcome_unknown": "unknown",
    "note_moved": "move",
    "note_written": "write",
}
_ARRIVALS = {
    "moved": "moved into Approved/",
    "written": "written in Approved/ (sent once quiet)",
    "unknown": "found in Approved/ (by a sweep)",
}


def stage(record: dict[str, Any]) -> str:
    if record["event"] in _STAGES:
        return _STAGES[record["event"]]
    return "problem" if record.get("severity") in ("warning", "error", "critical") else "event"


def _subject_part(record: dict[str, Any]) -> str:
    subject = record.get("subject")
    lists = recipient_lists(record.get("to"), record.get("cc"), record.get("bcc"))
    text = describe_recipients(lists) if any(lists.values()) else ""
    return f'{text} "{plain(subject, 80)}"'.strip() if subject is not None else text


def describe(record: dict[str, Any]) -> str:
    """What one event says, in a line (without its time, name and note)."""
    event, r = record["event"], record
    if event == "email_ingested":
        return f'from {shown_sender(r.get("sender"))} "{plain(r.get("subject"), 80)}" (provider id {plain(r.get("message_id"), 60)})'
    if event == "triage_decision":
        confidence = r.get("confidence")
        how = f"{confidence:.0%}, " if isinstance(confidence, int | float) else ""
        rule = f": {plain(r.get('rule'), 60)}" if r.get("rule") else ""
        draft = f" → draft {plain(r.get('draft'), 120)}" if r.get("draft") else ""
        return f"{plain(r.get('decision'), 20)} ({how}{plain(r.get('provider'), 20)}{rule}){draft}"
    if event == "draft_approved":
        return _ARRIVALS.get(str(r.get("arrival")), plain(r.get("arrival"), 20))
    if event == "pre_send_audit":
        return f"{_subject_part(r)}, Message-ID {plain(r.get('rfc822_message_id'), 100)}"
    if event == "already_sent":
        pid = r.get("provider_message_id") or r.get("message_id")
        return f"already sent before (provider id {plain(pid, 100)} via {plain(r.get('backend'), 20)}): not sent again"
    if event == "email_sent":
        pid = r.get("provider_message_id") or r.get("message_id")
        text = f"provider id {plain(pid, 100)} via {plain(r.get('backend'), 20)}"
        if r.get("already_sent"):
            text = f"already sent before ({text}): not sent again"
        return text + (" (found after an interrupted attempt)" if r.get("recovered") else "")
    if event in ("email_filed", "draft_rejected", "source_filed", "draft_edited_during_send", "filing_incomplete"):
        text = f"→ {plain(r.get('done_path'), 120)}"
        if r.get("reply"):
            text += f" (answered by {plain(r['reply'], 120)})"
        if r.get("recovered"):
            text += " (finished after a restart)"
        return text + (f": {plain(r['message'], 160)}" if r.get("message") else "")
    if event in ("send_refused", "send_held"):
        return (
            f"{plain(r.get('reason'), 40)}: {plain(r.get('message'), 200)} → back in {plain(r.get('returned_to'), 120)}"
        )
    if event == "email_delivery_failed":
        return f"{plain(r.get('message'), 160)} → {plain(r.get('failed_path'), 120)}"
    if event == "note_moved":
        return f"→ {plain(r.get('destination'), 120)}"
    if event == "note_written":
        return plain(r.get("tool"), 40)
    if event == "draft_created":
        return _subject_part(r)
    problem = r.get("message") or r.get("reason") or r.get("error") or ""
    retry = f" (retry in {r['retry_in']:.0f} s)" if isinstance(r.get("retry_in"), int | float) else ""
    code = f"{plain(r.get('error'), 30)}: " if r.get("error") and r.get("message") else ""
    return f"{code}{plain(problem, 200)}{retry}"


def _about(record: dict[str, Any]) -> str:
    for key in ("path", "note", "note_path", "source"):
        value = record.get(key)
        if isinstance(value, str) and value:
            return plain(value, 120)
    return "-"


def render_trail(trail: Trail) -> str:
    lines = [f"{trail.title} — {len(trail.events)} event(s), oldest first:"]
    for r in trail.events:
        lines.append(
            f"{local_time(r['timestamp'], ms=True)}  {stage(r):<9} {plain(r['event'], 40):<16} "
            f"{_about(r)}  {describe(r)}".rstrip()
        )
    if trail.hidden:
        lines.append(
            f"(+{trail.hidden} more: the vault server's writes and moves, and H0's copy of each send; --all shows them)"
        )
    for other in trail.others:
        lines.append(f'Another note had this name: {plain(other, 120)} — h0 log "{plain(other, 120)}"')
    return "\n".join(lines)


def record_json(record: dict[str, Any]) -> dict[str, Any]:
    return {**{k: v for k, v in record.items() if k != "at"}, "stage": stage(record)}
