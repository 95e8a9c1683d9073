"""A documented subset of Gmail's search syntax, as a Microsoft Graph message listing ($filter or $search).

The mail tools take Gmail queries whatever the backend; with Outlook these terms work:

    in:inbox in:sent in:drafts in:spam in:trash in:archive in:<folder>
                                     the folder listed (one; every folder by default)
    is:unread  is:read  is:starred   isRead eq false / true, flag/flagStatus eq 'flagged'
    label:X                          categories/any(c:c eq 'X')   (a label is a category)
    -label:X                         left out by H0 from what Graph lists (Graph's $filter has no `not any`)
    from:ADDRESS  to:ADDRESS         from/emailAddress/address eq …, toRecipients/any(…)
    subject:X                        contains(subject, 'X')
    rfc822msgid:X                    internetMessageId eq '<X>'
    has:attachment                   hasAttachments eq true
    after:T  before:T  newer_than:Nd  older_than:Nd
                                     receivedDateTime ge / lt (T: epoch seconds or yyyy/mm/dd)
    words, "a phrase"                $search (alone: Graph does not combine $search with $filter)

Anything else — OR, braces, cc:, category:, other negations, words mixed with filters — is refused with a
typed `invalid_request` naming the term, rather than silently listing something else. Filtered listings
are ordered by receivedDateTime, newest first, which Graph allows only when the filter starts with that
property: every filter here does (`receivedDateTime ge …` first, 1900 when no date was asked).
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from dataclasses import dataclass, field

from h0.errors import InvalidRequest
from h0.mail.providers.outlook_wire import FOLDER_NAMES, graph_time, odata_text

_AGE = re.compile(r"([0-9]{1,5})([dwmy])")
_DAYS = {"d": 1, "w": 7, "m": 31, "y": 366}
_OPERATOR = re.compile(r"([A-Za-z_]+):(.*)", re.DOTALL)
_FLAGS = {
    "is:unread": "isRead eq false",
    "is:read": "isRead eq true",
    "is:starred": "flag/flagStatus eq 'flagged'",
    "has:attachment": "hasAttachments eq true",
}
_NEGATED_FLAGS = {"is:unread": "is:read", "is:read": "is:unread"}
SUPPORTED = (
    "in:<folder>, is:unread, is:read, is:starred, label:, -label:, from:, to:, subject:, rfc822msgid:, "
    "has:attachment, after:, before:, newer_than:, older_than:, or words alone"
)


@dataclass
class GraphQuery:
    folder: str | None = None  # a well-known folder name or a folder's display name; None: every folder
    filters: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    exclude: set[str] = field(default_factory=set)  # categories left out (compared case-insensitively)
    after_s: float | None = None
    before_s: float | None = None

    def params(self, fields: str, top: int) -> dict[str, str]:
        """The listing's query parameters."""
        params = {"$select": fields, "$top": str(top)}
        if self.words:
            params["$search"] = '"' + " ".join(self.words).replace('"', "") + '"'
            return params
        clauses = [f"receivedDateTime ge {graph_time(self.after_s or 0.0)}"]
        if self.before_s is not None:
            clauses.append(f"receivedDateTime lt {graph_time(self.before_s)}")
        params["$filter"] = " and ".join(clauses + self.filters)
        params["$orderby"] = "receivedDateTime desc"
        return params

    def admits(self, categories: list[str]) -> bool:
        return not self.exclude.intersection(c.casefold() for c in categories)


def _refuse(term: str, why: str = "") -> InvalidRequest:
    return InvalidRequest(
        f"The Outlook backend cannot search for {term!r}{why}. It understands: {SUPPORTED}.", field="query", term=term
    )


def _when(value: str, term: str) -> float:
    if value.isdigit():
        return float(value)
    try:
        day = dt.datetime.strptime(value.replace("-", "/"), "%Y/%m/%d").replace(tzinfo=dt.UTC)
    except ValueError:
        raise _refuse(term, " (a date is epoch seconds or yyyy/mm/dd)") from None
    return day.timestamp()


def _address(value: str, word: str) -> str:
    if "@" not in value or any(c.isspace() for c in value):
        raise _refuse(word, " (Graph filters on a whole address)")
    return value.lower()


def parse_query(query: str, *, now_s: float) -> GraphQuery:
    """`query` as a Graph listing; InvalidRequest for terms outside the subset."""
    try:
        words = shlex.split(query)
    except ValueError:
        raise _refuse(query, " (unbalanced quotes)") from None
    result = GraphQuery()
    for word in words:
        negated = word.startswith("-") and len(word) > 1
        term = word[1:] if negated else word
        lowered = term.lower()
        if lowered in ("or", "and") or any(c in term for c in "{}()"):
            if lowered == "and" and not negated:
                continue
            raise _refuse(word, " (OR, braces and parentheses are not mapped)")
        if lowered in _FLAGS:
            if negated and lowered not in _NEGATED_FLAGS:
                raise _refuse(word)
            result.filters.append(_FLAGS[_NEGATED_FLAGS[lowered] if negated else lowered])
            continue
        match = _OPERATOR.fullmatch(term)
        if match is None:
            if negated:
                raise _refuse(word)
            result.words.append(term)
            continue
        name, value = match.group(1).lower(), match.group(2)
        if not value:
            raise _refuse(word, " (the term has no value)")
        if name == "label" and negated:
            result.exclude.add(value.casefold())
        elif negated:
            raise _refuse(word, " (only label: and is: can be negated)")
        elif name == "label":
            result.filters.append(f"categories/any(c:c eq {odata_text(value)})")
        elif name == "in":
            if result.folder is not None or value.lower() == "anywhere":
                raise _refuse(word, " (one folder at a time)")
            result.folder = FOLDER_NAMES.get(value.lower(), value)
        elif name == "from":
            result.filters.append(f"from/emailAddress/address eq {odata_text(_address(value, word))}")
        elif name == "to":
            result.filters.append(f"toRecipients/any(r:r/emailAddress/address eq {odata_text(_address(value, word))})")
        elif name == "subject":
            result.filters.append(f"contains(subject,{odata_text(value)})")
        elif name == "rfc822msgid":
            result.filters.append(f"internetMessageId eq {odata_text('<' + value.strip('<>') + '>')}")
        elif name in ("after", "before", "newer_than", "older_than"):
            if name in ("after", "before"):
                bound = _when(value, word)
            else:
                age = _AGE.fullmatch(value.lower())
                if age is None:
                    raise _refuse(word, " (an age is a number and d, w, m or y)")
                bound = now_s - int(age.group(1)) * _DAYS[age.group(2)] * 86400
            if name in ("after", "newer_than"):
                result.after_s = bound if result.after_s is None else max(result.after_s, bound)
            else:
                result.before_s = bound if result.before_s is None else min(result.before_s, bound)
        else:
            raise _refuse(word)
    if result.words and (result.filters or result.after_s is not None or result.before_s is not None):
        raise _refuse(query, " (Graph searches words alone: without other terms but in:)")
    return result
