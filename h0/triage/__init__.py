"""Triage: decide what H0 does with each email, by the vault's rules file."""

from __future__ import annotations

from h0.triage.default_rules import DEFAULT_RULES_TEXT, RULES_FILENAME
from h0.triage.models import DECISIONS, Decision, EmailInput, TriageDecision, TriageOutcome
from h0.triage.rules import RulesEngine
from h0.triage.rulesfile import ensure_rules_file, rules_path
from h0.triage.safety import DRAFT_MARKER

__all__ = [
    "DECISIONS",
    "DEFAULT_RULES_TEXT",
    "DRAFT_MARKER",
    "RULES_FILENAME",
    "Decision",
    "EmailInput",
    "RulesEngine",
    "TriageDecision",
    "TriageOutcome",
    "ensure_rules_file",
    "rules_path",
]
