"""`snooze_until:` on a note: hidden from the dashboard and `h0 status` until then, back when the time comes.

The value is a date (`2026-05-12`: that day at 00:00 local time) or a date and time
(`2026-05-12 09:00`, `2026-05-12T09:00`, with or without seconds, with `Z` or an offset such as
`+02:00`; without one it is local time). Anything else — words ("next week"), a number, a list,
a time without a date, an impossible date — is an `InvalidRequest` that H0 writes on the note
(`snooze_error`); a note with a broken value is not hidden. A snooze ends when its time passes
(H0 then removes `snooze_until` and writes `snooze_woke_at` and `snooze_woke_reason`, so the note
comes back on the dashboard and in the briefing, even if H0 was not running at that moment) or
earlier, when a new message arrives in the note's thread.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from h0.errors import InvalidRequest
from h0.vault.dates import in_range

FIELD = "snooze_until"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?", re.IGNORECASE)
HOW = "write a date like 2026-05-12, or a date and time like 2026-05-12 09:00"


def parse_snooze(value: Any, *, tz: dt.tzinfo | None = None) -> float:
    """The epoch a `snooze_until` value means; InvalidRequest (saying how to write it) for anything else."""
    shown = " ".join(str(value).split())[:60] if value is not None else "nothing"
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime.combine(value, dt.time.min)
    elif isinstance(value, str) and (_DATETIME.fullmatch(value.strip()) or _DATE.fullmatch(value.strip())):
        text = value.strip().replace(" ", "T", 1).replace("z", "Z").replace("Z", "+00:00")
        text = re.sub(r"T(\d):", r"T0\1:", text)
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise InvalidRequest(f'snooze_until: "{shown}" is not a real date; {HOW}.', field=FIELD) from None
    else:
        raise InvalidRequest(f'snooze_until: "{shown}" is not a date H0 can read; {HOW}.', field=FIELD)
    try:
        if moment.tzinfo is None:  # local time: year 1 (or 9999) has no local offset to convert with
            moment = moment.replace(tzinfo=tz) if tz is not None else moment.astimezone()
        epoch = moment.timestamp()
    except (OverflowError, OSError, ValueError):
        raise InvalidRequest(f'snooze_until: "{shown}" is out of range; {HOW}.', field=FIELD) from None
    if not in_range(epoch):  # year 1 or 9999 reads, then breaks the arithmetic of every report
        raise InvalidRequest(f'snooze_until: "{shown}" is out of range (1970 to 2999); {HOW}.', field=FIELD)
    return epoch


def snoozed_until(frontmatter: Mapping[str, Any], *, tz: dt.tzinfo | None = None) -> float | None:
    """The epoch a note is snoozed until; None when it has no `snooze_until` (or an empty one).
    Raises InvalidRequest for a broken value."""
    value = frontmatter.get(FIELD)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return parse_snooze(value, tz=tz)


def is_hidden(frontmatter: Mapping[str, Any], now: float) -> bool:
    """Hidden from the dashboard and status now: snoozed until later. A broken value hides nothing."""
    try:
        until = snoozed_until(frontmatter)
    except InvalidRequest:
        return False
    return until is not None and until > now
