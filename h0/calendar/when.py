"""The time a request to meet names, in English, German and French: which days, which part of the day, how long.

Read from the words of the request itself (h0.calendar.phrases picks them), never from the rest of the
email: "The notes from Tuesday are in the folder. Are you free Thursday afternoon?" asks for Thursday.

- Days: a weekday ("Thursday", "Donnerstag", "jeudi", German compounds "Donnerstagnachmittag",
  "Freitagvormittag") is its next occurrence (today counts: the caller drops times already past), a range
  ("from Tuesday to Thursday", "Di–Do", "du mardi au jeudi") every day of it; "next Monday", "nächsten
  Montag", "lundi prochain" is that day in the next calendar week (the reading "diesen/nächsten Montag"
  draws between them), and so is every other day named with it ("mardi ou mercredi prochain"); a date
  written out wins over a weekday ("Di., 24.11.", "9 décembre", "December 9th", "mercredi 9": the next
  9th that is a Wednesday); weekdays written short count ("Wed", "Thurs", "Di.", "jeu."); "next week", "nächste Woche", "la semaine prochaine",
  "this week", "diese Woche", "cette semaine", "tomorrow", "morgen", "demain", "today", "heute",
  "aujourd'hui"; a day "except"/"außer"/"sauf" is left out. German "Morgen" as a noun ("Guten Morgen", "am Morgen", "heute Morgen") is no day.
- Part of the day: morning ("morning", "Vormittag", "morgens", "morgen früh", "matin", "matinée"),
  afternoon ("afternoon", "after lunch", "Nachmittag", "après-midi"), evening ("evening", "tonight",
  "Abend", "soir", "soirée").
- Length: "20 min", "45-minute", "30-minütig", "half an hour", "halbe Stunde", "demi-heure", "an hour",
  "one-hour", "eine Stunde", "d'une heure", "1.5 hours", "2 Stunden", "1 h 30".
"""

from __future__ import annotations

import re
from datetime import date, time, timedelta

WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
    "montag": 0, "dienstag": 1, "mittwoch": 2, "donnerstag": 3, "freitag": 4, "samstag": 5, "sonnabend": 5,
    "sonntag": 6,
    "lundi": 0, "mardi": 1, "mercredi": 2, "jeudi": 3, "vendredi": 4, "samedi": 5, "dimanche": 6,
}  # fmt: skip
# When each part of the day is, on the owner's clock: a proposed time lies wholly inside it.
PARTS: dict[str, tuple[time, time]] = {
    "morning": (time(0), time(12)),
    "afternoon": (time(12), time(18)),
    "evening": (time(17), time(23, 59)),
}
_DAY = "|".join(WEEKDAYS)
_GERMAN_PART = r"morgen|vormittag|mittag|nachmittag|abend"
# "Thursday", "Donnerstags", "Donnerstagnachmittag": the weekday, and a German part of day joined to it.
_WEEKDAY = re.compile(rf"\b({_DAY})(?:s\b|({_GERMAN_PART})s?\b|\b)", re.IGNORECASE)
_NEXT_WEEKDAY = re.compile(
    rf"\b(?:next|nächste[nr]?|naechste[nr]?)\s+({_DAY})|\b({_DAY})\s+prochain\b|\b({_DAY})\s+(?:in|der|nächster) woche",
    re.IGNORECASE,
)
# "from Tuesday to Thursday", "Di–Do", "zwischen Dienstag und Donnerstag", "du mardi au jeudi": every day between.
_RANGE = re.compile(
    rf"\b({_DAY})\w*\s*(?:-|–|—|to|until|till|bis|au|à)\s*({_DAY})\b"
    rf"|\b(?:between|zwischen|entre)\s+({_DAY})\w*\s+(?:and|und|et)\s+({_DAY})\b",
    re.IGNORECASE,
)
# "any day next week except Friday", "außer Freitag", "sauf le vendredi": that day is not asked for.
_EXCEPT = re.compile(
    rf"\b(?:except(?: on)?|but not|not on|außer(?: am)?|ausser(?: am)?|nicht am|sauf(?: le)?)\s+({_DAY})", re.IGNORECASE
)
# Weekdays written short: "Wed", "Thurs"; "Di.", "Do."; "mer.", "jeu." (German and French with their dot; German
# "Fr." before a name is "Frau").
_SHORT_DAYS = re.compile(
    r"\b(?:(Mon|Tues?|Wed|Thu(?:rs?)?|Fri)\b\.?|(Mo|Di|Mi|Do|Fr)\.(?!\s*[A-ZÄÖÜ])|(lun|mar|mer|jeu|ven)\.)"
)
_LONG_DAYS = {
    "mon": "Monday", "tue": "Tuesday", "tues": "Tuesday", "wed": "Wednesday", "thu": "Thursday", "thur": "Thursday",
    "thurs": "Thursday", "fri": "Friday", "mo": "Montag", "di": "Dienstag", "mi": "Mittwoch", "do": "Donnerstag",
    "fr": "Freitag", "lun": "lundi", "mar": "mardi", "mer": "mercredi", "jeu": "jeudi", "ven": "vendredi",
}  # fmt: skip
# Month names in English, German and French, their short forms and their spellings without accents: the month's
# number (h0.calendar.checks reads the dates a model wrote with the same words, h0.drafting.mailfacts the dates
# of a message).
MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january januar jänner janvier jan janv", "february februar février fevrier feb févr fevr",
            "march märz maerz mars mar mrz", "april avril apr avr", "may mai", "june juni juin jun",
            "july juli juillet jul juil", "august août aout aug", "september septembre sept sep",
            "october oktober octobre oct okt", "november novembre nov", "december dezember décembre decembre dec dez déc",
        ),
        1,
    )
    for name in names.split()
}  # fmt: skip
MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
# A date written out wins over a weekday: "Di., 24.11.", "9 décembre", "December 9th", "mercredi 9".
_DATE = re.compile(
    r"\b(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4}|\d{2})?(?!\d)"
    rf"|\b(?P<d1>\d{{1,2}})(?:\.|er|st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{MONTH})\b\.?"
    rf"|\b(?P<m2>{MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*(?:h\b|uhr|[:.]\d|[ap]\.?m))"
    rf"|\b(?P<w>{_DAY}),?\s+(?:the\s+|den\s+|le\s+)?(?P<d3>\d{{1,2}})(?:\.|er|st|nd|rd|th)?(?!\s*(?:h\b|uhr|[:.]\d|[ap]\.?m))",
    re.IGNORECASE,
)
_NEXT_WEEK = re.compile(
    r"\b(?:next week|(?:nächste|naechste|kommende)[nr]? woche|(?:la )?semaine prochaine|semaine suivante)\b",
    re.IGNORECASE,
)
_THIS_WEEK = re.compile(r"\b(?:this week|diese[rn]? woche|cette semaine)\b", re.IGNORECASE)
# German "morgen" is tomorrow, except as the noun after "am", "jeden", "heute" ("heute Morgen": this morning).
_TOMORROW = re.compile(r"\b(?:tomorrow|demain)\b|(?<!\bam )(?<!\bjeden )(?<!\bheute )(?<!\w)morgen\b", re.IGNORECASE)
_TODAY = re.compile(r"\b(?:today|heute|aujourd'hui|aujourd’hui)\b", re.IGNORECASE)
_PART = re.compile(
    r"\b(?P<morning>mornings?|before lunch|vormittags?|morgens|morgen früh|am morgen|matin|matinée)\b"
    r"|\b(?P<afternoon>afternoons?|after lunch|nachmittags?|nach dem mittagessen|nach der mittagspause|après-midi|"
    r"apres-midi|aprem|après le déjeuner)\b"
    r"|\b(?P<evening>evenings?|tonight|abends?|heute abend|soir|soirée|ce soir)\b",
    re.IGNORECASE,
)
_MINUTES = re.compile(r"\b(\d{1,3})\s*-?\s*(?:min|mins|minutes?|minuten|minütige[snmr]?|minütig)\b", re.IGNORECASE)
_HOURS_AND_MINUTES = re.compile(r"\b(\d)\s*h\s*(\d{2})\b", re.IGNORECASE)  # "1 h 30", "1h30"
_HOURS = re.compile(r"\b(\d(?:[.,]5)?)\s*-?\s*(?:h|hrs?|hours?|stunden?|stündige[snmr]?|heures?)\b", re.IGNORECASE)
_HALF_HOUR = re.compile(r"\b(?:half an hour|halbe stunde|demi-heure|demi heure)\b", re.IGNORECASE)
_ONE_HOUR = re.compile(
    r"\b(?:an hour|one[- ]hour|a full hour|eine stunde|einstündige[snmr]?|une heure|d'une heure|d’une heure)\b",
    re.IGNORECASE,
)
# Greetings name a part of the day and ask for none: "Guten Morgen", "Good afternoon", "Bonsoir".
_GUTEN_MORGEN = re.compile(r"\b(?:guten (?:morgen|abend|tag)|good (?:morning|afternoon|evening))\b", re.IGNORECASE)


