"""Read `H0_Rules.md`: find its rules block, validate each rule, compile its patterns once.

The rules are the first fenced ```yaml block in the note whose top level has a `rules:`
key (other yaml blocks are left alone, so the note can carry examples). A file that cannot
be used as a whole — bad YAML, an unknown key, a bad regex — is reported, never half-applied:
the caller falls back to the built-in defaults, which are predictable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from ruamel.yaml import YAML

from h0.errors import ParseError
from h0.platform.fs import write_new
from h0.triage.default_rules import DEFAULT_RULES_TEXT, RULES_FILENAME
from h0.triage.models import Decision
from h0.triage.textmatch import Pattern, compile_pattern
from h0.triage.textmatch import error as PatternError
from h0.vault import frontmatter

# Bodies are scanned up to this many characters: the head holds what a person wrote (a few
# screens), the tail holds bulk-mail footers ("unsubscribe"). The middle of a huge body
# (pasted logs, quoted threads) never decides, and scanning it would cost milliseconds.
BODY_HEAD_CHARS = 16_000
BODY_TAIL_CHARS = 4_000

FIELDS = (
    "sender", "sender_domain", "subject", "body", "text", "recipients", "label", "attachment", "automated", "asks"
)  # fmt: skip
Field_ = Literal[
    "sender", "sender_domain", "subject", "body", "text", "recipients", "label", "attachment", "automated", "asks"
]  # fmt: skip

_FENCE = re.compile(r"^(```+|~~~+)[ \t]*(yaml|yml)[ \t]*\r?\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL | re.IGNORECASE)


class RuleSpec(BaseModel):
    """One rule as written in the file (before compiling)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    when: dict[Field_, str | list[str]] = Field(default_factory=dict)
    match: Literal["any", "all"] = "any"
    unless: dict[Field_, str | list[str]] = Field(default_factory=dict)
    decision: Decision
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    reasoning: str = "Matched rule {rule}"
    reply: str | None = None
    delegate_to: str | None = None
    enabled: bool = True

    @field_validator("when", "unless", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value


@dataclass(frozen=True, slots=True)
class Matcher:
    """The compiled patterns of one condition: lowered substrings and regexes."""

    field: str
    needles: tuple[str, ...]
    patterns: tuple[Pattern, ...]


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    when: tuple[Matcher, ...]
    match_all: bool
    unless: tuple[Matcher, ...]
    decision: Decision
    confidence: float
    reasoning: str
    reply: str | None
    delegate_to: str | None


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Compiled rules plus where they came from and what was wrong with the file, if anything."""

    rules: tuple[Rule, ...]
    source: str  # the file path, or "built-in defaults"
    problems: tuple[str, ...] = ()


def compile_text(text: str, source: str) -> RuleSet:
    """Compile a rules note; raise ValueError with every problem found (one per line)."""
    try:
        rows = _load_yaml(_rules_block(text))["rules"]
    except ParseError as exc:
        raise ValueError(exc.message) from None
    if not isinstance(rows, list) or not rows:
        raise ValueError("`rules:` must be a non-empty list of rules.")
    problems: list[str] = []
    rules: list[Rule] = []
    for index, row in enumerate(rows, start=1):
        label = f"rule {index}" + (f" ({row.get('name')})" if isinstance(row, dict) and row.get("name") else "")
        try:
            spec = RuleSpec.model_validate(row)
            rule = _compile(spec)
        except ValidationError as exc:
            problems.extend(f"{label}: {_error_text(err)}" for err in exc.errors())
            continue
        except ValueError as exc:
            problems.append(f"{label}: {exc}")
            continue
        if spec.enabled:
            rules.append(rule)
    if problems:
        raise ValueError("\n".join(problems))
    return RuleSet(tuple(rules), source)


def _rules_block(text: str) -> str:
    body = frontmatter.split(text).body if text.lstrip("\ufeff").startswith("---") else text
    blocks = [m.group(3) for m in _FENCE.finditer(body)]
    for block in blocks:
        try:
            data = _load_yaml(block)
        except ParseError:
            # A broken block that looks like the rules is the rules block; report its error.
            if re.search(r"^rules\s*:", block, re.MULTILINE):
                raise ValueError(_load_error(block)) from None
            continue
        if isinstance(data, dict) and "rules" in data:
            return block
    raise ValueError("no ```yaml block with a top-level `rules:` key was found in the note.")


def _load_yaml(block: str) -> Any:
    try:
        data = YAML(typ="safe").load(block)
    except Exception as exc:  # noqa: BLE001 - ruamel raises several types for bad input
        raise ParseError(f"the rules block is not valid YAML: {_first_lines(exc)}") from None
    return frontmatter.to_json(data)  # plain JSON values; refuses alias bombs


def _load_error(block: str) -> str:
    try:
        _load_yaml(block)
    except ParseError as exc:
        return exc.message
    return "the rules block could not be read"


def _first_lines(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return " ".join(lines[:4]) or type(exc).__name__


def _error_text(err: Any) -> str:
    where = ".".join(str(part) for part in err.get("loc", ()))
    return f"{where}: {err.get('msg')}" if where else str(err.get("msg"))


def _compile(spec: RuleSpec) -> Rule:
    if spec.decision == "delegate" and not (spec.delegate_to or "").strip():
        raise ValueError("delegate_to: say who should handle mail this rule delegates")
    when = tuple(_matcher(field, patterns) for field, patterns in spec.when.items())
    unless = tuple(_matcher(field, patterns) for field, patterns in spec.unless.items())
    return Rule(
        name=spec.name,
        when=when,
        match_all=spec.match == "all",
        unless=unless,
        decision=spec.decision,
        confidence=spec.confidence,
        reasoning=spec.reasoning,
        reply=spec.reply,
        delegate_to=spec.delegate_to,
    )


def _matcher(field: str, patterns: str | list[str]) -> Matcher:
    needles: list[str] = []
    regexes: list[Pattern] = []
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        if not isinstance(pattern, str) or not pattern:
            raise ValueError(f"{field}: patterns must be non-empty text, got {pattern!r}")
        if len(pattern) > 2 and pattern.startswith("/") and pattern.endswith("/"):
            try:
                regexes.append(compile_pattern(pattern[1:-1]))
            except PatternError as exc:
                raise ValueError(f"{field}: invalid regular expression {pattern!r}: {exc}") from None
        elif field == "sender_domain":
            # A domain also covers its subdomains, and never a mere substring ("ail.com").
            domain = pattern.strip().lstrip("@").lower()
            regexes.append(compile_pattern(r"(?:^|(?<=\.))" + re.escape(domain) + "$"))
        else:
            needles.append(pattern.lower())
    return Matcher(field, tuple(needles), tuple(regexes))


_BUILTIN: RuleSet | None = None


def builtin_rules() -> RuleSet:
    """The defaults, compiled once from DEFAULT_RULES_TEXT."""
    global _BUILTIN
    if _BUILTIN is None:
        _BUILTIN = compile_text(DEFAULT_RULES_TEXT, "built-in defaults")
    return _BUILTIN


def rules_path(vault_root: Path) -> Path:
    return Path(vault_root) / RULES_FILENAME


def ensure_rules_file(vault_root: Path) -> bool:
    """Write the default `H0_Rules.md` into the vault unless one exists; True if written (never over
    a human's own file, never half a file: h0.platform.fs.write_new)."""
    return write_new(rules_path(vault_root), DEFAULT_RULES_TEXT)
