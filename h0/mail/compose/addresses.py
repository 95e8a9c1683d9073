"""Recipient addresses: parse, validate (email-validator, no DNS), and catch domain typos.

`parse_recipients` is what send_email uses: it accepts a string (comma-separated allowed)
or a list of strings, refuses header injection — a control character in the value or in
what its RFC 2047 encoded words decode to (h0.mail.headers) — and returns
`headerregistry.Address` objects with decoded display names, which the MIME builder
encodes (RFC 2047 for non-ASCII display names, punycode for internationalised domains).

Suspected typos of the big providers' domains (`gmial.com`) are refused, not merely
flagged: a hint returned after the mail went to a typo-squatter's domain protects nobody.
A draft confirms a domain it really means with `confirm_domains: [gmial.com]` in its
frontmatter; a tool caller passes `allow_typo_domains=True`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from email.headerregistry import Address

from email_validator import EmailNotValidError, validate_email

from h0.errors import InvalidRequest
from h0.mail.headers import addresses_shown, check_header_text, decode_fully, hides_control
from h0.vault.values import split_addresses

# Domains people mean, and the misspellings seen most in practice. The table catches the
# famous ones exactly; `_near_miss` catches other one-letter slips of the long names.
POPULAR_DOMAINS = (
    "gmail.com",
    "googlemail.com",
    "hotmail.com",
    "outlook.com",
    "yahoo.com",
    "icloud.com",
    "protonmail.com",
    "proton.me",
    "live.com",
    "aol.com",
)
KNOWN_TYPOS = {
    "gmial.com": "gmail.com",
    "gmai.com": "gmail.com",
    "gmal.com": "gmail.com",
    "gamil.com": "gmail.com",
    "gnail.com": "gmail.com",
    "gmaill.com": "gmail.com",
    "gmail.co": "gmail.com",
    "gmail.con": "gmail.com",
    "gmail.cm": "gmail.com",
    "gmail.om": "gmail.com",
    "gmail.cmo": "gmail.com",
    "gmaik.com": "gmail.com",
    "hotmial.com": "hotmail.com",
    "hotmal.com": "hotmail.com",
    "hotmai.com": "hotmail.com",
    "hotmail.co": "hotmail.com",
    "hotmail.con": "hotmail.com",
    "homail.com": "hotmail.com",
    "outlok.com": "outlook.com",
    "outloo.com": "outlook.com",
    "outlook.co": "outlook.com",
    "outlook.con": "outlook.com",
    "yaho.com": "yahoo.com",
    "yahooo.com": "yahoo.com",
    "yahoo.co": "yahoo.com",
    "yahoo.con": "yahoo.com",
    "yhoo.com": "yahoo.com",
    "iclod.com": "icloud.com",
    "icloud.co": "icloud.com",
    "icoud.com": "icloud.com",
    "protonmial.com": "protonmail.com",
}
_NEAR_MISS_MIN_LEN = 9  # one edit away from "aol.com" is too often a real domain


def has_line_break(text: str) -> bool:
    """True if `text` holds a line break or another control character, itself or once decoded."""
    return hides_control(text)


def refuse_line_breaks(field: str, value: str) -> None:
    """Header injection guard: no CR, LF or other control character in any header value, nor in
    what its RFC 2047 encoded words decode to (h0.mail.headers.check_header_text)."""
    check_header_text(field, value)


def checked_thread_id(thread_id: str, limit: int) -> str:
    """A provider thread id to look up: `thread_id` without surrounding spaces, or InvalidRequest when it is
    empty, holds a line break (or another control character) or is longer than `limit`."""
    root = thread_id.strip()
    if not root:
        raise InvalidRequest("thread_id is empty.", field="thread_id")
    refuse_line_breaks("thread_id", root)
    if len(root) > limit:
        raise InvalidRequest(f"thread_id is longer than {limit} characters.", field="thread_id")
    return root


@dataclass(frozen=True, slots=True)
class Checked:
    """One validated address: `normalized` is the form to use, `suggestion` a typo fix."""

    original: str
    valid: bool
    normalized: str | None = None
    reason: str | None = None
    suggestion: str | None = None


def check_address(text: str) -> Checked:
    """Validate one bare address (no display name) without DNS; suggest a fix for typos."""
    candidate = text.strip()
    if has_line_break(candidate):
        return Checked(text, False, reason="The address contains a line break.")
    try:
        result = validate_email(candidate, check_deliverability=False, allow_smtputf8=True)
    except EmailNotValidError as exc:
        return Checked(text, False, reason=str(exc))
    if result.ascii_email is None:
        # A non-ASCII local part needs SMTPUTF8 end to end; Gmail's API and most relays
        # would bounce it, so say so now rather than after the send.
        return Checked(text, False, reason="Addresses with non-ASCII characters before the @ are not supported.")
    normalized = result.ascii_email
    fixed = suggest_domain(result.ascii_domain)
    if fixed:
        local = normalized.rsplit("@", 1)[0]
        suggestion = f"{local}@{fixed}"
        return Checked(
            text,
            False,
            normalized=normalized,
            suggestion=suggestion,
            reason=f"'{result.ascii_domain}' looks like a typo of '{fixed}' — did you mean {suggestion}?",
        )
    return Checked(text, True, normalized=normalized)


def suggest_domain(domain: str) -> str | None:
    """The popular domain `domain` is probably a misspelling of, or None."""
    domain = domain.lower()
    if domain in POPULAR_DOMAINS:
        return None
    if domain in KNOWN_TYPOS:
        return KNOWN_TYPOS[domain]
    if len(domain) >= _NEAR_MISS_MIN_LEN:
        for popular in POPULAR_DOMAINS:
            if len(popular) >= _NEAR_MISS_MIN_LEN and _one_edit_apart(domain, popular):
                return popular
    return None


def _one_edit_apart(a: str, b: str) -> bool:
    """True if one insertion, deletion, substitution or adjacent swap turns a into b."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        if len(diffs) == 1:
            return True
        return (
            len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]
        )
    shorter, longer = (a, b) if len(a) < len(b) else (b, a)
    for i in range(len(longer)):
        if longer[:i] + longer[i + 1 :] == shorter:
            return True
    return False


