"""Replies owed: an email from a person that needs a reply and got none after FOLLOW_UP_DAYS working days.

For each email note of a thread the pass looks at (h0.handlers.followup.follow_up), in Needs_Action/:

- mail no person wrote (the ledger's or the note's `automated:`: h0.mail.incoming.automated), the owner's
  own, and mail From an address of the owner's that the evidence does not make theirs (a forged From)
  are owed nothing;
- an email the owner answered in the thread outside H0 (their sent mail shows it) is filed in Done/
  (`follow_up: replied`), and its waiting draft is marked stale;
- otherwise it is owed when `reply_needed` (h0.followup.threads) says a reply is needed — triage drafted one,
  or the email asks the owner something and triage left it for the owner or has not looked yet — and it is
  not a suspected attack: triage's `suspected_phishing:` flag, or for an email triage has not looked at yet
  the same question asked of the same authority (`AttackCheck`). Then, once its deadline has passed, it gets
  `follow_up: reply_owed` and `reply_owed_since:`.
- A note marked owed that no longer is (triage flagged it, archived it or delegated it after an import's
  pass had marked it) loses the mark.

So what `h0 status` lists right after `h0 import` (whose pass judges the emails before any triage) is what it
lists after `h0 sweep` and under `h0 watch`.
"""

from __future__ import annotations

from typing import Any

from loguru import logger

from h0.drafting import Drafting
from h0.errors import H0Error, NotFound
from h0.followup.threads import Assessment, Message, is_owners, reply_needed
from h0.followup.workdays import add_working_days
from h0.handlers.context import HandlerContext
from h0.handlers.followup.pass_report import FollowupReport, day, days_to_wait, update_note
from h0.handlers.suspect import known_people
from h0.mail.compose.recipients import shown_sender
from h0.mail.deception.known import Known
from h0.mail.incoming.htmltext import block_text
from h0.mail.owner import note_message_key
from h0.triage.models import EmailInput
from h0.triage.phishing import suspected_phishing
from h0.vault.audit import epoch_timestamp
from h0.vault.layout import DONE, DRAFTS
from h0.vault.model import NoteFacts

RECHECK_S = 3600.0  # a safety net only: an email's triage marks its thread for the next pass (mark_triaged)
NEEDS_OWNER = frozenset({"awaiting_approval", "needs_info"})
UNTRIAGED = frozenset({"", "pending"})
OWED_KEYS = ("follow_up", "reply_owed_since")


class AttackCheck:
    """Would triage flag this email, which it has not looked at yet, as an attack? The same call triage makes
    (h0.triage.phishing.suspected_phishing, with the people the owner knows: h0.handlers.suspect), asked once
    per note and only of an email that would otherwise be owed. A note that cannot be read is not owed yet."""

    def __init__(self, ctx: HandlerContext) -> None:
        self.ctx = ctx
        self._known: Known | None = None
        self._seen: dict[str, bool] = {}

    def __call__(self, path: str) -> bool:
        if path not in self._seen:
            self._seen[path] = self._suspected(path)
        return self._seen[path]

    def _suspected(self, path: str) -> bool:
        try:
            note = self.ctx.notes.read(path)
        except H0Error:
            return True
        if self._known is None:
            self._known = known_people(self.ctx, self._drafting())
        email = EmailInput.from_note(note.facts, block_text(note.body))
        return suspected_phishing(email, self._known) is not None

    def _drafting(self) -> Drafting | None:
        try:
            return self.ctx.drafting_state()
        except Exception as exc:  # noqa: BLE001 - without it, only past correspondents are known (as triage does)
            logger.debug("follow-ups: the vault's People notes could not be read ({})", exc)
            return None


def _decision(facts: NoteFacts) -> str:
    """Triage's word on the note: "" while it is not triaged; a draft waiting is a reply decided."""
    status = facts.status.word
    if status in UNTRIAGED:
        return ""
    if facts.decision:
        return facts.decision
    return "draft_reply" if status == "awaiting_approval" else status


