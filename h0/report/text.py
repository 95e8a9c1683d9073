"""`h0 status` for a terminal: the collected facts (h0.report.collect) as lines a person reads,
and the phrases the dashboard shares with it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from h0.mail.compose.recipients import count, describe_recipients, recipient_lists, shown_sender
from h0.mail.deception.lookalike import shown as shown_domain
from h0.printable import printable
from h0.report.control import said, waiting
from h0.report.fields import NO_RECIPIENT, subject_shown
from h0.report.followups import age
from h0.report.privacy import not_named

SHOWN_RECIPIENTS = 20  # per line of `h0 status`; its --json and the audit log hold every one


def draft_quality_line(drafts: dict[str, Any]) -> str | None:
    """'H0's drafts (30 days): 75% sent as written or lightly edited (3 of 4), 25% rejected', or None."""
    if not drafts.get("resolved"):
        return None
    return (
        f"H0's drafts ({drafts['window_days']} days): {drafts['send_ready_rate']:.0%} sent as written or lightly "
        f"edited ({drafts['send_ready']} of {drafts['resolved']}), {drafts['rejected_rate']:.0%} rejected"
    )


def mailbox_line(mailbox: dict[str, Any], shown: Callable[[object], str], *, why: bool = True) -> str:
    """Which mailbox H0 is connected to and how its sign-in stands (h0.report.mailbox): 'ann@example.com (gmail)
    — signed in, confirmed by the mail sync 12:03'; `shown` makes the account safe where it is printed; `why`
    adds the provider's reason to a refusal (the dashboard leaves it out)."""
    backend, account, server = mailbox["backend"], mailbox.get("account"), mailbox.get("server")
    where = f"{backend} at {shown(server)}" if server else backend
    if account and mailbox.get("account_from") == "sign_in":
        where += ", as signed in"
    who = f"{shown(account)} ({where})" if account else where
    state, step = mailbox["state"], mailbox.get("next_step")
    run = f": run `{step}`" if step else ""
    if state == "ok":
        said = f"signed in, confirmed by the mail sync {local_time(mailbox.get('confirmed_at'))}"
    elif state == "not_signed_in":
        said = f"not signed in{run}"
    elif state == "refused":
        reason = f" ({shown(mailbox['refusal'])})" if why and mailbox.get("refusal") else ""
        said = f"the provider refused the sign-in {local_time(mailbox.get('refused_at'))}{reason}{run}"
    elif state == "not_synced":
        signed = "signed in, " if mailbox.get("sign_in") in ("valid", "expired_refreshable") else ""
        said = f"{signed}not yet synced" + (run or ": the running daemon signs in at its next poll")
    elif state == "unchecked":
        said = "the sign-in is checked at each send"
    else:  # the outbox
        said = "nothing is sent: each message is written to Outbox/" + (
            "" if account else " (no address of yours is known: set OWNER_EMAILS)"
        )
    return f"{who} — {said}"


def changed_by(item: dict[str, Any]) -> str:
    """' — last changed by an agent (write_note from the MCP client claude-code), 14:02' for a draft whose
    current text H0 did not write; '' for H0's own."""
    change = item.get("last_change") or {}
    if not change or not (change.get("agent") or change.get("outside")):
        return ""
    by = change["by"].removeprefix("by ")
    return f" — last changed {'by ' if change.get('agent') else ''}{by}, {local_time(change.get('at'))}"


def local_time(stamp: object, *, seconds: bool = False) -> str:
    """A UTC ISO timestamp as local time: 'HH:MM' today, 'YYYY-MM-DD HH:MM' on another day."""
    try:
        when = dt.datetime.fromisoformat(str(stamp)).astimezone()
    except ValueError:
        return str(stamp or "?")
    clock = when.strftime("%H:%M:%S" if seconds else "%H:%M")
    return clock if when.date() == dt.datetime.now().astimezone().date() else f"{when:%Y-%m-%d} {clock}"


def _plain(value: object, limit: int = 160) -> str:
    """Text from notes and logs, made safe for a terminal (h0.printable: escape sequences, line breaks
    and bidi controls are shown escaped, never obeyed)."""
    return printable(value, limit)


def _to(item: dict[str, Any]) -> str:
    """Every recipient of a listed draft or send, by real address; past SHOWN_RECIPIENTS, "+N more"."""
    lists = item.get("recipients") or recipient_lists(item.get("to"))
    if not count(lists):
        return NO_RECIPIENT
    text = describe_recipients(lists, limit=SHOWN_RECIPIENTS)
    return text + " (h0 status --json lists all)" if count(lists) > SHOWN_RECIPIENTS else text


def draft_named(item: dict[str, Any]) -> str:
    """A listed draft as a person knows it: '"Subject" → to ann@x.com (Drafts/4f2a….md)'. Its file
    name is a hash H0 chose; the subject and the recipients say which draft it is."""
    return f'"{_plain(subject_shown(item.get("subject")), 80)}" → {_to(item)} ({_plain(item.get("path"))})'


