"""Filling a reply template (`{greeting}`, `{first_name}`, `{briefing}`, …): the rules engine's drafts and the
safety net's holding reply use the one filler, so neither imports the other."""

from __future__ import annotations

import re
from collections.abc import Callable

from h0.triage.models import EmailInput, ReplyContext

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_EMPTY_LINES = re.compile(r"\n{3,}")  # what an empty {greeting} or {sign_off} line leaves


def first_name(email: EmailInput) -> str:
    """A greeting name: the display name's first word, else 'there'."""
    name = email.sender_name.strip().strip("\"'")
    if "," in name:  # "Rivera, Dana"
        name = name.split(",", 1)[1].strip()
    word = name.split()[0] if name.split() else ""
    return word if word and "@" not in word else "there"


def render(template: str, email: EmailInput, rule: str, matched: str, context: ReplyContext | None = None) -> str:
    """Fill `{placeholders}`; unknown ones stay as written (no str.format: no attribute access).
    `{greeting}` and `{sign_off}` come from the owner's profile and past replies (`context`), and
    `{briefing}` is what the owner's notes say on each question the email asks;
    without one they are empty: H0 has no greeting or sign-off of its own."""
    values: dict[str, Callable[[], str]] = {
        "greeting": lambda: context.greeting if context else "",
        "sign_off": lambda: context.sign_off if context else "",
        "briefing": lambda: context.briefing if context and context.briefing else "[FILL: your answer]",
        "first_name": lambda: first_name(email),
        "sender_name": lambda: email.sender_name or email.sender_address,
        "sender_address": lambda: email.sender_address or "unknown sender",
        "sender_domain": lambda: email.sender_domain,
        "subject": lambda: email.subject or "(no subject)",
        "rule": lambda: rule,
        "matched": lambda: " ".join(matched.split())[:60],
    }
    filled = _PLACEHOLDER.sub(lambda m: values[m.group(1)]() if m.group(1) in values else m.group(0), template)
    return _EMPTY_LINES.sub("\n\n", filled).strip("\n") + ("\n" if template.endswith("\n") else "")