def owed(
    ctx: HandlerContext,
    a: Assessment,
    messages: list[Message],
    emails: list[tuple[str, dict[str, Any], NoteFacts]],
    owner: frozenset[str],
    now: float,
    report: FollowupReport,
    suspicion: AttackCheck,
) -> list[float]:
    """Mark (or unmark) the thread's email notes owed (see the module); returns the deadlines still ahead."""
    by_key = {m.key: m for m in messages}
    deadlines: list[float] = []
    for path, fm, facts in emails:
        status = facts.status.word
        message = by_key.get(note_message_key(facts))
        received = message.at if message is not None else min(facts.received or now, now)
        machine = (message.automated if message is not None else None) or facts.automated
        if machine or (message is not None and (is_owners(message) or message.sender in owner)):
            _not_owed(ctx, path, facts, report, f"machine-made mail ({machine})" if machine else "not from a person")
            continue
        mine = a.owner_last
        if mine is not None and mine.at >= received:
            if status in NEEDS_OWNER or facts.decision == "urgent" or facts.follow_up == "reply_owed":
                _replied(ctx, path, facts, mine, report)
            elif status in UNTRIAGED:
                deadlines.append(now + RECHECK_S)  # triaged soon: then filed
            continue
        asks = message.asks if message is not None else None
        if not reply_needed(_decision(facts), asks) or facts.suspicion is not None:
            _not_owed(ctx, path, facts, report, "no reply needed")
            continue
        due = add_working_days(received, days_to_wait(ctx))
        if due > now:
            deadlines.append(due)
            continue
        if status in UNTRIAGED:
            deadlines.append(now + RECHECK_S)
            if suspicion(path):
                continue  # triage will flag it; never owed to an attacker
        if facts.follow_up != "reply_owed" and update_note(
            ctx, path, {"follow_up": "reply_owed", "reply_owed_since": epoch_timestamp(received)}, report
        ):
            ctx.audit.write(
                "reply_owed",
                path=path,
                since=epoch_timestamp(received),
                subject=facts.subject,
                sender=facts.sender_text,
            )
            logger.info("↩ reply owed: {} ({} since {})", path, shown_sender(facts.sender_text) or "?", day(received))
            report.owed.append(path)
    return deadlines


def _not_owed(ctx: HandlerContext, path: str, facts: NoteFacts, report: FollowupReport, why: str) -> None:
    """A note marked owed that is owed nothing now (triage flagged, archived or delegated it since): unmarked."""
    if facts.follow_up != "reply_owed":
        return
    if update_note(ctx, path, {}, report, remove=OWED_KEYS):
        ctx.audit.write("reply_owed_cleared", path=path, reason=why)
        logger.info("↩ no reply owed any more: {} ({})", path, why)


def _replied(ctx: HandlerContext, path: str, facts: NoteFacts, mine: Message, report: FollowupReport) -> None:
    """The owner answered in this thread outside H0 (their sent mail shows it): the email is done."""
    when = epoch_timestamp(mine.at)
    try:
        moved = ctx.notes.move_to_folder(path, DONE, {"status": "done", "follow_up": "replied", "replied_at": when})
    except NotFound:
        return
    except H0Error as error:
        report.failed += 1
        logger.warning("follow-ups: {} could not be filed ({})", path, error.message)
        return
    draft = facts.follow_up_marks.draft
    if draft.startswith(f"{DRAFTS}/"):
        reason = (
            f"you already replied in this thread on {day(mine.at)} from another mail client, after the email "
            "this draft answers: read what you sent, then set `send_anyway: true` to send this too"
        )
        update_note(ctx, draft, {"stale": True, "stale_reason": reason, "stale_since": when}, report)
    ctx.audit.write(
        "reply_sent_elsewhere", path=path, done_path=moved.destination, replied_at=when, draft=draft or None
    )
    logger.info("✓ {} was answered from another mail client; filed as {}", path, moved.destination)
    report.replied.append(moved.destination)