def _new(item: dict[str, Any]) -> str:
    """' (first message to new.example)' for a draft that writes to a domain never corresponded with."""
    fresh = item.get("new_domains") or []
    return f" (first message to {', '.join(shown_domain(d) for d in fresh)})" if fresh else ""


def _count(total: int, shown: int) -> str:
    return f"{total} (showing {shown})" if total > shown else str(total)


def _private(count: int, noun: str) -> list[str]:
    """The line that counts what a list leaves out as private (h0.report.privacy)."""
    return [f"  {not_named(count, noun)}"] if count else []


def render_status(status: dict[str, Any]) -> str:
    daemon, sending, totals, private = status["daemon"], status["sending"], status["totals"], status["private"]
    lines = [f"Vault: {status['vault']}   (mail backend: {status['mail_backend']})"]
    if status.get("mailbox"):
        lines.append(f"Mailbox: {mailbox_line(status['mailbox'], _plain)}")
    if daemon is None:
        lines.append("Daemon: not running — start it with `h0 watch`")
    else:
        lines.append(f"Daemon: running (pid {daemon.get('pid', '?')}, since {daemon.get('started', '?')})")
    if sending["paused"]:
        lines.append(f"Sending: PAUSED — {_plain(sending['pause_reason'])}")
    caps = " · ".join(
        f"per {c['window']} {c['used']}/{c['limit']} used, {c['left']} left"
        + (f" (next slot {local_time(c['next_slot_at'])})" if c["next_slot_at"] else "")
        for c in sending["caps"]
    )
    lines.append(f"Send caps: {caps}")
    lines.append("Notes: " + ", ".join(f"{name} {count}" for name, count in status["folders"].items()))
    needs = status["needs_you"]
    lines.append(f"Emails that need you: {_count(totals['needs_you'], len(needs) + private['needs_you'])}")
    for item in needs:
        why = (
            f"delegate to {item['delegate_to']}: {item['reason']}" if item["decision"] == "delegate" else item["reason"]
        )
        lines.append(f"  {_plain(item['path'])}  {item['decision']} — {_plain(why)}")
    lines += _private(private["needs_you"], "email")
    lines += _attack_lines(status.get("suspected_attacks") or {})
    waiting = status["waiting_for_approval"]
    shown = len(waiting) + private["waiting_for_approval"]
    lines.append(f"Drafts waiting for your approval: {_count(totals['waiting_for_approval'], shown)}")
    details = {item["path"]: item for item in status.get("waiting_for_approval_details", [])}
    lines += [
        f"  {draft_named(details.get(path, {'path': path}))}{_new(details.get(path, {}))}"
        f"{_plain(changed_by(details.get(path, {})), 200)}"
        for path in waiting
    ]
    lines += _private(private["waiting_for_approval"], "draft")
    approved = status["approved_not_yet_sent"]
    if totals["approved_not_yet_sent"]:
        shown = len(approved) + private["approved_not_yet_sent"]
        lines.append(f"Approved but not yet sent: {_count(totals['approved_not_yet_sent'], shown)}")
        for item in approved:
            when = f" (next try {local_time(item['retry_at'], seconds=True)})" if item["retry_at"] else ""
            lines.append(
                f"  {_plain(item['path'])} → {_to(item)}{_new(item)}  {item['code']}: {_plain(item['reason'])}{when}"
            )
        lines += _private(private["approved_not_yet_sent"], "draft")
    lines += _followup_lines(status.get("follow_ups") or {})
    lines += calendar_lines(status.get("calendar") or [])
    lines += _control_lines(status.get("control_notes") or {})
    quality = draft_quality_line(status.get("drafts") or {})
    if quality:
        lines.append(quality)
    returned = status["returned_to_drafts"]
    if totals["returned_to_drafts"]:
        shown = len(returned) + private["returned_to_drafts"]
        lines.append(f"Not sent, back in Drafts/ to fix: {_count(totals['returned_to_drafts'], shown)}")
        lines += [
            f"  {_plain(r['path'])} → {_to(r)}{_new(r)}  {_plain(r['code'])}: {_plain(r['reason'])}" for r in returned
        ]
        lines += _private(private["returned_to_drafts"], "draft")
    latest = status["recent_sends"] or private["recent_sends"]
    lines.append(f"Sends in the last 24 h: {totals['sends_24h']}" + (" — the latest:" if latest else ""))
    for send in status["recent_sends"]:
        lines.append(
            f"  {local_time(send['timestamp'])}  {_plain(send.get('done_path') or send.get('path'))} → {_to(send)}"
        )
    lines += _private(private["recent_sends"], "send")
    lines += _copy_lines(
        status.get("copies_filed") or [], totals.get("copies_filed_24h") or 0, private.get("copies_filed", 0)
    )
    listed = len(status["recent_errors"]) + private["recent_errors"]
    lines.append(f"Errors in the last 24 h: {_count(totals['errors_24h'], listed)}")
    for err in status["recent_errors"]:
        lines.append(
            f"  {local_time(err['timestamp'])}  {err.get('event')}  {_plain(err.get('path') or '')}  "
            f"{_plain(err.get('message') or err.get('error') or '')}"
        )
    lines += _private(private["recent_errors"], "error")
    return "\n".join(lines)


