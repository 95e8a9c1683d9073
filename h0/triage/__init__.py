"""Triage: decide what H0 does with each email — by the vault's rules file or an LLM.

The triage handler builds one `Triager` per process and calls `triage()` from its worker
threads:

    triager = Triager.from_settings(settings, vault_root)
    outcome = triager.triage(EmailInput.from_note(note.facts, note.body))

A Triager never raises for an email: a broken rules file, an unreachable model or a
nonsensical answer all end in a decision (from the rules engine, `fallback=True`) plus the
problem in `fallback_reason` / `warnings`. Only construction fails, with a ValueError a
person can act on (an unknown LLM_PROVIDER, a missing key or model).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Self

from loguru import logger

from h0.config import load_settings
from h0.triage.default_rules import DEFAULT_RULES_TEXT, RULES_FILENAME
from h0.triage.llm import LLMTriage
from h0.triage.models import DECISIONS, Decision, EmailInput, OwnerNote, ReplyContext, TriageDecision, TriageOutcome
from h0.triage.providers import RULES, build_provider, canonical_name
from h0.triage.rules import RulesEngine
from h0.triage.rulesfile import ensure_rules_file, rules_path
from h0.triage.safety import DRAFT_MARKER

if TYPE_CHECKING:
    from h0.config import Settings

__all__ = [
    "DECISIONS",
    "DEFAULT_RULES_TEXT",
    "DRAFT_MARKER",
    "RULES_FILENAME",
    "Decision",
    "EmailInput",
    "OwnerNote",
    "ReplyContext",
    "RulesEngine",
    "TriageDecision",
    "TriageOutcome",
    "Triager",
    "ensure_rules_file",
    "rules_path",
]


class Triager:
    """Decides what to do with an email. Thread-safe; build once, share across workers."""

    def __init__(self, rules: RulesEngine, llm: LLMTriage | None = None) -> None:
        self.rules = rules
        self.llm = llm  # the model behind this triager (None for rules): drafting asks it for revisions and lessons

    @classmethod
    def from_settings(
        cls,
        settings: Settings | None = None,
        vault_root: Path | None = None,
        *,
        timeout: float | None = None,
        invalid_retries: int = 2,
    ) -> Triager:
        """Build from LLM_PROVIDER / LLM_MODEL / LLM_API_KEY / LLM_BASE_URL / LLM_TIMEOUT_SECONDS
        (`timeout` overrides the last; `invalid_retries`: how often an invalid answer is corrected).

        `vault_root` (default: settings.vault_path) holds `H0_Rules.md`, used by the rules
        engine and as the LLM's fallback. Raises ValueError for an unknown provider (the
        message lists the valid names) or settings that cannot work.
        """
        if settings is None:
            settings = load_settings()
        name = canonical_name(settings.llm_provider)
        rules = RulesEngine.for_vault(
            Path(vault_root) if vault_root is not None else settings.vault_path, settings.h0_state_dir
        )
        if name == RULES:
            return cls(rules)
        secret = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        provider = build_provider(
            name,
            model=settings.llm_model,
            api_key=secret,
            base_url=settings.llm_base_url,
            timeout=timeout if timeout is not None else settings.llm_timeout_seconds,
        )
        llm = LLMTriage(provider, rules, secret=secret, invalid_retries=invalid_retries)
        return cls(rules, llm)

    @property
    def provider_name(self) -> str:
        """`rules`, or the canonical LLM provider name (`openai`, `anthropic`, `ollama`, …)."""
        return self.llm.provider.name if self.llm else RULES

    @property
    def model_name(self) -> str | None:
        return self.llm.provider.model if self.llm else None

    def triage(self, email: EmailInput, context: ReplyContext | None = None) -> TriageOutcome:
        """Decide; never raises for an email's content or a provider's failure. `context` (from
        h0.drafting): the owner's notes for the model and the reply's greeting and sign-off."""
        if self.llm is None:
            return self.rules.triage(email, context)
        try:
            return self.llm.triage(email, context)
        except Exception as exc:  # noqa: BLE001 - a bug must not stop a worker thread: rules still decide
            logger.opt(exception=exc).error(
                "Triage via {} failed unexpectedly; the rules engine decides", self.provider_name
            )
            outcome = self.rules.triage(email, context)
            return outcome.model_copy(
                update={
                    "provider": self.provider_name,
                    "model": self.model_name,
                    "fallback": True,
                    "fallback_reason": f"internal error: {type(exc).__name__}",
                }
            )

    def close(self) -> None:
        """Release the LLM client's connections (no-op for rules)."""
        if self.llm is not None:
            self.llm.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
