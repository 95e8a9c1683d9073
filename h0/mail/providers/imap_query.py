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
from dataclasses import dataclass, field
from typing import Any

from h0.mail.compose.mime import bracketed_message_id
from h0.mail.providers.imap_wire import INBOX, keyword
from h0.mail.providers.query_terms import TIME_TERMS, Refuse, TimeBounds, terms

SENT = "\\Sent"  # the folder marker for in:sent: the backend finds the real name
_ADDRESS_TERMS = {"from": "FROM", "to": "TO", "cc": "CC", "bcc": "BCC", "subject": "SUBJECT"}
_FLAG_TERMS = {"is:unread": ["UNSEEN"], "is:read": ["SEEN"], "is:starred": ["FLAGGED"]}
SUPPORTED = (
    "from:, to:, cc:, bcc:, subject:, is:unread, is:read, is:starred, label:, rfc822msgid:, after:, "
    "before:, newer_than:, older_than:, in:inbox, in:sent, in:<folder>, words and quoted phrases"
)


@dataclass
class ImapQuery(TimeBounds):  # the time bounds are exact on INTERNALDATE (IMAP SINCE/BEFORE are whole days)
    folder: str = INBOX
    criteria: list[Any] = field(default_factory=list)

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


_refuse = Refuse("IMAP", SUPPORTED)


def _day(epoch_s: float) -> dt.date:
    return dt.datetime.fromtimestamp(epoch_s, dt.UTC).date()


def parse_query(query: str, *, now_s: float) -> ImapQuery:
    """`query` as IMAP SEARCH criteria and a folder; InvalidRequest for terms outside the subset."""
    result = ImapQuery()
    folder_set = False
    for t in terms(query, _refuse):
        criteria: list[Any]
        if t.term.lower() in _FLAG_TERMS:
            criteria = list(_FLAG_TERMS[t.term.lower()])
        elif t.name is None:
            criteria = ["TEXT", t.term]
        elif t.name in _ADDRESS_TERMS:
            criteria = [_ADDRESS_TERMS[t.name], t.value]
        elif t.name == "label":
            criteria = ["KEYWORD", keyword(t.value)]
        elif t.name == "rfc822msgid":
            criteria = ["HEADER", "Message-ID", bracketed_message_id(t.value)]
        elif t.name == "in" and not t.negated:
            if folder_set or t.value.lower() == "anywhere":
                raise _refuse(t.word, " (one folder at a time)" if folder_set else "")
            lowered = t.value.lower()
            result.folder = INBOX if lowered == "inbox" else SENT if lowered == "sent" else t.value
            folder_set = True
            continue
        elif t.name in TIME_TERMS and not t.negated:
            bound = result.narrow(t, now_s, _refuse)
            if t.name in ("after", "newer_than"):
                result.criteria += ["SINCE", _day(bound)]
            else:
                result.criteria += ["BEFORE", _day(bound + 86400)]  # BEFORE excludes its day
            continue
        else:
            raise _refuse(t.word)
        result.criteria += ["NOT", *criteria] if t.negated else criteria
    return result