def _attack_lines(attacks: dict[str, Any]) -> list[str]:
    """The emails triage suspected of an attack, each with whom it passes for (h0.report.attacks)."""
    if not attacks.get("total"):
        return []
    lines = [
        f"Suspected attacks (no reply drafted): {_count(attacks['total'], len(attacks['items']) + attacks['private'])}"
    ]
    lines += [
        f"  {_plain(a['path'])}  from {_plain(a['from'] or '?')} — {_plain(a['headline'])}: {_plain(a['reason'], 300)}"
        for a in attacks["items"]
    ]
    return lines + _private(attacks["private"], "email")


def _copy_lines(copies: list[dict[str, Any]], total: int, private: int) -> list[str]:
    """One line per copy H0 filed instead of sending it (h0.report.approved.copies_filed); private ones counted."""
    if not total:
        return []
    lines = [f"Copies filed in Done/, not sent (24 h): {_count(total, len(copies) + private)}"]
    for copy in copies:
        went = "sent" if copy.get("outcome") == "sent" else "may have been sent"
        lines.append(
            f"  {local_time(copy['timestamp'])}  {_plain(copy.get('path'))} → {_plain(copy.get('done_path'))}: "
            f"a copy of {_plain(copy.get('copy_of'))} ({went})"
        )
    return lines + _private(private, "copy")


def calendar_lines(sources: list[dict[str, Any]]) -> list[str]:
    """One line per calendar source: read fine, or failing (and whether a last good copy still serves)."""
    lines = []
    for source in sources:
        name = _plain(source.get("name"))
        good = source.get("last_good_at")
        if source.get("error"):
            kept = f"using the last good copy from {local_time(good)}" if good else "no copy yet: no times are proposed"
            lines.append(f"Calendar {name}: FAILING — {_plain(source['error'], 200)}; {kept}")
        else:
            lines.append(f"Calendar {name}: " + (f"read {local_time(good)}" if good else "not read yet"))
    return lines


def _control_lines(control: dict[str, Any]) -> list[str]:
    """Agents' proposed changes to the control notes, and the changes of the last day H0 did not see the owner make."""
    proposed, recent = control.get("proposals") or [], control.get("recent") or []
    if not proposed and not recent:
        return []
    lines = [f"Control notes (H0_Rules, H0_Profile, H0_Memory): {len(proposed)} proposed change(s) wait for you"]
    lines += [f"  {_plain(p['note'])}: {_plain(waiting(p), 400)}" for p in proposed]
    lines += [f"  {local_time(e['timestamp'])}  {_plain(e.get('note') or '')}: {_plain(said(e), 400)}" for e in recent]
    return lines


def _followup_lines(fu: dict[str, Any]) -> list[str]:
    """Replies owed and awaited, each with its age; how many notes are snoozed; which came back."""
    if not fu:
        return []
    lines = [f"Replies you owe: {_count(fu['owed_total'], len(fu['owed']) + fu['owed_private'])}"]
    lines += [
        f"  {_plain(o['path'])}  {shown_sender(o['sender'])} — {_plain(o['subject'], 80)} — {age(o['working_days'])}"
        for o in fu["owed"]
    ]
    lines += _private(fu["owed_private"], "email")
    awaited = len(fu["awaited"]) + fu["awaited_private"]
    lines.append(f"Replies you are waiting for: {_count(fu['awaited_total'], awaited)}")
    lines += [
        f"  {_plain(a['path'])}  {_plain(a['waiting_on'], 60)} — {_plain(a['subject'], 80)} — "
        f"{age(a['working_days'])}" + (f" (follow-up drafted: {_plain(a['draft'])})" if a["draft"] else "")
        for a in fu["awaited"]
    ]
    lines += _private(fu["awaited_private"], "email")
    if fu["snoozed_total"]:
        lines.append(f"Snoozed (hidden until their time): {fu['snoozed_total']}")
    if fu["back"] or fu["back_private"]:
        lines.append(f"Back from snooze: {len(fu['back']) + fu['back_private']}")
        lines += [f"  {_plain(b['path'])}  {_plain(b['reason'], 100)}" for b in fu["back"]]
        lines += _private(fu["back_private"], "note")
    return lines
