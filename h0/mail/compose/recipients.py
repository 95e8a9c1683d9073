"""Who a message goes to, as every report shows it: To, Cc and Bcc by real address, all of them.

A report of a send must never show only a display name (`"ceo@bank.com" <evil@x.com>` is a
message to evil@x.com) nor lose a recipient to a cut line. `recipient_lists` (the typed note
model's one reading, h0.vault.model) turns a draft's frontmatter values or a message's header values
into the real addresses of each field (display names dropped); `shown_address` adds the ASCII (punycode) form beside a domain
written in other scripts, so a look-alike such as `bаnk.com` (Cyrillic а) shows as what it
is; `describe_recipients` is the one-line form the console, `h0 sweep`, `h0 status`, `h0 log`,
the dashboard and the briefing print, every address or, past a limit, "+N more" (their JSON
lists every one).

Who an email is *from* is shown the same way (`shown_sender`): the real address always and
whole, the display name cut to a few words, and a display name that shows another address
(`"ceo@bank.com" <x@evil.example>`) said to be one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from h0.mail.compose.addresses import other_address_in_name
from h0.mail.headers import remove_controls
from h0.printable import printable

# One reading of who a note or a message goes to, the typed note model's (h0.vault.model): a report and
# the send path never disagree on a recipient.
from h0.vault.values import RECIPIENT_FIELDS, named_addresses, recipient_lists

__all__ = ["FIELDS", "count", "describe_recipients", "recipient_lists", "shown_address", "shown_sender"]

FIELDS = RECIPIENT_FIELDS
SENDER_NAME_CHARS = 40  # of a display name; the address is never cut


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


def shown_sender(value: Any, name_limit: int = SENDER_NAME_CHARS) -> str:
    """Who wrote an email, as every report prints it (escaped for a terminal): 'Ann Lee <ann@x.com>'.

    The real address is always shown whole and last-read; a long display name is cut to
    `name_limit` so it cannot push the address off a line or out of a cell; a name that shows an
    address other than the real one reads 'x@evil.example (the name shows ceo@bank.com, another
    address)'; more than one address in From says '+N more'. A value without an address is shown
    as it is (escaped, cut).
    """
    text = " ".join(str(value or "").split())
    pairs = [(name, addr.strip()) for name, addr in named_addresses(remove_controls(text)) if "@" in addr]
    if not pairs:
        return printable(text, name_limit + 60)
    name, address = pairs[0]
    more = f" +{len(pairs) - 1} more" if len(pairs) > 1 else ""
    name = " ".join(name.split())
    other = other_address_in_name(name, address) if name else None
    if other:
        return f"{shown_address(address)} (the name shows {printable(other, 80)}, another address){more}"
    if not name or name.casefold() == address.casefold():
        return shown_address(address) + more
    return f"{printable(name, name_limit)} <{shown_address(address)}>{more}"
