"""The facts a message states, each in one form whatever the language or the writing: amounts, numbers,
dates, days of the month, times, weekdays, codes, addresses and links (English, German and French).

`h0 eval` asks it whether a draft says what the owner said: "1,100 EUR", "EUR 1,100" and "1.100 €" are
one amount; "18.12.", "18 December", "December 18th" and "18 décembre" one date; "3 p.m.", "15:00",
"15 Uhr" and "15 h" one time; "Thursday", "Donnerstag(nachmittag)" and "jeudi" one weekday. What the
grammar of each language says decides it (German and French write dates day first and group thousands
with "." or a space; English groups with ","), never a list of phrases.

A text is read up to MAX_CHARS (a model's answer is bounded long before that); every pattern is linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from h0.calendar.when import MONTH, MONTHS, WEEKDAYS

MAX_CHARS = 20_000


# A number as people write it: grouped thousands ("1,100", "38.000", "24 000") with an optional decimal
# part, or plain digits with one. Grouping is three digits after the mark: "1,10" is a decimal, "1,100" not.
_NUMBER = r"\d{1,3}(?:[.,\u00a0\u202f ]\d{3}){1,5}(?:[.,]\d{1,2})?(?!\d)|\d{1,15}(?:[.,]\d{1,2})?(?![\d.,]\d)"
_CURRENCY = r"€|eur(?:os?)?\b|\$|usd\b|£|gbp\b|chf\b|fr\.|francs?\b"

_ADDRESS = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
_LINK = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]]{1,300}", re.IGNORECASE)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_CODE = re.compile(r"\b[A-Z]{2,10}-\d{1,10}\b|\b\d{4}-\d{2,6}\b(?!-)")
_DOTTED_DATE = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(?:(\d{4}|\d{2})\b)?")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?\b")
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th|er|\.)?\s{{0,2}}(?:of\s)?({MONTH})\.?(?![a-zäöüéû])", re.IGNORECASE
)
_MONTH_DAY = re.compile(rf"\b({MONTH})\.?\s{{1,2}}(\d{{1,2}})(?:st|nd|rd|th)?\b(?![.:,]\d)", re.IGNORECASE)
_ORDINAL_DAY = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)\b"  # the 9th
    r"|\b(?:am|zum|vom|bis|ab|dem)\s(\d{1,2})\.(?!\d)"  # am 9., bis zum 9.
    r"|\b(?:le|du|au|d'ici le)\s(\d{1,2})(?![\d.,:h]|\s?(?:h\b|heures?|%|€|eur))",  # le 9
    re.IGNORECASE,
)
_TIME = re.compile(
    r"\b(\d{1,2})[:h](\d{2})\b"  # 15:00, 15h30
    r"|\b(\d{1,2})\.(\d{2})\s?uhr\b"  # 15.00 Uhr
    r"|\b(\d{1,2})(?:[:.](\d{2}))?\s?([ap])\.?\s?m\b\.?"  # 3 p.m., 3pm, 3:30 pm
    r"|\b(\d{1,2})\s?(?:uhr|h\b|heures?\b)",  # 14 Uhr, 15 h, 15 heures
    re.IGNORECASE,
)
_WEEKDAY = re.compile(r"\b(" + "|".join(WEEKDAYS) + r")(?:s\b|\w*)", re.IGNORECASE)
_AMOUNT = re.compile(
    rf"(?:(?P<pre>{_CURRENCY})\s?(?P<a>{_NUMBER})|(?P<b>{_NUMBER})\s?(?:k\b\s?)?(?P<post>{_CURRENCY}))", re.IGNORECASE
)
_PLAIN_NUMBER = re.compile(rf"(?<![\w.,/-])(?:{_NUMBER})(?![\w/-])")


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact: its kind, its value in one form, and how the text wrote it."""

    kind: str  # amount | number | date | day | time | weekday | code | address | link
    value: str
    shown: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.value)


def number_value(text: str) -> str:
    """'1,100' → '1100', '38.000' → '38000', '1.250,50' → '1250.5', '2,5' → '2.5', '24 000' → '24000'."""
    digits = re.sub(r"[\u00a0\u202f ]", "", text)
    grouped = re.fullmatch(r"(\d{1,3}(?:[.,]\d{3})+)(?:[.,](\d{1,2}))?", digits)
    if grouped:
        whole = re.sub(r"[.,]", "", grouped.group(1))
        fraction = grouped.group(2)
    else:
        whole, _, fraction = digits.replace(",", ".").partition(".")
    value = (whole.lstrip("0") or "0") if whole.isdigit() else whole
    fraction = (fraction or "").rstrip("0")
    return f"{value}.{fraction}" if fraction else value


def _date(day: int, month: int) -> str | None:
    return f"{month:02d}-{day:02d}" if 1 <= month <= 12 and 1 <= day <= 31 else None


