"""Frontmatter values and times as the status reports them (plain, JSON-ready text), and how many
items each of its lists holds."""

from __future__ import annotations

import datetime as dt

from h0.vault.audit import iso

SHOWN = 10  # a list beside a total holds at most this many ("37 (showing 10)")
# What a listed draft shows for a missing subject or recipient: never an empty "—" or "→ nobody".
NO_SUBJECT = "(no subject)"
NO_RECIPIENT = "no recipient yet (fill in to:)"


def subject_shown(value: object) -> str:
    """A draft's subject as a report names the draft (its file name is a hash): NO_SUBJECT when empty."""
    subject = " ".join((text(value) or "").split())
    return subject or NO_SUBJECT


def iso_epoch(epoch: float | None) -> str | None:
    return iso(dt.datetime.fromtimestamp(epoch, dt.UTC)) if epoch is not None else None


def text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
