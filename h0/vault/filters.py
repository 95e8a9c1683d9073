"""Frontmatter filters for listing notes: `field:value`, and a note matching any of several."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from h0.errors import InvalidRequest
from h0.vault.model import WORD_FIELDS
from h0.vault.values import word


@dataclass(frozen=True, slots=True)
class Filter:
    """`field:value` — scalar equality, or membership when the field is a list.

    A field the typed model reads as a word (h0.vault.model's `WORD_FIELDS`: `status`, `type`, `decision`,
    `priority`, `follow_up`, `awaiting`) compares as the model does, trimmed and case-folded:
    `status:needs_info` lists a note whose `status:` is `Needs_Info`, the note the sweep and the reports
    also call needs_info.
    """

    field: str
    value: str

    @classmethod
    def parse(cls, text: str | None) -> Filter | None:
        if text is None or not text.strip():
            return None
        name, sep, value = text.partition(":")
        if not sep or not name.strip():
            raise InvalidRequest("A filter looks like 'field:value', e.g. 'status:pending'.", filter=text)
        return cls(name.strip(), value.strip())

    def matches(self, data: Mapping[str, Any]) -> bool:
        if self.field not in data:
            return False
        return self._value_matches(data[self.field])

    @property
    def is_word(self) -> bool:
        """Compared as the typed model compares it (trimmed, case-folded)."""
        return self.field in WORD_FIELDS

    def needle(self) -> bytes | None:
        """Bytes every matching note's marshalled frontmatter contains, when there are such (for a
        word field: in some letter case, ASCII only — a bytes pattern folds no other letters)."""
        if _NOT_TEXT_ONLY.match(self.value) or (self.is_word and not self.value.isascii()):
            return None
        return self.value.encode("utf-8")

    def _value_matches(self, value: Any) -> bool:
        items = value if isinstance(value, (list, tuple)) else (value,)
        wanted = _key(self.field, self.value)
        return any(_key(self.field, _scalar_text(item)) == wanted for item in items)


# A value that can match only a string of the same text: then the filter value's bytes must
# occur in the note's marshalled frontmatter, a test much cheaper than unmarshalling it.
_NOT_TEXT_ONLY = re.compile(r"^(|true|false|null|~|[-+]?[0-9][0-9_.eE+-]*|[-+]?\.?(inf|nan))$", re.IGNORECASE)


MAX_FILTERS = 500


@dataclass(frozen=True, slots=True)
class AnyOf:
    """One or more `Filter`s; a note matches when any of them does."""

    filters: tuple[Filter, ...]
    # The wanted values by field: a note is tested with one set look-up a field, not once a filter
    # (a thread look-up for a batch of 500 emails asks for 500 thread_ids).
    by_field: dict[str, frozenset[str | None]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values: dict[str, set[str | None]] = {}
        for one in self.filters:
            values.setdefault(one.field, set()).add(_key(one.field, one.value))
        object.__setattr__(self, "by_field", {name: frozenset(wanted) for name, wanted in values.items()})

    @classmethod
    def parse(cls, text: str | Sequence[str] | None) -> AnyOf | None:
        texts = [text] if text is None or isinstance(text, str) else list(text)
        if len(texts) > MAX_FILTERS:
            raise InvalidRequest(f"At most {MAX_FILTERS} filters at once.", filters=len(texts))
        filters = []
        for item in texts:
            if item is not None and not isinstance(item, str):
                raise InvalidRequest("A filter is a string 'field:value'.", filter=repr(item)[:200])
            parsed = Filter.parse(item)
            if parsed is not None:
                filters.append(parsed)
        return cls(tuple(filters)) if filters else None

    def matches(self, data: Mapping[str, Any]) -> bool:
        for name, wanted in self.by_field.items():
            if name not in data:
                continue
            value = data[name]
            items = value if isinstance(value, (list, tuple)) else (value,)
            if any(_key(name, _scalar_text(item)) in wanted for item in items):
                return True
        return False

    def needle(self) -> re.Pattern[bytes] | None:
        """A pattern every matching note's marshalled frontmatter contains, when there is one:
        one regular-expression scan tests 200 values at once (a substring test per value
        costs 50x more)."""
        needles = [f.needle() for f in self.filters]
        found = [n for n in needles if n is not None]
        if len(found) < len(needles):
            return None
        pattern = b"|".join(re.escape(n) for n in sorted(set(found), key=len, reverse=True))
        # A wider net for the others is harmless: `matches` decides; the needle only skips notes.
        return re.compile(pattern, re.IGNORECASE if any(f.is_word for f in self.filters) else 0)


def _key(name: str, text: str | None) -> str | None:
    """What a value is compared as: a word field's value as the typed model reads it (`Filter.is_word`)."""
    return word(text) if text is not None and name in WORD_FIELDS else text


def _scalar_text(value: Any) -> str | None:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None
