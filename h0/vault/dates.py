"""A date a note carries (`received`, `sent_at`, `snooze_until`…), read once and bounded: a value
that is malformed or out of range is a typed error, never a crash in a report or a pass.

Frontmatter is anyone's text. `received: 0001-01-01` is a valid ISO date whose epoch is valid too,
and then `datetime.fromtimestamp` in local time, or adding three working days, raises ValueError
far from the note — in `h0 status`, the dashboard, the follow-up pass — and one note blinds every
report. So every date a note gives H0 goes through `note_epoch`, the one date reader of a note: ISO 8601
dates and date-times (a space for the `T`, `Z` or an offset) and YAML dates, between EARLIEST and
LATEST. A time without an offset (and a date alone, read as its midnight) is the owner's local time:
the zone of the machine H0 runs on, where the owner writes `snooze_until: 2026-05-12 09:00` and means
nine o'clock there. H0 itself always writes an offset (`Z`: h0.vault.audit.note_timestamp). A list, a mapping, a number, a boolean, words ("tomorrow-ish"), an impossible date and a
year outside the range are `InvalidRequest` naming the property; callers that only need "when, if
known" treat that as unknown, and the follow-up pass writes it on the note (`date_error`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from h0.errors import InvalidRequest

__all__ = ["DATE_FIELDS", "EARLIEST", "LATEST", "date_problem", "in_range", "note_epoch", "read_time", "stamp_epoch"]

# A day after the epoch: local time of epoch 0 is before 1970 west of Greenwich, which some OSes refuse.
EARLIEST = dt.datetime(1970, 1, 2, tzinfo=dt.UTC).timestamp()
LATEST = dt.datetime(3000, 1, 1, tzinfo=dt.UTC).timestamp()  # far enough for a snooze, safe for any arithmetic
# The dates H0 reads from notes (snooze_until has its own forms and error: h0.followup.snooze).
DATE_FIELDS = ("received", "sent_at", "date", "drafted_at", "asked_at", "reply_owed_since", "snooze_woke_at")
MAX_SHOWN = 60
_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}:?\d{2})?)?", re.IGNORECASE
)
HOW = "write it like 2026-05-12 or 2026-05-12T09:00:00Z"


def in_range(epoch: float) -> bool:
    return EARLIEST <= epoch < LATEST


def note_epoch(value: Any, field: str, *, how: str = HOW, tz: dt.tzinfo | None = None) -> float | None:
    """The epoch a note's date property means; None when absent or empty; InvalidRequest (naming `field`
    and saying `how` to write it) otherwise. A time without an offset is in `tz`, by default the owner's
    local zone."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    shown = " ".join(str(value).split())[:MAX_SHOWN]
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime.combine(value, dt.time.min)
    elif isinstance(value, str) and _ISO.fullmatch(value.strip()):
        text = value.strip().replace(" ", "T", 1).replace("z", "Z").replace("Z", "+00:00")
        text = re.sub(r"T(\d):", r"T0\1:", text)
        text = re.sub(r"\.(\d{6})\d+", r".\1", text)  # nanoseconds: Python reads up to microseconds
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise _bad(field, f'"{shown}" is not a real date', how) from None
    else:
        raise _bad(field, f'"{shown}" is not a date H0 can read', how)
    try:
        if moment.tzinfo is None:  # the owner's zone: year 1 (or 9999) has no local offset to convert with
            moment = moment.replace(tzinfo=tz) if tz is not None else moment.astimezone()
        epoch = moment.timestamp()
    except (OverflowError, OSError, ValueError):
        raise _bad(field, f'"{shown}" is out of range', how) from None
    if not in_range(epoch):
        raise _bad(field, f'"{shown}" is out of range (1970 to 2999)', how)
    return epoch


def stamp_epoch(value: Any) -> float | None:
    """A date a note carries, when known: `note_epoch`, with a malformed or out-of-range value as unknown
    (the follow-up pass says what is wrong on the note: `date_problem`)."""
    try:
        return note_epoch(value, "date")
    except InvalidRequest:
        return None


def read_time(value: Any) -> dt.datetime | None:
    """A date-time H0 reads from a note or from its own records (the audit's `timestamp`, a provider's
    send time, the send ledger's times) as an aware UTC datetime: `stamp_epoch`, so a time without an
    offset is the owner's local time here too; None when absent, malformed or out of range."""
    epoch = stamp_epoch(value)
    return None if epoch is None else dt.datetime.fromtimestamp(epoch, dt.UTC)


def date_problem(frontmatter: Mapping[str, Any]) -> InvalidRequest | None:
    """The first of a note's DATE_FIELDS that is malformed or out of range, as its typed error."""
    for field in DATE_FIELDS:
        try:
            note_epoch(frontmatter.get(field), field)
        except InvalidRequest as error:
            return error
    return None


def _bad(field: str, what: str, how: str) -> InvalidRequest:
    return InvalidRequest(f"{field}: {what}; {how}.", field=field, reason="bad_date")