class _Reader:
    """One pass per kind over the text; what a kind took is blanked, so a date's digits are no number."""

    def __init__(self, text: str) -> None:
        self.text = text[:MAX_CHARS]
        self.found: list[Fact] = []

    def take(self, pattern: re.Pattern[str], read: Callable[[re.Match[str]], tuple[str, str] | None]) -> None:
        pieces: list[str] = []
        last = 0
        for match in pattern.finditer(self.text):
            fact = read(match)
            if fact is None:
                continue
            self.found.append(Fact(fact[0], fact[1], match.group(0).strip()))
            pieces += [self.text[last : match.start()], " " * (match.end() - match.start())]
            last = match.end()
        pieces.append(self.text[last:])
        self.text = "".join(pieces)


def _iso(m: re.Match[str]) -> tuple[str, str] | None:
    value = _date(int(m.group(3)), int(m.group(2)))
    return ("date", value) if value else None


def _dotted(m: re.Match[str]) -> tuple[str, str] | None:
    value = _date(int(m.group(1)), int(m.group(2)))
    return ("date", value) if value else None


def _slashed(m: re.Match[str]) -> tuple[str, str] | None:
    first, second = int(m.group(1)), int(m.group(2))
    # Day first unless that cannot be (en-US "12/18"); "3/4" stays day first, as German and French write it.
    value = _date(second, first) if second > 12 >= first else _date(first, second)
    return ("date", value) if value else None


def _day_month(m: re.Match[str]) -> tuple[str, str] | None:
    value = _date(int(m.group(1)), MONTHS[m.group(2).lower()])
    return ("date", value) if value else None


def _month_day(m: re.Match[str]) -> tuple[str, str] | None:
    value = _date(int(m.group(2)), MONTHS[m.group(1).lower()])
    return ("date", value) if value else None


def _ordinal(m: re.Match[str]) -> tuple[str, str] | None:
    day = int(next(g for g in m.groups() if g))
    return ("day", str(day)) if 1 <= day <= 31 else None


def _time(m: re.Match[str]) -> tuple[str, str] | None:
    g = m.groups()
    if g[0] is not None:
        hour, minute = int(g[0]), int(g[1])
    elif g[2] is not None:
        hour, minute = int(g[2]), int(g[3])
    elif g[4] is not None:
        hour, minute = int(g[4]), int(g[5] or 0)
        hour = hour % 12 + (12 if g[6].lower() == "p" else 0)
    else:
        hour, minute = int(g[7]), 0
    return ("time", f"{hour:02d}:{minute:02d}") if hour < 24 and minute < 60 else None


def _weekday(m: re.Match[str]) -> tuple[str, str]:
    return ("weekday", str(WEEKDAYS[m.group(1).lower()]))


def _amount(m: re.Match[str]) -> tuple[str, str]:
    number = m.group("a") or m.group("b")
    value = number_value(number)
    if re.search(r"\dk\s?(?:€|eur)", m.group(0), re.IGNORECASE):  # "38k€": thousands
        value = str(int(float(value) * 1000))
    return ("amount", value)


def facts(text: str) -> list[Fact]:
    """The facts of `text`, in the order they were read (kinds first, then position)."""
    reader = _Reader(text)
    reader.take(_ADDRESS, lambda m: ("address", m.group(0).lower()))
    reader.take(_LINK, lambda m: ("link", m.group(0).rstrip(".,;:!?").lower()))
    reader.take(_IBAN, lambda m: ("code", m.group(0).replace(" ", "")))
    reader.take(_ISO_DATE, _iso)
    reader.take(_CODE, lambda m: ("code", m.group(0).upper()))
    reader.take(_DOTTED_DATE, _dotted)
    reader.take(_SLASH_DATE, _slashed)
    reader.take(_DAY_MONTH, _day_month)
    reader.take(_MONTH_DAY, _month_day)
    reader.take(_TIME, _time)
    reader.take(_AMOUNT, _amount)
    reader.take(_ORDINAL_DAY, _ordinal)
    reader.take(_WEEKDAY, _weekday)
    reader.take(_PLAIN_NUMBER, lambda m: ("number", number_value(m.group(0))))
    return reader.found


class FactSet:
    """Facts to look a fact up in, the way a reader would: a date "18.12." also says "the 18th"; "the 18th"
    is said by any date on the 18th; an amount is its number, and a number an amount of it; a time "15:00"
    is said by "15"."""

    def __init__(self, found: list[Fact]) -> None:
        self.keys = {f.key for f in found}
        for fact in found:
            if fact.kind == "date":
                self.keys.add(("day", str(int(fact.value[3:]))))
            elif fact.kind in ("amount", "number"):
                self.keys |= {("amount", fact.value), ("number", fact.value)}
            elif fact.kind == "time":
                hour = int(fact.value[:2])
                self.keys |= {("number", str(hour)), ("number", str(hour % 12 or 12))}
        self.days = {value for kind, value in self.keys if kind == "day"}

    def says(self, fact: Fact) -> bool:
        if fact.key in self.keys:
            return True
        if fact.kind == "date":  # "18.12." against "am 18.": the same day, the month added
            return str(int(fact.value[3:])) in self.days and not any(k == "date" for k, _ in self.keys)
        return False
