"""User regexes cannot freeze H0: given a rule whose pattern backtracks catastrophically, when an
email that triggers it is triaged, then the rule is skipped for that email after its time limit,
the next rule decides, and the rules note says which rule ran out of time (once)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from h0.triage import RULES_FILENAME, EmailInput, RulesEngine
from h0.triage.textmatch import GIL_HOLD_S, MATCH_TIMEOUT_S, RuleTimeout, compile_pattern
from h0.vault import Vault
from h0.vault.marks import RULE_TIMEOUTS_KEY as TIMEOUTS_KEY

# `(a|aa)+$` on a long run of a's ending in something else tries every way to split the run.
HOSTILE_PATTERN = r"(a|aa)+$"
HOSTILE_TEXT = "a" * 80 + "!"

RULES = f"""---
type: h0-rules
---
# Rules

```yaml
rules:
  - name: Runaway
    when:
      body: "/{HOSTILE_PATTERN}/"
    decision: archive
  - name: Questions
    when:
      body: "?"
    decision: needs_info
    confidence: 0.8
```
"""


def email(message_id: str, body: str) -> EmailInput:
    return EmailInput.model_validate(
        {"from": "x@stranger.example", "subject": "Hi", "body": body, "message_id": message_id}
    )


def test_given_a_catastrophic_pattern_then_the_search_stops_at_its_limit() -> None:
    pattern = compile_pattern(HOSTILE_PATTERN)
    started = time.thread_time()
    try:
        pattern.search(HOSTILE_TEXT, HOSTILE_TEXT.lower())
    except RuleTimeout as exc:
        assert exc.source == HOSTILE_PATTERN
    else:
        raise AssertionError("the runaway pattern finished")
    assert time.thread_time() - started < MATCH_TIMEOUT_S * 5


def test_given_a_catastrophic_pattern_then_other_threads_run_meanwhile() -> None:
    """The engine lets go of the GIL while it matches: a send or the SIGTERM handler is never stuck
    behind it. (With `re`, this thread could not run until the match ended.)"""
    pattern = compile_pattern(HOSTILE_PATTERN)
    matching = threading.Event()
    outcome: list[str] = []

    def match() -> None:
        matching.set()
        try:
            pattern.search(HOSTILE_TEXT, HOSTILE_TEXT.lower(), timeout=0.5)
        except RuleTimeout:
            outcome.append("timed out")

    worker = threading.Thread(target=match)
    worker.start()
    assert matching.wait(5)
    still_matching = worker.is_alive()
    worker.join(30)
    assert still_matching and outcome == ["timed out"]


def test_given_a_search_longer_than_the_gil_hold_then_it_is_redone_without_the_gil_and_finds_the_match() -> None:
    """A search still running after GIL_HOLD_S (held) is run again without the GIL: the same match."""
    # Each start in the run of a's tries every way to split it before "zq7" at the end matches: tens of
    # milliseconds, far past GIL_HOLD_S, well within the time limit given.
    text = "a" * 24 + "?zq7"
    started = time.thread_time()
    found = compile_pattern(r"(?:a|aa)+!|zq\d").search(text, text, timeout=20)
    assert found == "zq7"
    assert time.thread_time() - started > GIL_HOLD_S


def test_given_a_runaway_rule_when_triaged_then_it_is_skipped_and_named_on_the_rules_note(vault_dir: Path) -> None:
    (vault_dir / RULES_FILENAME).write_text(RULES, encoding="utf-8")
    engine = RulesEngine.for_vault(vault_dir)

    outcome = engine.triage(email("m1", HOSTILE_TEXT + " Could you call me?"))

    assert outcome.rule == "Questions"  # the runaway rule was skipped, the next one decided
    assert outcome.decision.decision == "needs_info"
    assert any("Runaway" in w and "skipped" in w for w in outcome.warnings)
    note = Vault(vault_dir).read_note(RULES_FILENAME)
    lines = note.frontmatter[TIMEOUTS_KEY]
    assert len(lines) == 1 and "Runaway" in lines[0] and HOSTILE_PATTERN in lines[0] and "m1" in lines[0]
    assert "```yaml" in note.body  # the owner's rules are kept as written

    again = engine.triage(email("m2", HOSTILE_TEXT + " Could you call me?"))

    assert again.rule == "Questions"
    assert Vault(vault_dir).read_note(RULES_FILENAME).frontmatter[TIMEOUTS_KEY] == lines  # said once


def test_given_an_honest_email_then_the_runaway_rule_still_answers_in_time(vault_dir: Path) -> None:
    (vault_dir / RULES_FILENAME).write_text(RULES, encoding="utf-8")

    outcome = RulesEngine.for_vault(vault_dir).triage(email("m3", "Lunch? aa"))

    assert outcome.rule == "Runaway" or outcome.rule == "Questions"
    assert not any("skipped" in w for w in outcome.warnings)
    assert TIMEOUTS_KEY not in Vault(vault_dir).read_note(RULES_FILENAME).frontmatter