def other_address_in_name(display_name: str, address: str) -> str | None:
    """The address a display name shows, if it shows one other than `address` (`"ceo@bank.com" <evil@x.com>`),
    as h0.mail.headers.addresses_shown reads it."""
    real = address.strip().casefold()
    return next((shown for shown in addresses_shown(display_name) if shown != real), None)


def parse_recipients(
    field: str,
    value: str | Iterable[str] | None,
    *,
    allow_typo_domains: bool = False,
    confirmed_domains: Collection[str] = (),
) -> list[Address]:
    """Turn a To/Cc/Bcc argument into validated addresses, or raise InvalidRequest.

    Accepts "a@x.com", "a@x.com, B <b@y.org>" or ["a@x.com", "B <b@y.org>"]. Every problem
    is reported at once (details.problems), so a human fixes the draft in one go. A suspected
    typo domain is let through with `allow_typo_domains` (a tool's argument) or when it is
    among `confirmed_domains` (ASCII, lower case: a draft's `confirm_domains:`).
    """
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str):
            raise InvalidRequest(f"{field} must be a string or a list of strings.", field=field)
        refuse_line_breaks(field, item)
    addresses: list[Address] = []
    problems: list[dict[str, str]] = []
    for name, addr in split_addresses(items):
        checked = check_address(addr or name)
        posing = other_address_in_name(decode_fully(name), checked.normalized or addr) if addr else None
        if posing:
            problems.append(
                {
                    "address": addr,
                    "reason": (
                        f"its display name reads as another address, {posing}, so the recipient's mail would show "
                        f"{posing} while it goes to {addr}; write just the address (or a person's name without an @ "
                        "before it)"
                    ),
                }
            )
            continue
        confirmed = bool(checked.normalized and checked.normalized.rpartition("@")[2].lower() in confirmed_domains)
        if checked.normalized and (checked.valid or allow_typo_domains or confirmed):
            local, _, domain = checked.normalized.rpartition("@")
            # Decoded here, so the builder encodes the real text (and never re-folds a word of the caller's).
            addresses.append(Address(display_name=decode_fully(name).strip(), username=local, domain=domain))
            continue
        problem = {"address": addr or name, "reason": checked.reason or "invalid address"}
        if checked.suggestion:
            problem["suggestion"] = checked.suggestion
        problems.append(problem)
    if problems:
        first = problems[0]
        hint = ""
        if "suggestion" in first:
            domain = first["address"].rpartition("@")[2].strip(" >").lower()
            hint = (
                f" Correct the address in `{field}:`; if {domain} is really meant, add "
                f"`confirm_domains: [{domain}]` to the draft's frontmatter, then approve again."
            )
        elif "display name" in first["reason"]:
            hint = f" Fix it in `{field}:` in the frontmatter, then approve again."
        # The message is for the person reading the draft; an agent calling a tool finds its way out here.
        tool = {"tool_argument": "allow_typo_domains"} if "suggestion" in first else {}
        raise InvalidRequest(
            f"{field}: {first['address']!r} — {first['reason']}{hint}", field=field, problems=problems, **tool
        )
    return addresses
