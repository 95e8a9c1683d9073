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

from dataclasses import dataclass, field

from h0.mail.compose.mime import bracketed_message_id
from h0.mail.providers.outlook_wire import FOLDER_NAMES, graph_time, odata_text
from h0.mail.providers.query_terms import TIME_TERMS, Refuse, TimeBounds, terms

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
class GraphQuery(TimeBounds):
    folder: str | None = None  # a well-known folder name or a folder's display name; None: every folder
    filters: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    exclude: set[str] = field(default_factory=set)  # categories left out (compared case-insensitively)

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


_refuse = Refuse("Outlook", SUPPORTED)


def _address(value: str, word: str) -> str:
    if "@" not in value or any(c.isspace() for c in value):
        raise _refuse(word, " (Graph filters on a whole address)")
    return value.lower()


def parse_query(query: str, *, now_s: float) -> GraphQuery:
    """`query` as a Graph listing; InvalidRequest for terms outside the subset."""
    result = GraphQuery()
    for t in terms(query, _refuse):
        lowered = t.term.lower()
        if lowered in _FLAGS:
            if t.negated and lowered not in _NEGATED_FLAGS:
                raise _refuse(t.word)
            result.filters.append(_FLAGS[_NEGATED_FLAGS[lowered] if t.negated else lowered])
        elif t.name is None:
            if t.negated:
                raise _refuse(t.word)
            result.words.append(t.term)
        elif t.name == "label" and t.negated:
            result.exclude.add(t.value.casefold())
        elif t.negated:
            raise _refuse(t.word, " (only label: and is: can be negated)")
        elif t.name == "label":
            result.filters.append(f"categories/any(c:c eq {odata_text(t.value)})")
        elif t.name == "in":
            if result.folder is not None or t.value.lower() == "anywhere":
                raise _refuse(t.word, " (one folder at a time)")
            result.folder = FOLDER_NAMES.get(t.value.lower(), t.value)
        elif t.name == "from":
            result.filters.append(f"from/emailAddress/address eq {odata_text(_address(t.value, t.word))}")
        elif t.name == "to":
            address = odata_text(_address(t.value, t.word))
            result.filters.append(f"toRecipients/any(r:r/emailAddress/address eq {address})")
        elif t.name == "subject":
            result.filters.append(f"contains(subject,{odata_text(t.value)})")
        elif t.name == "rfc822msgid":
            result.filters.append(f"internetMessageId eq {odata_text(bracketed_message_id(t.value))}")
        elif t.name in TIME_TERMS:
            result.narrow(t, now_s, _refuse)
        else:
            raise _refuse(t.word)
    if result.words and (result.filters or result.after_s is not None or result.before_s is not None):
        raise _refuse(query, " (Graph searches words alone: without other terms but in:)")
    return result
