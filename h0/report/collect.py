"""The facts `h0 status` reports: what waits for the human and why, the send caps, what H0 did lately.

One collector, several renderers: `collect_status` gathers the facts as plain, JSON-ready data;
`h0.report.text.render_status` prints them for a terminal, `h0.report.dashboard` writes them into the
vault as H0_Dashboard.md. Totals are counted in full, the lists beside them hold at most
SHOWN items (the renderers say "37 (showing 10)"). The collector asks the gate once (h0.report.privacy):
a private email, draft, send or error is left out of every list and counted under `private`, so no
renderer ever holds its subject, sender, recipients or words.

It stays cheap on a vault of 10,000 notes: folders are read with `Vault.list_notes` (the
frontmatter is cached by mtime and size; Needs_Action/ only through value filters, so only
matching notes are decoded), and the audit log through an `AuditTail`, which the daemon's
dashboard keeps between calls so that each refresh parses only the lines appended since.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import Any

from loguru import logger

from h0.calendar.cache import calendar_states
from h0.config import Settings
from h0.errors import H0Error
from h0.mail.compose.recipients import FIELDS, count, recipient_lists
from h0.mail.deception.lookalike import Correspondents, new_domains
from h0.pipeline.lock import daemon_holder
from h0.report.approved import approved_notes, copies_filed, sending_state
from h0.report.attacks import collect_attacks
from h0.report.audittail import AuditTail, current_errors, sent_recipients
from h0.report.control import collect_control
from h0.report.fields import SHOWN, iso_epoch
from h0.report.followups import collect_followups
from h0.report.mailbox import collect_mailbox
from h0.report.privacy import INDEX_ERRORS, ReportGate, record_private, report_view, split
from h0.state import DB_FILE, StateDB, state_dir_for
from h0.vault import Vault
from h0.vault.audit import iso, utcnow
from h0.vault.last_change import last_change, name_key
from h0.vault.layout import APPROVED, DRAFTS, LOGS, NEEDS_ACTION
from h0.vault.listing import Listing
from h0.vault.model import note_facts

# AuditTail and SHOWN too: a caller of collect_status keeps the one and reads the other.
__all__ = ["NEEDS_YOU", "REJECTED_REPLY_REASON", "SHOWN", "AuditTail", "collect_status"]

NEEDS_YOU = (
    ("decision:urgent", "urgent"),
    ("status:needs_info", "needs_info"),
    ("status:delegated", "delegate"),
    ("status:rejected_reply", "rejected_reply"),
)  # its drafted reply was rejected: no answer is pending
REJECTED_REPLY_REASON = "you rejected the reply"


def collect_status(
    settings: Settings,
    *,
    vault: Vault | None = None,
    audit: AuditTail | None = None,
    state_db: StateDB | None = None,
    live: dict[str, Any] | None = None,
    correspondents: Correspondents | None = None,
    now: float | None = None,
    private: ReportGate | None = None,
) -> dict[str, Any]:
    """Everything `h0 status` and the dashboard show. `vault`, `audit` and `state_db` may be
    kept by a long-lived caller (the daemon); `live` is the daemon's own view of itself
    (pid, started, paused_for, pause_reason) where it has one, else the lock file is asked.
    `now` (epoch; default the clock) decides which snoozes still hide a note. `private`: the gate this
    collection asks (default: one over the vault index as it is now, h0.report.privacy)."""
    vault = vault or Vault(settings.vault_path)
    audit = audit or AuditTail(vault.root / LOGS)
    now = time.time() if now is None else now
    view = private if private is not None else report_view(settings, vault)
    _lend_parses(vault, view)
    follow_ups = collect_followups(vault, now, private=view.private)
    records = audit.refresh()
    day_ago = iso(utcnow() - dt.timedelta(days=1))
    daemon = _daemon(vault, live)
    sending = sending_state(settings, vault, records, state_db, daemon, live, now)
    drafts = _drafts(vault, view, follow_ups.hidden)
    approved, approved_total = approved_notes(settings, vault, records, daemon, sending, now)
    # An unreadable approved note is named by its path alone, as the vault server lists it.
    approved, approved_private = split(approved, lambda a: a["code"] != "unreadable" and view.note_at(a["path"]))
    needs_you, needs_you_total, needs_you_private = _needs_you(vault, view, follow_ups.hidden)
    attacks = collect_attacks(vault, view, follow_ups.hidden)  # also among needs_you: listed apart, never cut
    _mark_new_domains(settings, vault, state_db, correspondents, drafts, approved)
    _mark_changes(settings, vault, state_db, drafts["waiting_items"])
    filed = {
        (r.get("path"), r.get("idempotency_key")): r.get("done_path")
        for r in records
        if r.get("event") == "email_filed"
    }
    sends = [r for r in records if r.get("event") == "email_sent"]
    errors = current_errors(records, day_ago)
    latest = [{**r, "done_path": filed.get((r.get("path"), r.get("idempotency_key")))} for r in sends[-SHOWN:]]
    shown_sends, sends_private = split(reversed(latest), lambda r: record_private(view, r))
    shown_errors, errors_private = split(reversed(errors[-SHOWN:]), lambda r: record_private(view, r))
    copies = copies_filed(records, day_ago)
    shown_copies, copies_private = split(copies[:SHOWN], lambda r: record_private(view, r))
    return {
        "vault": str(vault.root),
        "mail_backend": settings.mail_backend,
        # Which mailbox and how its sign-in stands, known without a network call (h0.report.mailbox).
        "mailbox": collect_mailbox(settings, state_db, daemon_running=daemon is not None),
        "generated_at": iso(utcnow()),
        "daemon": daemon,
        "sending": sending,
        "suspected_attacks": attacks,
        "folders": vault.counts(),
        "totals": {
            "needs_you": needs_you_total,
            "waiting_for_approval": drafts["waiting_total"],
            "approved_not_yet_sent": approved_total,
            "returned_to_drafts": drafts["returned_total"],
            "sends_24h": sum(1 for r in sends if str(r.get("timestamp", "")) >= day_ago),
            "errors_24h": len(errors),
            "copies_filed_24h": len(copies),
            "replies_owed": follow_ups.owed_total,
            "replies_awaited": follow_ups.awaited_total,
            "snoozed": follow_ups.snoozed_total,
        },
        # How many of each list's items are private (h0.report.privacy): counted there, never named.
        "private": {
            "needs_you": needs_you_private,
            "waiting_for_approval": drafts["waiting_private"],
            "approved_not_yet_sent": approved_private,
            "returned_to_drafts": drafts["returned_private"],
            "recent_sends": sends_private,
            "recent_errors": errors_private,
            "copies_filed": copies_private,
        },
        "follow_ups": follow_ups.as_dict(),
        # Agents' proposed changes to H0_Rules/Profile/Memory, waiting for the owner; outside changes (h0.vault.control).
        "control_notes": collect_control(vault, records),
        # How good H0's drafts are: the send-ready and rejected rates over 30 days (h0.drafting.learning).
        "drafts": _draft_quality(vault),
        "shown": SHOWN,
        "needs_you": needs_you,
        "waiting_for_approval": drafts["waiting"],
        # The same drafts with their recipients and the domains each would be the first message to.
        "waiting_for_approval_details": drafts["waiting_items"],
        "approved_not_yet_sent": approved,
        "returned_to_drafts": drafts["returned"],
        "recent_sends": [
            {
                **{k: r.get(k) for k in ("timestamp", "path", "to", "subject", "done_path")},
                "recipients": sent_recipients(r),
            }
            for r in shown_sends
        ],
        # Copies of a sent message filed instead of sent (a sync tool's): one item per copy, as it was filed.
        "copies_filed": shown_copies,
        "recent_errors": [
            {k: r.get(k) for k in ("timestamp", "stream", "event", "path", "returned_to", "message", "error")}
            for r in shown_errors
        ],
        # Each calendar source's last read (h0.calendar.cache): a failing feed serves its last good copy.
        "calendar": [
            {"name": c.name, "ok": c.ok, "last_good_at": c.last_good_at, "error": c.error}
            for c in calendar_states(settings, vault.root)
        ],
    }


def _draft_quality(vault: Vault) -> dict[str, Any]:
    from h0.drafting.learning import quality

    try:
        return quality(vault.root)
    except (H0Error, OSError) as error:
        return {
            "resolved": 0,
            "send_ready_rate": None,
            "rejected_rate": None,
            "problem": getattr(error, "message", str(error)),
        }


def _mark_new_domains(
    settings: Settings,
    vault: Vault,
    state_db: StateDB | None,
    correspondents: Correspondents | None,
    drafts: dict[str, Any],
    approved: list[dict[str, Any]],
) -> None:
    """`new_domains` on each listed draft: the domains it would be the first message to (h0.mail.deception.lookalike)."""
    items = [*drafts["waiting_items"], *approved, *drafts["returned"]]
    if not any(count(item.get("recipients") or {}) for item in items):
        return
    if correspondents is None:
        if state_db is None and (state_dir_for(vault.root, settings.h0_state_dir) / DB_FILE).exists():
            try:
                state_db = StateDB.for_vault(vault.root, settings.h0_state_dir)
            except H0Error:
                state_db = None
        correspondents = Correspondents(vault.root, state_db)
    for item in items:
        lists = item.get("recipients") or {}
        item["new_domains"] = new_domains([a for field in FIELDS for a in lists.get(field, [])], correspondents)


def _mark_changes(settings: Settings, vault: Vault, state_db: StateDB | None, items: list[dict[str, Any]]) -> None:
    """`last_change` on each waiting draft: who made its current content — H0, an agent through H0's
    vault server (tool and client), or something outside H0's tools (Obsidian, an editor) — and when
    (h0.vault.last_change, from the note writes H0's servers record). Left out when there is no record to ask."""
    if not items:
        return
    if state_db is None:
        if not (state_dir_for(vault.root, settings.h0_state_dir) / DB_FILE).exists():
            return
        try:
            state_db = StateDB.for_vault(vault.root, settings.h0_state_dir)
        except H0Error:
            return
    for item in items:
        try:
            note = vault.read_note(item["path"])
            mtime = os.stat(vault.root / item["path"]).st_mtime
            change = last_change(note.hash, mtime, state_db.note_writes(name_key(item["path"])))
        except (H0Error, OSError):
            continue
        who = "H0" if change.tool is not None and not change.by_agent else change.describe()
        item["last_change"] = {
            "by": who,
            "agent": change.by_agent,
            "outside": change.tool is None,
            "tool": change.tool,
            "client": change.client,
            "at": iso_epoch(change.at),
        }


def _lend_parses(vault: Vault, view: ReportGate) -> None:
    """The vault index's parses of the listed folders' notes, lent to the listings: a note whose file is as the
    index read it is not parsed again (a fresh `h0 status` after an import parsed thousands; the dashboard, a
    burst's notes). Without the index each listing parses as always."""
    if view.index is None:
        return
    try:
        vault.lend_parses(view.index.parses((NEEDS_ACTION, DRAFTS, APPROVED)))
    except INDEX_ERRORS as exc:
        logger.debug("the index's parses are not lent ({})", exc)


def _daemon(vault: Vault, live: dict[str, Any] | None) -> dict[str, Any] | None:
    if live is not None:
        return {k: live.get(k) for k in ("pid", "started")} if live.get("running", True) else None
    return daemon_holder(vault.root)


def _drafts(vault: Vault, view: ReportGate, hidden: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Drafts waiting for approval (urgent first), and approved ones H0 gave back with a reason
    (snoozed ones, `hidden`, left out; private ones counted, `*_private`)."""
    try:
        listing = vault.list_notes(DRAFTS, with_frontmatter=True)
    except H0Error:
        listing = Listing([], 0, False)
    waiting: list[tuple[bool, str, dict[str, list[str]], str | None]] = []
    returned: list[dict[str, Any]] = []
    private = {"waiting": 0, "returned": 0}
    view.judge(note.path for note in listing.notes)
    for note in listing.notes:
        if note.path in hidden:
            continue
        facts = note_facts(note.path, note.frontmatter or {})
        status, given_back = facts.status.word, facts.returned
        waits = status == "pending_approval" and not given_back.given_back
        back = not waits and (status in ("held", "not_sent") or given_back.given_back)
        if (waits or back) and view.private(note.path):
            private["waiting" if waits else "returned"] += 1
        elif waits:
            urgent_last = facts.priority != "urgent"
            waiting.append((urgent_last, note.path, facts.recipients, facts.subject))
        elif back:
            returned.append(
                {
                    "path": note.path,
                    "status": status,
                    "subject": facts.subject,
                    "to": ", ".join(facts.to) or None,
                    "recipients": facts.recipients,
                    "code": given_back.code or None,
                    "reason": given_back.reason or None,
                    "at": given_back.at or None,
                }
            )
    returned += [
        {
            "path": s["path"],
            "status": "unreadable",
            "subject": None,
            "to": None,
            "recipients": recipient_lists(),
            "code": s.get("error"),
            "reason": s.get("message"),
            "at": None,
        }
        for s in listing.skipped
    ]
    waiting.sort(key=lambda item: item[:2])
    items = [{"path": path, "subject": subject, "recipients": lists} for _, path, lists, subject in waiting[:SHOWN]]
    return {
        "waiting": [item["path"] for item in items],
        "waiting_items": items,
        "waiting_total": len(waiting) + private["waiting"],
        "waiting_private": private["waiting"],
        "returned": returned[:SHOWN],
        "returned_total": len(returned) + private["returned"],
        "returned_private": private["returned"],
    }


def _needs_you(
    vault: Vault, view: ReportGate, hidden: frozenset[str] = frozenset()
) -> tuple[list[dict[str, Any]], int, int]:
    """Emails in Needs_Action/ (any depth) triaged urgent, needs_info or delegate, or whose reply
    the human rejected; urgent first (snoozed ones, `hidden`, left out); the total; how many are private
    (counted in the total, never listed)."""
    found: dict[str, str] = {}
    private: set[str] = set()
    for flt, kind in NEEDS_YOU:
        try:
            listing = vault.list_notes(NEEDS_ACTION, flt, recursive=True, with_frontmatter=True)
        except H0Error:
            continue
        view.judge(note.path for note in listing.notes)
        for note in listing.notes:
            if note.path in hidden:
                continue
            if view.private(note.path):
                private.add(note.path)
                continue
            if kind == "rejected_reply":
                found[note.path] = kind  # an urgent email whose reply was rejected: say the rejection
            else:
                found.setdefault(note.path, kind)
    order = {kind: index for index, (_, kind) in enumerate(NEEDS_YOU)}
    ranked = sorted(found.items(), key=lambda item: (order[item[1]], item[0]))
    items = []
    for path, kind in ranked[:SHOWN]:
        try:
            facts = vault.read_note(path).facts
        except H0Error:
            facts = note_facts(path, {})
        reason = facts.triage.problem or facts.triage.reasoning or None
        draft = facts.follow_up_marks.draft or None
        if kind == "rejected_reply":
            reason = f"{REJECTED_REPLY_REASON} ({draft})" if draft else REJECTED_REPLY_REASON
        items.append(
            {
                "path": path,
                "decision": kind,
                "status": facts.status.word or None,
                "reason": reason,
                "subject": facts.subject,
                "from": facts.sender_text or None,
                "delegate_to": facts.triage.delegate_to or None,
                "draft": draft,
            }
        )
    return items, len(found) + len(private), len(private)
