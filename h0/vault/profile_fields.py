"""What the owner's profile note (`H0_Profile.md`) says in its properties, read once, as written.

The owner's name, role, tone, greeting, sign-off and signature (prose: one line, or several kept as
lines), the languages they write in, and what the calendar reads: `timezone`, `working_hours`,
`meeting_minutes`, `meeting_buffer_minutes` as the text the owner wrote. Whether a value is usable (a
real time zone, hours that parse, a number of minutes in range) is the reader's to judge with its own
fix (h0.drafting.profile, h0.calendar.hours); nothing here raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from h0.vault.values import listed

MAX_FIELD_CHARS = 200
PROSE_KEYS = ("name", "role", "tone", "greeting", "sign_off", "signature")
_LIMITS = {"signature": 400}


@dataclass(frozen=True, slots=True)
class ProfileFields:
    prose: Mapping[str, str]  # each of PROSE_KEYS: "" when absent or not text
    languages: tuple[str, ...]
    timezone: str
    working_hours: str  # a list of ranges joined with ", "
    meeting_minutes: str
    meeting_buffer_minutes: str


def prose(value: Any, limit: int = MAX_FIELD_CHARS) -> str:
    """A text property: one line with its spaces collapsed, or several lines kept as written (trimmed)."""
    if value is None or isinstance(value, (dict, list)):
        return ""
    text = " ".join(str(value).split()) if "\n" not in str(value) else str(value).strip()
    return text[:limit]


def profile_fields(frontmatter: Mapping[str, Any]) -> ProfileFields:
    zone = frontmatter.get("timezone")
    hours = frontmatter.get("working_hours")
    return ProfileFields(
        prose={key: prose(frontmatter.get(key), _LIMITS.get(key, MAX_FIELD_CHARS)) for key in PROSE_KEYS},
        languages=tuple(text for value in listed(frontmatter.get("languages")) if (text := prose(value, 20))),
        timezone=zone.strip() if isinstance(zone, str) else "",
        working_hours=", ".join(str(v) for v in hours) if isinstance(hours, list) else str(hours or "").strip(),
        meeting_minutes=_written(frontmatter.get("meeting_minutes")),
        meeting_buffer_minutes=_written(frontmatter.get("meeting_buffer_minutes")),
    )


def _written(value: Any) -> str:
    return "" if value is None else str(value)
