"""A Gmail search query's terms as every other backend reads them: split one way (quotes, a leading `-`,
`name:value`, OR and braces refused), and its time terms (after:, before:, newer_than:, older_than:) as
epoch bounds. The IMAP and Outlook backends map the terms (h0.mail.providers.imap_query, outlook_query)."""

from __future__ import annotations

import datetime as dt
import re
import shlex
from dataclasses import dataclass

from h0.errors import InvalidRequest

__all__ = ["TIME_TERMS", "Refuse", "Term", "TimeBounds", "terms"]

TIME_TERMS = frozenset({"after", "before", "newer_than", "older_than"})
_AGE = re.compile(r"([0-9]{1,5})([dwmy])")
_DAYS = {"d": 1, "w": 7, "m": 31, "y": 366}
_OPERATOR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(.*)", re.DOTALL)  # rfc822msgid: has digits; 10:30 is a word


@dataclass(frozen=True)
class Refuse:
    """How a backend refuses a term it does not map: an InvalidRequest naming the term and what it understands."""

    backend: str
    supported: str

    def __call__(self, term: str, why: str = "") -> InvalidRequest:
        words = f"The {self.backend} backend cannot search for {term!r}{why}. It understands: {self.supported}."
        return InvalidRequest(words, field="query", term=term)


@dataclass(frozen=True)
class Term:
    word: str  # as written, its `-` included
    term: str  # without the `-`
    negated: bool
    name: str | None  # an operator's name, lower-case (`from` of `from:x`); None for a word
    value: str  # an operator's value; the word itself otherwise


def terms(query: str, refuse: Refuse) -> list[Term]:
    """The query's terms in order; `refuse(term, why)` for unbalanced quotes, OR, braces, parentheses and
    an operator without a value (a lone AND is dropped: terms are ANDed anyway)."""
    try:
        words = shlex.split(query)
    except ValueError:
        raise refuse(query, " (unbalanced quotes)") from None
    found = []
    for word in words:
        negated = word.startswith("-") and len(word) > 1
        term = word[1:] if negated else word
        if term.lower() in ("or", "and") or any(c in term for c in "{}()"):
            if term.lower() == "and" and not negated:
                continue
            raise refuse(word, " (OR, braces and parentheses are not mapped)")
        match = _OPERATOR.fullmatch(term)
        if match is None:
            found.append(Term(word, term, negated, None, term))
            continue
        if not match.group(2):
            raise refuse(word, " (the term has no value)")
        found.append(Term(word, term, negated, match.group(1).lower(), match.group(2)))
    return found


@dataclass
class TimeBounds:
    after_s: float | None = None
    before_s: float | None = None

    def narrow(self, term: Term, now_s: float, refuse: Refuse) -> float:
        """Narrow the bounds by a time term (T: epoch seconds or yyyy/mm/dd, an age: N with d, w, m or y);
        the term's bound, in epoch seconds."""
        if term.name in ("after", "before"):
            bound = _when(term, refuse)
        else:
            age = _AGE.fullmatch(term.value.lower())
            if age is None:
                raise refuse(term.word, " (an age is a number and d, w, m or y)")
            bound = now_s - int(age.group(1)) * _DAYS[age.group(2)] * 86400
        if term.name in ("after", "newer_than"):
            self.after_s = bound if self.after_s is None else max(self.after_s, bound)
        else:
            self.before_s = bound if self.before_s is None else min(self.before_s, bound)
        return bound


def _when(term: Term, refuse: Refuse) -> float:
    if term.value.isdigit():
        return float(term.value)
    try:
        day = dt.datetime.strptime(term.value.replace("-", "/"), "%Y/%m/%d").replace(tzinfo=dt.UTC)
    except ValueError:
        raise refuse(term.word, " (a date is epoch seconds or yyyy/mm/dd)") from None
    return day.timestamp()
