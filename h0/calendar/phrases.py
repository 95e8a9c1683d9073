"""What an email says about meeting: whether it asks to meet, for how long, and on which days.

A small reader of the phrases people write, in English and German: "can we find 30 minutes
next week?", "a quick call Thursday or Friday", "tomorrow?", "nächste Woche", "am Donnerstag".
It looks only at the email's own words (quoted history cut by the caller) and answers with
plain values; anything it does not understand means "the next working days", never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MAX_TEXT_CHARS = 4_000  # the ask is in the first lines of an email
SEARCH_WORKING_DAYS = 7  # without a day named: the next this-many working days

# A request to meet, not just a word about meetings: "can we …", "are you free …", "let's …", "Zeit für …".
_MEETING_WORDS = r"(?:meet|talk|chat|call|catch[ -]?up|find|schedule|set up|sync|get together|hop on|jump on|grab)"
_MEET = re.compile(
    rf"\b(?:can|could|shall|should|may) (?:we|i)\b.{{0,40}}\b{_MEETING_WORDS}"
    rf"|\blet'?s\b.{{0,20}}\b{_MEETING_WORDS}"
    r"|\b(?:are|would|will) you (?:be )?(?:free|available|around)\b"
    r"|\b(?:your|any) availability\b|\bwhen (?:are|would|will) you (?:be )?(?:free|available)"
    r"|\bwhat time (?:suits|works)|\bwhen (?:suits|works) (?:you|for you)"
    r"|\bfind (?:a |some )?(?:time|slot)|\b\d+\s*(?:min|minutes)\b.{0,30}\b(?:call|chat|meeting|talk)"
    r"|\b(?:schedule|set up|book|arrange) (?:a|an|some)\b.{0,20}\b(?:call|meeting|chat|time)"
    r"|\bkönnen wir\b.{0,40}\b(?:treffen|telefonieren|sprechen|besprechen)"
    r"|\b(?:hast du|haben sie|hättest du|hätten sie)\b.{0,40}\bzeit\b|\bzeit für\b|\bwann passt\b"
    r"|\btermin (?:finden|vereinbaren|ausmachen)",
    re.IGNORECASE | re.DOTALL,
)
# Words that make a "call"/"meeting" something other than a request to meet now.
_NOT_AN_ASK = re.compile(r"\b(unsubscribe|newsletter|webinar recording|call for papers|invoice)\b", re.IGNORECASE)
# The same, for lowered ASCII text (the patterns are written in lower case: nothing else changes).
_MEET_LOWERED = re.compile(_MEET.pattern, re.DOTALL)
_NOT_AN_ASK_LOWERED = re.compile(_NOT_AN_ASK.pattern)
_MINUTES = re.compile(r"\b(\d{1,3})\s*(?:-\s*)?(?:min|mins|minutes|minute|minuten)\b", re.IGNORECASE)
_HOURS = re.compile(r"\b(\d(?:[.,]5)?)\s*(?:h|hours?|stunden?)\b", re.IGNORECASE)
_HALF_HOUR = re.compile(r"\b(half an hour|halbe stunde)\b", re.IGNORECASE)
_ONE_HOUR = re.compile(r"\b(an hour|one hour|eine stunde)\b", re.IGNORECASE)

WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
    "montag": 0,
    "dienstag": 1,
    "mittwoch": 2,
    "donnerstag": 3,
    "freitag": 4,
    "samstag": 5,
    "sonntag": 6,
}
_WEEKDAY = re.compile(r"\b(" + "|".join(WEEKDAYS) + r")s?\b", re.IGNORECASE)
_NEXT_WEEK = re.compile(r"\b(next week|nächste[n]? woche|naechste[n]? woche|kommende[n]? woche)\b", re.IGNORECASE)
_THIS_WEEK = re.compile(r"\b(this week|diese[rn]? woche)\b", re.IGNORECASE)
_TOMORROW = re.compile(r"\b(tomorrow|morgen)\b", re.IGNORECASE)
_TODAY = re.compile(r"\b(today|heute)\b", re.IGNORECASE)
_GERMAN = re.compile(
    r"\b(?:und|wir|ich|sie|du|können|könnten|nächste|woche|zeit|hallo|danke|termin|uns|gerne?|für|mit|ist)\b",
    re.IGNORECASE,
)
_GUTEN_MORGEN = re.compile(r"\bguten morgen\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class MeetingAsk:
    """An email's request to meet: the days it names (None: any of the next working days) and a length."""

    days: tuple[date, ...] | None
    minutes: int | None
    said: str  # the phrase the days were read from ("next week", "Thursday or Friday"), or ""
    language: str = "en"  # "de" when the email is in German: a rules reply proposes in German


