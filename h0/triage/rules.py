"""The rules engine: deterministic, offline triage driven by the vault's `H0_Rules.md`.

The file is compiled once and recompiled only when its (mtime, size, inode) changes, so a
decision costs a `stat` plus a few substring checks. The first matching rule decides; the
safety rule (h0/triage/safety.py) then has the last word on archiving. A rule whose pattern
runs out of time (h0.triage.textmatch) is skipped for that email, said in the outcome's
warnings and on the rules note itself (h0.triage.rulereport).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from loguru import logger

from h0.platform.fs import read_regular
from h0.triage import safety
from h0.triage.models import DRAFTING_DECISIONS, EmailInput, ReplyContext, TriageDecision, TriageOutcome
from h0.triage.rulereport import TimeoutReporter
from h0.triage.rulesfile import (
    BODY_HEAD_CHARS,
    BODY_TAIL_CHARS,
    Matcher,
    Rule,
    RuleSet,
    builtin_rules,
    compile_text,
    rules_path,
)
from h0.triage.template import render
from h0.triage.textmatch import RuleTimeout
from h0.vault.note import MAX_NOTE_BYTES

NO_MATCH_CONFIDENCE = 0.3
_Signature = tuple[object, ...]


def _body_window(body: str) -> str:
    if len(body) <= BODY_HEAD_CHARS + BODY_TAIL_CHARS:
        return body
    return body[:BODY_HEAD_CHARS] + "\n…\n" + body[-BODY_TAIL_CHARS:]


_FIELD_TEXT: dict[str, Callable[[EmailInput], str]] = {
    "sender": lambda e: e.sender,
    "sender_domain": lambda e: e.sender_domain,
    "subject": lambda e: e.subject,
    "body": lambda e: _body_window(e.body),
    "text": lambda e: e.subject + "\n" + _body_window(e.body),
    "recipients": lambda e: "\n".join(e.to + e.cc),
    "label": lambda e: "\n".join(e.labels),
    "attachment": lambda e: "\n".join(e.attachment_names),
    "automated": lambda e: e.automated,  # the kind of machine-made mail ("" for a person's)
    "asks": lambda e: e.asks,  # the sentence of the sender's own words that asks something ("" when none)
}


class _View:
    """One email's field texts, computed (and lowered) only when a rule first asks."""

    __slots__ = ("_low", "_raw", "email")

    def __init__(self, email: EmailInput) -> None:
        self.email = email
        self._raw: dict[str, str] = {}
        self._low: dict[str, str] = {}

    def raw(self, field: str) -> str:
        text = self._raw.get(field)
        if text is None:
            text = self._raw[field] = _FIELD_TEXT[field](self.email)
        return text

    def low(self, field: str) -> str:
        text = self._low.get(field)
        if text is None:
            text = self._low[field] = self.raw(field).lower()
        return text


def _find(matcher: Matcher, view: _View) -> str | None:
    """The text a condition matched, or None."""
    if matcher.needles:
        lowered = view.low(matcher.field)
        for needle in matcher.needles:
            if needle in lowered:
                return needle
    if matcher.patterns:
        raw, lowered = view.raw(matcher.field), view.low(matcher.field)
        for pattern in matcher.patterns:
            found = pattern.search(raw, lowered)
            if found is not None:
                return found
    return None


def _matches(rule: Rule, view: _View) -> str | None:
    """What made `rule` match ("" for a rule without conditions), or None if it does not."""
    matched: str | None = None
    if not rule.when:
        matched = ""
    elif rule.match_all:
        for matcher in rule.when:
            hit = _find(matcher, view)
            if hit is None:
                return None
            matched = hit if matched is None else matched
    else:
        for matcher in rule.when:
            matched = _find(matcher, view)
            if matched is not None:
                break
        else:
            return None
    if any(_find(matcher, view) is not None for matcher in rule.unless):
        return None
    return matched


def ruleset_is_file(ruleset: RuleSet) -> bool:
    """True when the rules came from the vault's note (not the built-in defaults)."""
    return ruleset.source != builtin_rules().source


