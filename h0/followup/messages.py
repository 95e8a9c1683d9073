"""A message as the follow-up ledger keeps it, from the three places H0 learns of one.

- mail the sync brought (`EmailFull`: received, or the owner's from the provider's sent mail);
- a row of H0's own send ledger and the sent note it was filed as (any backend, the outbox too);
- an email note in Needs_Action/ the ledger has not seen (written before follow-ups existed, or by
  another tool).

Everything is bounded (subject, names, how many recipients) and cleaned like any header text;
a date in the future is taken as the moment H0 saw the message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from h0.followup.asks import AskJudge, Verdict, rules_verdict
from h0.followup.threads import Message
from h0.mail.headers import clean_header_text, header_addresses
from h0.mail.models import EmailFull
from h0.mail.owner import is_sent_labels, message_key
from h0.vault.dates import stamp_epoch
from h0.vault.model import NoteFacts
from h0.vault.sendable import message_body

MAX_SUBJECT = 300
MAX_NAME = 120
MAX_RECIPIENTS = 100
MAX_KEY = 1_000  # as h0.mail.owner.MAX_KEY


def people(*values: Any) -> tuple[tuple[str, str], ...]:
    """(display name, lower-case address) of address headers or lists of them, each address once."""
    items = [v for value in values for v in (value if isinstance(value, (list, tuple)) else [value]) if v]
    return _people(pair for item in items for pair in header_addresses(item))


def _people(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for name, addr in pairs:
        addr = addr.strip().lower()
        if "@" in addr and addr not in found and len(found) < MAX_RECIPIENTS:
            found[addr] = clean_header_text(name)[:MAX_NAME]
    return tuple((name, addr) for addr, name in found.items())


def _sender(value: Any) -> str:
    found = header_addresses(value or "")
    return found[0][1].strip().lower()[:320] if found else ""


def _when(value: Any, now: float) -> float:
    at = stamp_epoch(value)
    return now if at is None else min(at, now)


def from_email(
    email: EmailFull, *, outbound: bool, now: float, note: str | None = None, judge: AskJudge | None = None
) -> Message:
    """A message the sync brought. With a `judge`, it is judged: does it ask something? The owner's sent mail
    (outbound) by the judge (the model, when one is set), anyone else's by the rules (h0.followup.asks: no model
    call per incoming message); machine-made mail asks nothing. Whether the owner wrote it is the owner's
    identity's to say (h0.mail.owner), at each pass."""
    outbound = outbound or is_sent_labels(email.labels)
    subject = clean_header_text(email.subject)[:MAX_SUBJECT]
    verdict: Verdict | None = None
    if judge is not None and not email.automated:
        verdict = judge.judge(email.body, subject) if outbound else rules_verdict(email.body, subject)
    key = message_key(email.rfc822_message_id, email.id)
    return Message(
        key=key,
        thread=str(email.thread_id or key)[:MAX_KEY],
        outbound=outbound,
        sender=_sender(email.sender),
        recipients=people(email.to, email.cc),
        subject=subject,
        at=_when(email.date, now),
        seen_at=now,
        provider_id=email.id,
        automated=email.automated,
        list_address=email.list_address,
        asks=None if verdict is None else verdict.asks,
        ask=verdict.ask if verdict else None,
        note=note,
    )


def from_send(
    row: Mapping[str, Any], note: Any, *, now: float, judge: AskJudge | None = None, sender: str = ""
) -> Message:
    """A message H0 sent (a row of the send ledger), with the sent note it was filed as when it could be read."""
    facts = note.facts if note is not None else None
    subject = clean_header_text((facts.subject if facts else "") or row.get("subject") or "")[:MAX_SUBJECT]
    body = message_body(note.body) if note is not None else ""
    verdict: Verdict | None = judge.judge(body, subject) if judge is not None else None
    key = message_key(row.get("rfc822_message_id"), row.get("provider_message_id"))
    thread = row.get("thread_id") or (facts.thread_id if facts else None) or key
    at = float(row.get("sent_epoch") or now)
    return Message(
        key=key,
        thread=str(thread)[:MAX_KEY],
        outbound=True,
        sender=sender.lower(),
        # display names kept, for greetings: the note's, else the ledger's
        recipients=_people(facts.addressed) if facts is not None and facts.to else people(row.get("recipients")),
        subject=subject,
        at=min(at, now),
        seen_at=now,
        provider_id=row.get("provider_message_id"),
        asks=None if verdict is None else verdict.asks,
        ask=verdict.ask if verdict else None,
    )


def from_email_note(facts: NoteFacts, *, now: float) -> Message | None:
    """An email note (type: email, any case) the ledger has not seen; None when it names no message."""
    if not facts.is_email or not (facts.rfc822_message_id or facts.message_id):
        return None
    key = message_key(facts.rfc822_message_id, facts.message_id)
    return Message(
        key=key,
        thread=(facts.thread_id or key)[:MAX_KEY],
        outbound=False,  # a note's labels are anyone's words: the owner's identity decides (h0.mail.owner)
        sender=facts.sender[:320],
        recipients=_people(facts.addressed),  # with display names
        subject=clean_header_text(facts.subject)[:MAX_SUBJECT],
        at=now if facts.received is None else min(facts.received, now),
        seen_at=now,
        provider_id=facts.message_id,
        note=facts.path,
    )
