"""Copies of an approved note are never a second send: a sync tool's copy (docs/synced-vaults.md), an
editor saving a sent note again, the owner approving the same message twice.

The send's key is made of what is sent (`h0.mail.compose.drafts.identity`), never of the file's
name, so a copy has its original's key and the send ledger answers for both: a key already sent (or
whose send's outcome is unknown) for another note, or for this note after it was filed, is a `copy`
(`h0.state.ledger.SendLedger.claim_send`), and so is a note whose very bytes were sent under another key.
What the send path asks besides the key is here:
- `wait_for_original`: a note named like a sync tool's copy (`h0.vault.copies`) waits while a note of
  its original name is in Approved/ too, so that the original is the one sent — whichever a worker
  takes first — and the copy is filed as its copy;
- `refuse_recent_name`: a note that appears in Approved/ without being moved there, under the name (or
  a copy's name of the name) of a draft sent in the last hour but with other content, is held: an
  editor or a sync tool bringing back another version of a message that has gone;
- `copy_of_sent`: the refusal that files a copy in Done/, worded from the ledger's row of the send
  (`original_being_filed` while that send's own note is still being filed: the copy looks again).
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
from collections.abc import Mapping
from typing import Any

from h0.errors import H0Error, Refusal, refuse
from h0.state import StateDB
from h0.vault.copies import original_name
from h0.vault.dates import read_time
from h0.vault.paths import PathResolver

RECENT_SEND_HOLD_S = 3600.0
ORIGINAL_WAIT_S = 1.0  # how often a copy looks again whether its original has gone


def wait_for_original(resolver: PathResolver, rel: str) -> None:
    """Refuse (look again soon) a note named like a sync tool's copy while its original is beside it."""
    folder, name = posixpath.split(rel)
    original = original_name(name)
    if original == name or not os.path.lexists(resolver.root / folder / original):
        return
    raise refuse(
        Refusal.ORIGINAL_WAITING,
        {"name": name, "original": original},
        path=rel,
        original=posixpath.join(folder, original),
        retry_after=ORIGINAL_WAIT_S,
    )


def refuse_recent_name(state: StateDB, rel: str, key: str) -> None:
    """A note that reappears under the name of a draft sent in the last hour without being moved in is an
    editor re-saving it (the human still typing) or a sync tool restoring another version: hold it. The
    same message (same key) is not held here: the ledger says it is a copy, or the original waiting to be
    filed."""
    name = original_name(posixpath.basename(rel))
    for row in state.recently_sent_named(name, RECENT_SEND_HOLD_S):
        if row.get("idempotency_key") == key:
            continue
        raise refuse(Refusal.REAPPEARED_AFTER_SEND, {"name": name}, path=rel, sent_at=row.get("sent_at"))


def original_being_filed(row: Mapping[str, Any], rel: str | None) -> H0Error:
    """The refusal of a copy whose original went moments ago and is not filed yet: look again soon."""
    original = str(row.get("note_path") or row.get("rfc822_message_id"))
    return refuse(
        Refusal.ORIGINAL_WAITING,
        {"name": posixpath.basename(rel or ""), "original": posixpath.basename(original)},
        path=rel,
        original=original,
        retry_after=ORIGINAL_WAIT_S,
    )


def copy_of_sent(row: Mapping[str, Any], **details: Any) -> H0Error:
    """The refusal of a copy of the send in the ledger's `row`: where the original went and when it was sent
    (or that nobody knows whether it went)."""
    original = row.get("filed_path") or row.get("note_path") or row.get("rfc822_message_id")
    if row.get("state") == "sent":
        what = f"already sent on {_shown(row.get('sent_at'), row.get('sent_epoch'))}"
    else:
        what = (
            f"whose send on {_shown(None, row.get('started_at'))} may or may not have gone out (check your Sent folder)"
        )
    return refuse(
        Refusal.COPY_OF_SENT,
        {"what": what, "original": original},
        copy_of=original,
        sent_at=row.get("sent_at"),
        outcome=row.get("state"),
        original_message_id=row.get("rfc822_message_id"),
        **details,
    )


def _shown(stamp: object, epoch: object) -> str:
    """'2026-11-28 10:10 UTC' from an ISO time or an epoch."""
    when = read_time(stamp)
    if when is None and isinstance(epoch, (int, float)):
        when = dt.datetime.fromtimestamp(epoch, dt.UTC)
    return f"{when.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC" if when is not None else "an earlier date"