class RulesEngine:
    """Triage by the first matching rule of a vault's rules file (thread-safe)."""

    def __init__(self, path: Path | None, state_dir: Path | None = None) -> None:
        """`path` is the rules note; None means the built-in defaults only. `state_dir` (H0_STATE_DIR)
        is where H0 records its own write when it notes a rule's timeout on the rules note."""
        self.path = Path(path) if path is not None else None
        self._timeouts = TimeoutReporter(self.path, state_dir) if self.path is not None else None
        self._lock = threading.Lock()
        # (signature, ruleset) swapped as one object, so readers never see a torn pair.
        self._state: tuple[_Signature | None, RuleSet] = (None, builtin_rules())

    @classmethod
    def from_ruleset(cls, ruleset: RuleSet) -> RulesEngine:
        """An engine deciding by an already compiled rule set, with no file behind it (never reloads)."""
        engine = cls(None)
        engine._state = (None, ruleset)
        return engine

    @classmethod
    def for_vault(cls, vault_root: Path, state_dir: Path | None = None) -> RulesEngine:
        return cls(rules_path(vault_root), state_dir)

    def ruleset(self) -> RuleSet:
        """The current rules, recompiled if the file changed since the last look."""
        if self.path is None:
            return self._state[1]
        signature = self._signature()
        state = self._state
        if state[0] == signature:
            return state[1]
        with self._lock:
            if self._state[0] != signature:
                self._state = (signature, self._load(signature))
            return self._state[1]

    def _signature(self) -> _Signature:
        assert self.path is not None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return ("missing",)
        except OSError as exc:
            return ("error", exc.strerror or str(exc))
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _load(self, signature: _Signature) -> RuleSet:
        assert self.path is not None
        try:
            if signature[0] == "missing":
                raise ValueError("the file does not exist")
            if signature[0] == "error":
                raise ValueError(f"the file cannot be read: {signature[1]}")
            text = read_regular(self.path, MAX_NOTE_BYTES).decode("utf-8")
            ruleset = compile_text(text, str(self.path))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems = tuple(f"{self.path.name}: {line}" for line in str(exc).splitlines() if line.strip())
            logger.warning(
                "Triage rules {} not usable, using the built-in defaults: {}", self.path, "; ".join(problems)
            )
            return RuleSet(builtin_rules().rules, "built-in defaults", problems)
        logger.info("Triage rules loaded from {} ({} rules)", self.path, len(ruleset.rules))
        return ruleset

    def decide(
        self, email: EmailInput, context: ReplyContext | None = None
    ) -> tuple[TriageDecision, str | None, list[str]]:
        """The decision, the name of the rule that made it (None if none matched), and warnings."""
        ruleset = self.ruleset()
        warnings = list(ruleset.problems)
        view = _View(email)
        for rule in ruleset.rules:
            try:
                matched = _matches(rule, view)
            except RuleTimeout as exc:
                warnings.append(self._timed_out(rule, exc, email))
                continue
            if matched is not None:
                decision = self._apply(rule, email, matched, context)
                break
        else:
            rule = None
            decision = TriageDecision(
                decision="needs_info",
                confidence=NO_MATCH_CONFIDENCE,
                reasoning="No rule matched; a human should look at this",
            )
        decision, warning = safety.enforce(decision, email, context)
        if warning:
            warnings.append(warning)
        return decision, (rule.name if rule else None), warnings

    def _timed_out(self, rule: Rule, exc: RuleTimeout, email: EmailInput) -> str:
        """The warning for a rule skipped because a pattern ran out of time; noted on the rules note too."""
        where = f"the email {email.message_id[:80]}" if email.message_id else "an email"
        if self._timeouts is not None and ruleset_is_file(self.ruleset()):
            self._timeouts.report(rule.name, exc.source, where, exc.seconds)
        return f"rule “{rule.name}” was skipped: {exc} on this email (fix it in the rules note)"

    @staticmethod
    def _apply(rule: Rule, email: EmailInput, matched: str, context: ReplyContext | None) -> TriageDecision:
        reply = None
        if rule.decision in DRAFTING_DECISIONS:
            reply = render(rule.reply or safety.DEFAULT_REPLY, email, rule.name, matched, context)
        return TriageDecision(
            decision=rule.decision,
            confidence=rule.confidence,
            reasoning=render(rule.reasoning, email, rule.name, matched).strip() or rule.name,
            reply_body=reply,
            delegate_to=rule.delegate_to,
        )

    def triage(self, email: EmailInput, context: ReplyContext | None = None) -> TriageOutcome:
        started = time.perf_counter()
        decision, rule, warnings = self.decide(email, context)
        return TriageOutcome(
            decision=decision,
            provider="rules",
            model=None,
            latency_ms=(time.perf_counter() - started) * 1000,
            rule=rule,
            warnings=warnings,
        )