def asks_to_meet(text: str) -> bool:
    """Whether the email's words ask to find a time to meet or talk."""
    head = text[:MAX_TEXT_CHARS]
    if head.isascii():  # lowered ASCII matches the lowercase patterns as IGNORECASE would, ~2.5x faster
        head = head.lower()
        return _MEET_LOWERED.search(head) is not None and _NOT_AN_ASK_LOWERED.search(head) is None
    return _MEET.search(head) is not None and _NOT_AN_ASK.search(head) is None


def meeting_ask(text: str, today: date) -> MeetingAsk | None:
    """The email's request to meet (None when it does not ask): which days and how long."""
    if not asks_to_meet(text):
        return None
    head = text[:MAX_TEXT_CHARS]
    days, said = requested_days(head, today)
    german = len(_GERMAN.findall(head)) >= 3
    return MeetingAsk(days, requested_minutes(head), said, "de" if german else "en")


def requested_minutes(text: str) -> int | None:
    """The meeting length the email names, in minutes (5 to 480), or None."""
    match = _MINUTES.search(text)
    if match:
        minutes = int(match.group(1))
        return minutes if 5 <= minutes <= 480 else None
    if _HALF_HOUR.search(text):
        return 30
    match = _HOURS.search(text)
    if match:
        minutes = round(float(match.group(1).replace(",", ".")) * 60)
        return minutes if 5 <= minutes <= 480 else None
    if _ONE_HOUR.search(text):
        return 60
    return None


def requested_days(text: str, today: date) -> tuple[tuple[date, ...] | None, str]:
    """The days the email asks about, and the words it used; (None, "") when it names none."""
    text = _GUTEN_MORGEN.sub(" ", text[:MAX_TEXT_CHARS])  # "Guten Morgen" is a greeting, not tomorrow
    monday = today - timedelta(days=today.weekday())
    weekdays = sorted({WEEKDAYS[m.group(1).lower()] for m in _WEEKDAY.finditer(text)})
    said_days = [m.group(0) for m in _WEEKDAY.finditer(text)]
    if _NEXT_WEEK.search(text):
        start = monday + timedelta(days=7)
        week = [start + timedelta(days=i) for i in range(7)]
        chosen = [d for d in week if d.weekday() in weekdays] if weekdays else week
        return tuple(chosen), _said(_NEXT_WEEK.search(text), said_days)
    if weekdays:
        # The next such day (today counts only when it is named and not over: the caller drops past slots).
        chosen = [today + timedelta(days=(w - today.weekday()) % 7) for w in weekdays]
        return tuple(sorted(chosen)), " or ".join(dict.fromkeys(said_days))
    if _THIS_WEEK.search(text):
        return tuple(today + timedelta(days=i) for i in range(7 - today.weekday())), "this week"
    if _TOMORROW.search(text):
        return (today + timedelta(days=1),), "tomorrow"
    if _TODAY.search(text):
        return (today,), "today"
    return None, ""


def _said(match: re.Match[str] | None, days: list[str]) -> str:
    words = match.group(0) if match else ""
    return f"{' or '.join(dict.fromkeys(days))} {words}".strip() if days else words


def next_working_days(today: date, working: tuple[bool, ...], count: int = SEARCH_WORKING_DAYS) -> tuple[date, ...]:
    """Today and the following days up to `count` working days (`working`: seven flags, Monday first)."""
    if not any(working):
        return ()
    days: list[date] = []
    day = today
    while len(days) < count:
        if working[day.weekday()]:
            days.append(day)
        day += timedelta(days=1)
    return tuple(days)