def requested_minutes(text: str) -> int | None:
    """The meeting length the words name, in minutes (5 to 480), or None."""
    minutes: int | None = None
    if match := _MINUTES.search(text):
        minutes = int(match.group(1))
    elif match := _HOURS_AND_MINUTES.search(text):
        minutes = int(match.group(1)) * 60 + int(match.group(2))
    elif _HALF_HOUR.search(text):
        minutes = 30
    elif match := _HOURS.search(text):
        minutes = round(float(match.group(1).replace(",", ".")) * 60)
    elif _ONE_HOUR.search(text):
        minutes = 60
    return minutes if minutes is not None and 5 <= minutes <= 480 else None


def requested_part(text: str) -> str | None:
    """The part of the day the words ask for ("morning", "afternoon", "evening"), or None (either, or none said)."""
    parts = {name for m in _PART.finditer(_GUTEN_MORGEN.sub(" ", text)) for name, v in m.groupdict().items() if v}
    parts |= {_german_part(m.group(2)) for m in _WEEKDAY.finditer(text) if m.group(2)}
    parts.discard("")
    return parts.pop() if len(parts) == 1 else None


def _german_part(word: str) -> str:
    word = word.lower()
    return {"morgen": "morning", "vormittag": "morning", "nachmittag": "afternoon", "abend": "evening"}.get(word, "")


def requested_days(text: str, today: date) -> tuple[tuple[date, ...] | None, str]:
    """The days the words ask about, and the words they used; (None, "") when they name none."""
    text = _SHORT_DAYS.sub(lambda m: _LONG_DAYS[next(g for g in m.groups() if g).lower()], _GUTEN_MORGEN.sub(" ", text))
    written = [(m.group(0), day) for m in _DATE.finditer(text) if (day := _written_day(m, today)) is not None]
    if written:
        return tuple(sorted({day for _, day in written})), " or ".join(dict.fromkeys(w for w, _ in written))
    excepted = {WEEKDAYS[m.group(1).lower()] for m in _EXCEPT.finditer(text)}
    text = _EXCEPT.sub(" ", text)
    weekdays = {WEEKDAYS[m.group(1).lower()] for m in _WEEKDAY.finditer(text)}
    for match in _RANGE.finditer(text):
        first, last = (WEEKDAYS[g.lower()] for g in match.groups() if g)
        weekdays |= set(range(first, last + 1)) if first <= last else set()
    if excepted and not weekdays:  # "any day but Friday": every other working day
        weekdays = set(range(5)) - excepted
    said_days = [m.group(0) for m in _WEEKDAY.finditer(text)]
    # "next week", or a day of it ("nächsten Montag", "mardi ou mercredi prochain"): every day named is in it.
    next_week = _NEXT_WEEK.search(text)
    next_day = _NEXT_WEEKDAY.search(text)
    if next_week or next_day:
        start = today - timedelta(days=today.weekday()) + timedelta(days=7)
        week = [start + timedelta(days=i) for i in range(7)]
        chosen = [d for d in week if d.weekday() in weekdays] if weekdays else week
        said = _said(next_week, said_days) if next_week else f"{' or '.join(dict.fromkeys(said_days))}, next week"
        return tuple(chosen), said
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


def _written_day(match: re.Match[str], today: date) -> date | None:
    """The date a written-out date names: the next one from today (a weekday with a day of the month: the next
    such day of the month, on that weekday when one comes within two months)."""
    found = match.groupdict()
    try:
        if found["w"]:
            day = int(found["d3"])
            coming = [today + timedelta(days=i) for i in range(62)]
            matching = [d for d in coming if d.day == day]
            weekday = WEEKDAYS[found["w"].lower()]
            return next((d for d in matching if d.weekday() == weekday), matching[0] if matching else None)
        day = int(found["d"] or found["d1"] or found["d2"])
        month = int(found["m"]) if found["m"] else MONTHS[(found["m1"] or found["m2"]).lower().rstrip(".")]
        if found["y"]:
            year = int(found["y"]) + (2000 if len(found["y"]) == 2 else 0)
            return date(year, month, day)
        guess = date(today.year, month, day)
        return guess if guess >= today else date(today.year + 1, month, day)
    except (ValueError, KeyError):
        return None


def names_a_time(text: str) -> bool:
    """Whether the words name a day, a part of the day or a length (what makes "are you free …" a request)."""
    return any(
        p.search(text)
        for p in (_WEEKDAY, _SHORT_DAYS, _NEXT_WEEK, _THIS_WEEK, _TOMORROW, _TODAY, _PART, _MINUTES, _HALF_HOUR, _DATE)
    ) or bool(_ONE_HOUR.search(text) or _HOURS.search(text))


def _said(match: re.Match[str] | None, days: list[str]) -> str:
    words = match.group(0) if match else ""
    return f"{' or '.join(dict.fromkeys(days))} {words}".strip() if days else words
