"""A documented subset of Gmail's search syntax, as IMAP SEARCH criteria (RFC 3501 §6.4.4).

The mail tools take Gmail queries whatever the backend; over IMAP these terms work (each may be
negated with a leading `-`, and values with spaces are quoted: `subject:"lunch on friday"`):

    from:X  to:X  cc:X  bcc:X  subject:X     FROM / TO / CC / BCC / SUBJECT (substring)
    is:unread  is:read  is:starred           UNSEEN / SEEN / FLAGGED
    label:X                                  KEYWORD X (the label's keyword: see imap_wire.keyword)
    rfc822msgid:X                            HEADER Message-ID X
    after:T  before:T  newer_than:Nd  older_than:Nd
                                             SINCE / BEFORE (T: epoch seconds or yyyy/mm/dd;
                                             N with d, w, m or y); IMAP compares dates, so epoch
                                             bounds are then applied to INTERNALDATE exactly
    in:inbox  in:sent  in:<folder>           which folder is searched (one; INBOX by default)
    words, "a phrase"                        TEXT (headers and body, case-insensitive)

Anything else — OR, braces, parentheses, has:attachment, in:anywhere, category:, size terms —
is refused with a typed `invalid_request` naming the term, rather than silently searching for
something else.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from h0.errors import InvalidRequest
from h0.mail.providers.imap_wire import INBOX, keyword

SENT = "\\Sent"  # the folder marker for in:sent: the backend finds the real name
_ADDRESS_TERMS = {"from": "FROM", "to": "TO", "cc": "CC", "bcc": "BCC", "subject": "SUBJECT"}
_FLAG_TERMS = {"is:unread": ["UNSEEN"], "is:read": ["SEEN"], "is:starred": ["FLAGGED"]}
_AGE = re.compile(r"([0-9]{1,5})([dwmy])")
_DAYS = {"d": 1, "w": 7, "m": 31, "y": 366}
_OPERATOR = re.compile(r"([A-Za-z_]+):(.*)", re.DOTALL)
SUPPORTED = (
    "from:, to:, cc:, bcc:, subject:, is:unread, is:read, is:starred, label:, rfc822msgid:, after:, "
    "before:, newer_than:, older_than:, in:inbox, in:sent, in:<folder>, words and quoted phrases"
)


@dataclass
class ImapQuery:
    folder: str = INBOX
    criteria: list[Any] = field(default_factory=list)
    after_s: float | None = None  # exact bounds on INTERNALDATE (IMAP SINCE/BEFORE are whole days)
    before_s: float | None = None

    @property
    def search(self) -> list[Any]:
        return self.criteria or ["ALL"]

    @property
    def charset(self) -> str | None:
        return "UTF-8" if any(isinstance(c, str) and not c.isascii() for c in self.criteria) else None

    def admits(self, internal_s: float | None) -> bool:
        if internal_s is None:
            return True
        return (self.after_s is None or internal_s > self.after_s) and (
            self.before_s is None or internal_s < self.before_s
        )


def _refuse(term: str, why: str = "") -> InvalidRequest:
    return InvalidRequest(
        f"The IMAP backend cannot search for {term!r}{why}. It understands: {SUPPORTED}.", field="query", term=term
    )


def _when(value: str, term: str) -> float:
    if value.isdigit():
        return float(value)
    try:
        day = dt.datetime.strptime(value.replace("-", "/"), "%Y/%m/%d").replace(tzinfo=dt.UTC)
    except ValueError:
        raise _refuse(term, " (a date is epoch seconds or yyyy/mm/dd)") from None
    return day.timestamp()


def _day(epoch_s: float) -> dt.date:
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).date()


def parse_query(query: str, *, now_s: float) -> ImapQuery:
    """`query` as IMAP SEARCH criteria and a folder; InvalidRequest for terms outside the subset."""
    try:
        words = shlex.split(query)
    except ValueError:
        raise _refuse(query, " (unbalanced quotes)") from None
    result = ImapQuery()
    folder_set = False
    for word in words:
        negated = word.startswith("-") and len(word) > 1
        term = word[1:] if negated else word
        lowered = term.lower()
        criteria: list[Any]
        if lowered in ("or", "and") or any(c in term for c in "{}()"):
            if lowered == "and" and not negated:
                continue
            raise _refuse(word, " (OR, braces and parentheses are not mapped)")
        if lowered in _FLAG_TERMS:
            criteria = list(_FLAG_TERMS[lowered])
        elif (match := _OPERATOR.fullmatch(term)) is None:
            criteria = ["TEXT", term]
        else:
            name, value = match.group(1).lower(), match.group(2)
            if not value:
                raise _refuse(word, " (the term has no value)")
            if name in _ADDRESS_TERMS:
                criteria = [_ADDRESS_TERMS[name], value]
            elif name == "label":
                criteria = ["KEYWORD", keyword(value)]
            elif name == "rfc822msgid":
                bare = value.strip("<>")
                criteria = ["HEADER", "Message-ID", f"<{bare}>"]
            elif name == "in" and not negated:
                if folder_set:
                    raise _refuse(word, " (one folder at a time)")
                if value.lower() == "anywhere":
                    raise _refuse(word)
                result.folder = INBOX if value.lower() == "inbox" else SENT if value.lower() == "sent" else value
                folder_set = True
                continue
            elif name in ("after", "before", "newer_than", "older_than") and not negated:
                if name in ("after", "before"):
                    bound = _when(value, word)
                else:
                    age = _AGE.fullmatch(value.lower())
                    if age is None:
                        raise _refuse(word, " (an age is a number and d, w, m or y)")
                    bound = now_s - int(age.group(1)) * _DAYS[age.group(2)] * 86400
                if name in ("after", "newer_than"):
                    result.after_s = bound if result.after_s is None else max(result.after_s, bound)
                    result.criteria += ["SINCE", _day(bound)]
                else:
                    result.before_s = bound if result.before_s is None else min(result.before_s, bound)
                    result.criteria += ["BEFORE", _day(bound + 86400)]  # BEFORE excludes its day
                continue
            else:
                raise _refuse(word)
        result.criteria += ["NOT", *criteria] if negated else criteria
    return result
