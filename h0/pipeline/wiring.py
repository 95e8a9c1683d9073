"""Where signals meet handlers: every receiver connected in one visible place.

Receivers are connected with `weak=False`: blinker holds receivers weakly by default, and
a handler that silently vanished would mean approved drafts that are never sent.
"""

from __future__ import annotations

from typing import Any

from h0.handlers.context import HandlerContext, Outcome
from h0.handlers.reject import archive_rejected
from h0.handlers.send import send_approved_draft
from h0.pipeline import signals

_connected = False


def _on_approved(sender: Any, *, path: str, ctx: HandlerContext) -> Outcome:
    return send_approved_draft(path, ctx)


def _on_rejected(sender: Any, *, path: str, ctx: HandlerContext) -> Outcome:
    return archive_rejected(path, ctx)


def _on_needs_action(sender: Any, *, paths: list[str], ctx: HandlerContext) -> dict[str, Outcome | Exception]:
    if ctx.triager is None:
        return {path: Outcome("skipped", "triage is off") for path in paths}
    from h0.handlers.triage import triage_emails

    return triage_emails(paths, ctx)


def _on_revision(sender: Any, *, path: str, ctx: HandlerContext) -> Outcome:
    from h0.handlers.revise import revise_draft

    return revise_draft(path, ctx)


def _on_filed(sender: Any, *, path: str, ctx: HandlerContext) -> Outcome:
    from h0.handlers.learn import learn_from_drafts

    return learn_from_drafts(ctx)


def connect_handlers() -> None:
    """Connect the trigger signals to their handlers (idempotent)."""
    global _connected
    if _connected:
        return
    signals.note_approved.connect(_on_approved, weak=False)
    signals.note_rejected.connect(_on_rejected, weak=False)
    signals.notes_need_action.connect(_on_needs_action, weak=False)
    signals.draft_revision_requested.connect(_on_revision, weak=False)
    signals.drafts_filed.connect(_on_filed, weak=False)
    _connected = True
