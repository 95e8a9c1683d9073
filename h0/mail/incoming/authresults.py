"""The receiving provider's SPF, DKIM and DMARC verdicts on a message (Authentication-Results, RFC 8601)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from email.message import Message

from h0.mail.headers import remove_controls

AUTH_METHODS = ("spf", "dkim", "dmarc")
_RESULT = re.compile(r"\s*([A-Za-z0-9_.-]+)\s*(?:/\s*\d+\s*)?=\s*([A-Za-z]{1,16})\b")


def authentication_verdicts(headers: Message) -> dict[str, str] | None:
    """{spf, dkim, dmarc: pass|fail|none|softfail|…} from the topmost Authentication-Results header.

    Only the topmost one counts: the receiving provider (Gmail: mx.google.com) adds its own
    on top of what arrived, and any such header further down was written by someone on the
    way — the sender included — and may be forged. Read from the raw value: results carry
    no encoded words, and decoding one could conjure a `; dmarc=pass`. None when there is
    no such header; a method the header does not mention is "none".
    """
    values = [value for name, value in headers.raw_items() if name.lower() == "authentication-results"]
    if not values:
        return None
    return parse_authentication_results(str(values[0]))


def parse_authentication_results(value: str) -> dict[str, str]:
    """The verdicts of one Authentication-Results value; comments and quoted strings ignored.

    With several results for one method (a message with two DKIM signatures), a pass of
    any counts for DKIM; SPF and DMARC take the first.
    """
    text = _without_comments(remove_controls(value))
    _authserv, _, rest = text.partition(";")
    verdicts: dict[str, str] = {}
    for clause in rest.split(";"):
        match = _RESULT.match(clause)
        if match is None:
            continue
        method, result = match.group(1).lower(), match.group(2).lower()
        if method not in AUTH_METHODS:
            continue
        if method not in verdicts or (method == "dkim" and result == "pass"):
            verdicts[method] = result
    return {method: verdicts.get(method, "none") for method in AUTH_METHODS}


def _without_comments(text: str) -> str:
    """`text` with (nested) comments and quoted strings blanked: text in them never counts as a result."""
    out = []
    depth = 0
    quoted = False
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
            continue
        if (quoted or depth) and ch == "\\":
            escaped = True
            continue
        if quoted:
            quoted = ch != '"'
            continue
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif ch == '"' and not depth:
            quoted = True
            out.append("x")
        elif not depth:
            out.append(ch)
    return "".join(out)


def forged_sender(verdicts: Mapping[str, str] | None) -> str | None:
    """Why the receiving provider's verdicts say the From may be forged, or None (no verdicts: unknown, not forged).

    DMARC `fail` is the domain's own owner saying this mail is not theirs. Without a DMARC verdict (a domain
    that publishes no policy), an SPF `fail` — the sending server is not one the domain allows — with no
    DKIM signature that passed says the same. `softfail`, `neutral` and the rest are too common on
    forwarded and list mail to count."""
    if not verdicts:
        return None
    spf, dkim, dmarc = (str(verdicts.get(method) or "none").lower() for method in AUTH_METHODS)
    if dmarc == "fail":
        return "DMARC failed"
    if dmarc != "pass" and spf == "fail" and dkim != "pass":
        return "SPF failed and no DKIM signature passed"
    return None
