"""Inert Markdown for the reports H0 writes into the vault: a stranger's words, links, recipients,
tables and headings with their counts.

Everything that comes from an email or a note (subjects, reasons, names, paths) is escaped
(`md_text`): it cannot break a table, nor become a link, an embed or HTML.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from h0.mail.compose.recipients import count, describe_recipients, shown_sender
from h0.mail.deception.lookalike import shown as shown_domain
from h0.mail.incoming.htmltext import inert_inline
from h0.printable import printable
from h0.report.fields import NO_RECIPIENT, subject_shown
from h0.report.privacy import not_named
from h0.report.text import local_time

DASHBOARD_RECIPIENTS = 20  # per table cell; `h0 status --json` and the audit log hold every one
_LINK_UNSAFE = re.compile(r"[\[\]|#^\\<>`*\x00-\x1f\x7f]|%%")


def md_text(value: object, limit: int = 160) -> str:
    """A stranger's words as one inert line of Markdown: no line break, link, embed, HTML or
    table cell break (`|` is escaped), bare URLs defused so they are not auto-linked."""
    text = "" if value is None else (", ".join(map(str, value)) if isinstance(value, list) else str(value))
    text = printable(" ".join(text.split()), limit)  # what is left of controls and bidi shows escaped
    return inert_inline(text).replace("://", r":\/\/").replace("www.", r"www\.") or "—"


def md_sender(value: object) -> str:
    """Who wrote an email, inert, never cut before its real address (h0.mail.compose.recipients.shown_sender)."""
    text = shown_sender(value)
    return md_text(text, limit=len(text) + 1)


def md_recipients(lists: dict[str, list[str]]) -> str:
    """Every recipient by real address, inert (h0.mail.compose.recipients); past DASHBOARD_RECIPIENTS, "+N more"."""
    if not count(lists):
        return md_text(NO_RECIPIENT)
    text = describe_recipients(lists, limit=DASHBOARD_RECIPIENTS)
    if count(lists) > DASHBOARD_RECIPIENTS:
        text += " (`h0 status --json` lists all)"
    return md_text(text, limit=len(text) + 1)


def md_link(path: object) -> str:
    """A [[wikilink]] to a vault note, or its escaped text when its name could break out of one."""
    text = str(path or "")
    if not text or _LINK_UNSAFE.search(text) or text != text.strip() or printable(text) != text:
        return md_text(text)
    return f"[[{text.removesuffix('.md')}]]"


def md_subject(value: object) -> str:
    """A draft's subject in a table cell or list item; "(no subject)", never an empty "—"."""
    return md_text(subject_shown(value), 80)


def md_draft(item: dict[str, Any]) -> str:
    """A listed draft by its subject and recipients, linked to its note: **Subject** → to ann@x.com ([[…]])."""
    return f"**{md_subject(item.get('subject'))}** → {md_recipients(item.get('recipients') or {})} ({md_link(item['path'])})"


def md_new(item: dict[str, Any]) -> str:
    """' — **first message to** new.example' for a draft to a domain the vault never corresponded with."""
    fresh = item.get("new_domains") or []
    return f" — **first message to** {md_text(', '.join(shown_domain(d) for d in fresh))}" if fresh else ""


def table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    return [f"| {' | '.join(head)} |", "|" + "---|" * len(head)] + [f"| {' | '.join(row)} |" for row in rows]


def heading(title: str, total: int, shown: int) -> str:
    return f"## {title} ({total}, showing {shown})" if total > shown else f"## {title} ({total})"


def more(total: int, shown: int, where: str) -> list[str]:
    # After a blank line: a line right below a table is one more row of it, below a list item part of it.
    return ["", f"*…and {total - shown} more in {where}.*"] if total > shown else []


def md_private(count: int, noun: str) -> list[str]:
    """The line that counts what a list leaves out as private (h0.report.privacy), after a blank line."""
    return ["", f"*{not_named(count, noun)}.*"] if count else []


def none_but_private(empty: str, private: int) -> list[str]:
    """What an empty list says: `empty`, or nothing when it left private items out (md_private counts them)."""
    return [] if private else [empty]


def why_needed(item: dict[str, Any]) -> str:
    reason = md_text(item["reason"], 200)
    if item["decision"] == "urgent":
        draft = f" — reply drafted: {md_link(item['draft'])}" if item.get("draft") else ""
        return f"**urgent**{draft}: {reason}"
    if item["decision"] == "delegate":
        return f"delegate to {md_text(item['delegate_to'], 60)}: {reason}"
    if item["decision"] == "rejected_reply":
        return "you rejected the reply" + (f": {md_link(item['draft'])}" if item.get("draft") else "")
    return f"needs information: {reason}"


COPY_HEAD = ("filed", "copy", "a copy of")


def copy_rows(copies: Sequence[dict[str, Any]]) -> list[tuple[str, ...]]:
    """The copies H0 filed in Done/ instead of sending them (h0.report.approved.copies_filed), a row each under
    COPY_HEAD: when, the copy's note, the sent note it is a copy of."""
    return [
        (
            local_time(c.get("timestamp")),
            md_link(c.get("done_path") or c.get("path")),
            md_link(c.get("copy_of")) + (" (sent)" if c.get("outcome") == "sent" else " (may have been sent)"),
        )
        for c in copies
    ]
