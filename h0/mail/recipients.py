"""Who a message goes to, as every report shows it: To, Cc and Bcc by real address, all of them.

A report of a send must never show only a display name (`"ceo@bank.com" <evil@x.com>` is a
message to evil@x.com) nor lose a recipient to a cut line. `recipient_lists` turns a draft's
frontmatter values or a message's header values into the real addresses of each field
(display names dropped); `shown_address` adds the ASCII (punycode) form beside a domain
written in other scripts, so a look-alike such as `bаnk.com` (Cyrillic а) shows as what it
is; `describe_recipients` is the one-line form the console, `h0 sweep`, `h0 status`, `h0 log`,
the dashboard and the briefing print, every address or, past a limit, "+N more" (their JSON
lists every one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from email.utils import getaddresses
from typing import Any

from h0.mail.headers import remove_controls
from h0.printable import printable

FIELDS = ("to", "cc", "bcc")


def recipient_lists(to: Any = None, cc: Any = None, bcc: Any = None) -> dict[str, list[str]]:
    """{"to": [...], "cc": [...], "bcc": [...]}: each recipient's real address, in order, no display name.

    Each value may be a string ("a@x.com, Bo <b@y.org>"), a list of such strings, or None.
    """
    return {field: _addresses(value) for field, value in zip(FIELDS, (to, cc, bcc))}


def _addresses(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    # Split exactly as the send path splits (h0.mail.addresses.parse_recipients), so a report never
    # shows fewer recipients than a message has.
    found: list[str] = []
    for name, addr in getaddresses([remove_controls(str(item)) for item in items if item is not None]):
        address = (addr or name).strip()
        if address:
            found.append(address)
    return found


def shown_address(address: str) -> str:
    """`address`, escaped for printing, with its domain's ASCII form beside it if it is not ASCII."""
    _local, at, domain = address.rpartition("@")
    text = printable(address)
    if at and not domain.isascii():
        try:
            ascii_domain = domain.encode("idna").decode("ascii")
        except UnicodeError:
            ascii_domain = domain.encode("ascii", "backslashreplace").decode("ascii")
        text += f" [{ascii_domain}]"
    return text


def describe_recipients(lists: Mapping[str, Iterable[str]], limit: int | None = None) -> str:
    """'to a@x.com, b@y.org · cc c@z.com · bcc d@w.com'; with `limit`, at most that many addresses in
    all, then '+N more'. Empty fields are left out; no recipient at all is 'nobody'."""
    parts: list[str] = []
    shown = hidden = 0
    for field in FIELDS:
        addresses = list(lists.get(field) or [])
        if not addresses:
            continue
        room = len(addresses) if limit is None else max(0, limit - shown)
        if room:
            parts.append(f"{field} " + ", ".join(shown_address(a) for a in addresses[:room]))
        shown += min(room, len(addresses))
        hidden += len(addresses) - min(room, len(addresses))
    text = " · ".join(parts) or "nobody"
    return f"{text} +{hidden} more" if hidden else text


def count(lists: Mapping[str, Iterable[str]]) -> int:
    return sum(len(list(lists.get(field) or [])) for field in FIELDS)
