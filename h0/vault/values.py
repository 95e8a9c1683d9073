"""How one frontmatter value is read: a yes/no flag, a word, a line of text, an identifier, a count,
addresses, a link to a note — one reader each, which the note model (h0.vault.model) and every other
reader of a note use, so two parts of H0 never read the same value two ways.

Every value is anyone's text (the owner in Obsidian, an agent through MCP, a stranger's email copied
by ingest): each reader takes whatever YAML gave — a string, a number, a list, a mapping, None — and
never raises; what is not a value of its kind reads as absent.
"""

from __future__ import annotations

import os
import re
from email.utils import getaddresses
from typing import Any

from h0.errors import H0Error
from h0.vault.layout import NEEDS_ACTION
from h0.vault.paths import PathResolver, link_key

__all__ = [
    "ADDRESS",
    "MAX_ID",
    "RECIPIENT_FIELDS",
    "addresses",
    "clean",
    "count",
    "flag",
    "identifier",
    "inbox_source",
    "line",
    "listed",
    "named_addresses",
    "recipient_lists",
    "source_key",
    "source_path",
    "split_addresses",
    "texts",
    "word",
]

MAX_ID = 998  # an identifier longer than a header line is not one
RECIPIENT_FIELDS = ("to", "cc", "bcc")
# Line-like controls become a space (two addresses stay two), every other control goes.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1b\x7f-\x9f]")
_LINE_LIKE = re.compile(r"[\t\n\v\f\r\x1c-\x1f\x85\u2028\u2029]")
_TRUE = frozenset({"true", "yes", "y", "1", "on"})
# The two shapes nearly every address field has, read without the full parser (~10x cheaper): a bare
# address, and a plain name before an <address>. Anything else goes through email.utils.getaddresses.
_BARE = re.compile(r"[^\s\"<>,;:()\\\[\]@]+@[^\s\"<>,;:()\\\[\]@]+")
_NAMED = re.compile(r"([\w' -]*)<([^\s\"<>,;:()\\\[\]@]+@[^\s\"<>,;:()\\\[\]@]+)>\s*")


# An address written in text (a People note's `email:`, a note's body): the one pattern of the vault.
ADDRESS = re.compile(
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+"
)


def flag(value: Any) -> bool:
    """A yes/no property: true, yes, y, 1 or on (any case) is yes; anything else is no."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value == 1
    return isinstance(value, str) and value.strip().casefold() in _TRUE


def word(value: Any) -> str:
    """A word property (`status`, `type`, …) as H0 compares it: trimmed and case-folded; "" when not text."""
    return value.strip().casefold() if isinstance(value, str) else ""


def clean(value: Any) -> str:
    """A scalar's text with line breaks as spaces and every other control character removed ("" for a
    list, a mapping, a boolean or None)."""
    if value is None or isinstance(value, (bool, dict, list)):
        return ""
    return _CONTROLS.sub("", _LINE_LIKE.sub(" ", str(value)))


def line(value: Any, limit: int = MAX_ID) -> str:
    """A one-line text property, trimmed and cut to `limit` characters ("" when absent or not a scalar)."""
    return clean(value).strip()[:limit]


def identifier(value: Any) -> str | None:
    """An identifier property (`thread_id`, `message_id`, …) as clean text; None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = clean(value).strip()
    return text[:MAX_ID] if text else None


def count(value: Any) -> int:
    """A count H0 keeps on a note (`revisions`, `h0_model_attempts`): a whole number ≥ 0, else 0."""
    if isinstance(value, bool):
        return 0
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def listed(value: Any) -> list[Any]:
    """A property that may be one value or a list of them, as a list (None, a boolean, a mapping: empty)."""
    if isinstance(value, list):
        return value
    return [] if value is None or value == "" or isinstance(value, (bool, dict)) else [value]


