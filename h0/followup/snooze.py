"""`snooze_until:` on a note: hidden from the dashboard and `h0 status` until then, back when the time comes.

The value is a date (`2026-05-12`: that day at 00:00 local time) or a date and time
(`2026-05-12 09:00`, `2026-05-12T09:00`, with or without seconds, with `Z` or an offset such as
`+02:00`; without one it is local time, the owner's zone). Anything else — words ("next week"), a
number, a list, a time without a date, an impossible date — is an `InvalidRequest` that H0 writes on
the note (`snooze_error`); a note with a broken value is not hidden. A snooze ends when its time passes
(H0 then removes `snooze_until` and writes `snooze_woke_at` and `snooze_woke_reason`, so the note
comes back on the dashboard and in the briefing, even if H0 was not running at that moment) or
earlier, when a new message arrives in the note's thread.

The value is read by the note model (`NoteFacts.snooze`, with the one date reader of h0.vault.dates).
"""

from __future__ import annotations

from h0.vault.model import NoteFacts


def is_hidden(facts: NoteFacts, now: float) -> bool:
    """Hidden from the dashboard and status now: snoozed until later. A broken value hides nothing."""
    until = facts.snooze.until
    return until is not None and until > now
