"""A suspected attack, as triage wrote it on an email note: the typed reading of its flags (`NoteFacts.suspicion`).

Triage (h0.triage.phishing) decides; the note keeps the decision in four properties, which every reader —
the send path's hold, `h0 status`, the bench — asks through this model instead of reading them:

    suspected_phishing: true
    phishing_kind: lookalike | display_name | spoofed | credentials | payment_change
    phishing_reason: the sentence the owner reads
    resembles: the domain the sender passes for (absent when it imitates nobody the owner knows)

`payment_change` is the one kind that is not about who wrote: a request to pay to new bank details, an
urgent transfer or gift cards, from anyone — a real correspondent's own (perhaps compromised) account
included. The owner is told to confirm it by phone, never that the person is an impostor; and only a reply
to that very email is held at send, not every message to that person.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["AttackKind", "Suspicion", "suspicion_of"]

MAX_TEXT = 1_000
_TRUE = frozenset({"true", "yes", "y", "1", "on"})


class AttackKind(StrEnum):
    LOOKALIKE = "lookalike"  # the sender's domain passes for one the owner knows
    DISPLAY_NAME = "display_name"  # a name (or address) the owner knows, on a stranger's address
    SPOOFED = "spoofed"  # a known domain whose DMARC/SPF check failed: the From is forged
    CREDENTIALS = "credentials"  # asks to log in or confirm details, linking elsewhere or forged
    PAYMENT_CHANGE = "payment_change"  # new bank details, an urgent transfer, gift cards
    UNKNOWN = "unknown"  # flagged, with a kind this version does not know (a hand edit, an older H0)


class Suspicion(BaseModel):
    """Why an email is suspected, and whom it passes for."""

    model_config = ConfigDict(frozen=True)

    kind: AttackKind
    reason: str
    resembles: str | None = None

    @property
    def headline(self) -> str:
        """What `h0 status` and the note's `problem:` say first."""
        if self.kind is AttackKind.PAYMENT_CHANGE:
            return "payment-detail change: confirm by phone"
        return f"suspected phishing (resembles {self.resembles})" if self.resembles else "suspected phishing"

    @property
    def problem(self) -> str:
        return f"{self.headline}: {self.reason}"

    def frontmatter(self) -> dict[str, Any]:
        """The properties triage writes on the email note (with `problem:`, which the reports show)."""
        fields: dict[str, Any] = {
            "suspected_phishing": True,
            "phishing_kind": self.kind.value,
            "phishing_reason": self.reason,
            "problem": self.problem,
        }
        if self.resembles:
            fields["resembles"] = self.resembles
        return fields


def suspicion_of(frontmatter: Mapping[str, Any]) -> Suspicion | None:
    """The note's suspicion, or None when `suspected_phishing:` is not a yes. Never raises."""
    flag = frontmatter.get("suspected_phishing")
    if not (flag is True or (isinstance(flag, str) and flag.strip().casefold() in _TRUE)):
        return None
    kind_word = frontmatter.get("phishing_kind")
    try:
        kind = AttackKind(kind_word.strip().casefold()) if isinstance(kind_word, str) else AttackKind.UNKNOWN
    except ValueError:
        kind = AttackKind.UNKNOWN
    reason = _text(frontmatter.get("phishing_reason"))
    return Suspicion(kind=kind, reason=reason, resembles=_text(frontmatter.get("resembles")) or None)


def _text(value: Any) -> str:
    if value is None or isinstance(value, (bool, dict, list)):
        return ""
    return " ".join(str(value).split())[:MAX_TEXT]