def texts(value: Any, limit: int = 20) -> tuple[str, ...]:
    """The text items of a one-or-many property (`aliases`, `labels`), each one line, at most `limit`."""
    return tuple(t for t in (line(v) for v in listed(value) if isinstance(v, (str, int, float))) if t)[:limit]


def named_addresses(value: Any) -> list[tuple[str, str]]:
    """(display name as written, real address) for each address a header-like value names, in order.

    The one address parser of a note's values: a string ("a@x.com, Bo <b@y.org>"), a list of such strings,
    or None; each item's controls are cleaned first, then `split_addresses` reads them."""
    if value is None or value == "" or isinstance(value, (bool, dict)):
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    return split_addresses(
        [clean(item) for item in items if item is not None and not isinstance(item, (bool, dict, list))]
    )


def split_addresses(written: list[str]) -> list[tuple[str, str]]:
    """(display name, real address) for each address in these address-list texts, in order; a name
    without an address is read as the address (`("", "name")`), an empty entry is dropped.

    The one way H0 splits an address list, whatever it came from: a note's values (`named_addresses`),
    a mail header once cleaned (h0.mail.headers.header_addresses), the settings' addresses, a draft's
    recipients on the send path (h0.mail.compose.addresses.parse_recipients), so a report never shows
    fewer recipients than a message has."""
    if len(written) == 1:
        text = written[0].strip()
        if _BARE.fullmatch(text):
            return [("", text)]
        if named := _NAMED.fullmatch(text):
            return [(named.group(1).strip(), named.group(2))]
    found: list[tuple[str, str]] = []
    for name, addr in getaddresses(written):
        address = (addr or name).strip()
        if address:
            found.append((name.strip() if addr else "", address))
    return found


def addresses(value: Any) -> list[str]:
    """The real addresses a header-like value names, in order (display names dropped): `named_addresses`."""
    return [address for _, address in named_addresses(value)]


def recipient_lists(to: Any = None, cc: Any = None, bcc: Any = None) -> dict[str, list[str]]:
    """{"to": [...], "cc": [...], "bcc": [...]}: each recipient's real address, in order, no display name."""
    return {field: addresses(value) for field, value in zip(RECIPIENT_FIELDS, (to, cc, bcc))}


def source_path(value: Any) -> str | None:
    """The vault path a `source:` names: a path, or a [[wikilink]] with or without folder, `|alias`,
    `#heading` or `.md` (a bare name is a note in Needs_Action/). Only text: confinement is the
    reader's (`inbox_source` resolves it on disk). An unquoted `source: [[EMAIL_1]]`,
    which YAML reads as a list in a list, is the link it looks like."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list) and len(value[0]) == 1:
        value = f"[[{value[0][0]}]]" if isinstance(value[0][0], str) else None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
        if not text:
            return None
        if "/" not in text:
            text = f"{NEEDS_ACTION}/{text}"
        if not text.lower().endswith(".md"):
            text += ".md"
    return text.replace("\\", "/")


def source_key(value: Any) -> str | None:
    """How `source:` values are compared: `[[EMAIL_1]]` and `Needs_Action/EMAIL_1.md` are one email."""
    path = source_path(value)
    return link_key(path) if path else None


def inbox_source(paths: PathResolver, value: Any) -> str | None:
    """The email note a draft answers, as a path confined to Needs_Action/ (None otherwise).

    `source:` is written by triage but editable by anyone: it must resolve — `..`, symlinks and all —
    to a note directly in Needs_Action/, so it can never file or mark another note (the rules file, a
    draft). The daemon's handlers and the mail server's filing both ask this."""
    text = source_path(value)
    if text is None:
        return None
    try:
        target = paths.resolve(text, note=True)
    except H0Error:
        return None
    parts = target.rel.split("/")
    if len(parts) != 2 or parts[0] != NEEDS_ACTION or os.path.islink(target.abs):
        return None
    try:
        if not os.path.samefile(target.abs.parent, paths.root / NEEDS_ACTION):
            return None
    except OSError:
        return None
    return target.rel
