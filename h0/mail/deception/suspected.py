"""A reply to an email triage suspected of an attack (h0.vault.suspicion) is held at send, with the reason.

Triage writes no reply draft to a suspect; a reply the owner (or an agent) writes anyway, answering that
email (`source:`), goes back to Drafts/ held, saying what H0 found — unless the draft says
`send_anyway: true`: the owner checked (for a payment change, by phone) and means it. Only the email the
draft answers is looked at: one small read of a note in Needs_Action/, on the send path.
"""

from __future__ import annotations

from typing import Any

from h0.errors import H0Error, Refusal, refuse
from h0.vault.listing import read_frontmatter
from h0.vault.paths import PathResolver
from h0.vault.suspicion import suspicion_of
from h0.vault.values import inbox_source


def refuse_reply_to_suspect(resolver: PathResolver, rel: str, source: Any) -> None:
    """Hold the draft at `rel` when the email its `source` names is flagged as a suspected attack."""
    path = inbox_source(resolver, source)
    if path is None:
        return
    try:
        frontmatter = read_frontmatter(resolver.root / path, path)
    except (H0Error, OSError):
        return  # gone or unreadable: nothing flagged to hold on (the look-alike check still runs)
    suspicion = suspicion_of(frontmatter)
    if suspicion is None:
        return
    raise refuse(
        Refusal.SUSPECTED_ATTACK,
        {"source": path, "headline": suspicion.headline, "why": suspicion.reason[:300]},
        path=rel,
        source=path,
        kind=suspicion.kind.value,
        resembles=suspicion.resembles,
    )
