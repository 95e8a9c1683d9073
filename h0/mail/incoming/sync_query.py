"""Which new mail GMAIL_QUERY selects, decided from a message's labels where that is possible.

What GMAIL_QUERY means for new mail: new arrivals are matched against it as Gmail would.
Terms that are labels (`in:inbox`, `is:unread`, `is:read`, `is:starred`, `category:…`, with `-`)
are checked on the message's own labels, at no cost; `in:inbox` also narrows the history call
(`labelId=INBOX`). Any other term (`from:`, words, `OR`, …) is left to Gmail: one
`messages.list` for the query restricted to the new messages' dates (`after:`), 5 units, only
when there is new mail. Drafts never count; spam and trash only if the query asks for them.
The label on each ingested message stays the truth: whatever happens to the cursor, a message
carrying it is never returned again.
"""

from __future__ import annotations

import shlex

# Query terms that are labels, checked on a message's label ids (the value: is the label wanted?).
_LABEL_TERMS: dict[str, tuple[str, bool]] = {
    "in:inbox": ("INBOX", True),
    "in:sent": ("SENT", True),
    "in:spam": ("SPAM", True),
    "in:trash": ("TRASH", True),
    "in:drafts": ("DRAFT", True),
    "in:draft": ("DRAFT", True),
    "in:starred": ("STARRED", True),
    "in:important": ("IMPORTANT", True),
    "in:chats": ("CHAT", True),
    "is:unread": ("UNREAD", True),
    "is:read": ("UNREAD", False),
    "is:starred": ("STARRED", True),
    "is:important": ("IMPORTANT", True),
    "category:primary": ("CATEGORY_PERSONAL", True),
    "category:social": ("CATEGORY_SOCIAL", True),
    "category:promotions": ("CATEGORY_PROMOTIONS", True),
    "category:updates": ("CATEGORY_UPDATES", True),
    "category:forums": ("CATEGORY_FORUMS", True),
}
_HIDDEN = {"SPAM", "TRASH"}


def ingest_query(query: str, ingested_label: str) -> str:
    """GMAIL_QUERY without what H0 already ingested."""
    quoted = f'"{ingested_label}"' if " " in ingested_label else ingested_label
    return f"{query} -label:{quoted}".strip()


class QueryFilter:
    """GMAIL_QUERY applied to one message's labels where that is possible (see the module docstring)."""

    def __init__(self, query: str) -> None:
        self.query = query
        try:
            words = shlex.split(query)
        except ValueError:
            words = query.split()
        structured = any(w.upper() in ("OR", "AND") or any(c in w for c in "{}()") for w in words)
        self.terms: list[tuple[str, bool]] | None = None if structured else []
        self.shows_hidden = "in:anywhere" in (w.lower() for w in words)
        for word in words:
            negated = word.startswith("-") and len(word) > 1
            term = _LABEL_TERMS.get((word[1:] if negated else word).lower())
            if term is not None and not negated and term[0] in _HIDDEN:
                self.shows_hidden = True
            if self.terms is None:
                continue
            if term is None:
                if word.lower() != "in:anywhere":
                    self.terms = None  # a term only Gmail can judge
                continue
            label, wanted = term
            self.terms.append((label, wanted != negated))
        self.history_label = "INBOX" if not structured and "in:inbox" in (w.lower() for w in words) else None

    def decide(self, labels: tuple[str, ...] | list[str] | None) -> bool | None:
        """True/False when the labels settle it, None when only Gmail can say."""
        if labels is None:
            return None
        present = set(labels)
        if "DRAFT" in present or (not self.shows_hidden and present & _HIDDEN):
            return False
        if self.terms is None:
            return None
        return all((label in present) == wanted for label, wanted in self.terms)
