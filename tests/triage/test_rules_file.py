"""The vault's H0_Rules.md: given a rules note a human wrote (or broke), when H0 triages,
then it follows the note, reloads it when it changes, and falls back to the defaults — never crashing."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from loguru import logger

from h0.followup.asks import with_asks
from h0.triage import DEFAULT_RULES_TEXT, RULES_FILENAME, EmailInput, RulesEngine, ensure_rules_file
from h0.triage.rulesfile import builtin_rules, compile_text

NEWSLETTER = EmailInput.model_validate({"from": "news@paper.example", "subject": "Today", "body": "Unsubscribe"})
RECRUITER = with_asks(  # as triage sees it: what its sender's words ask filled in (h0.followup.asks)
    EmailInput.model_validate(
        {"from": "Rae <rae@talent.linkedin.com>", "subject": "An exciting opportunity", "body": "Open to a chat?"}
    )
)
INVOICE = EmailInput.model_validate(
    {"from": "billing@vendor.example", "subject": "Invoice 77", "body": "Attached.", "attachment_names": ["77.pdf"]}
)


def rules_note(yaml_rules: str, prose: str = "My rules.") -> str:
    return f"---\ntype: h0-rules\n---\n# Rules\n\n{prose}\n\n```yaml\n{yaml_rules}```\n"


RECRUITING = """\
rules:
  - name: Recruiters go to Sam
    when:
      sender_domain: linkedin.com
      subject: [opportunity, role]
    match: all
    decision: delegate
    delegate_to: Sam (hiring)
    confidence: 0.95
    reasoning: Recruiting mail from {sender_domain} ({matched})
  - name: Archive the rest
    decision: archive
    confidence: 0.6
"""


def write(path: Path, text: str) -> None:
    """Write and make sure the mtime moves on, even on filesystems with coarse timestamps."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns <= before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


@pytest.fixture
def problems() -> list[str]:
    seen: list[str] = []
    handler = logger.add(lambda message: seen.append(str(message)), level="WARNING", format="{message}")
    yield seen
    logger.remove(handler)


def test_the_built_in_defaults_are_the_rules_h0_init_and_the_demo_write() -> None:
    from h0.cli.demo import shipped

    assert shipped()[RULES_FILENAME] == DEFAULT_RULES_TEXT  # the demo vault's, put in place on its first run
    assert [r.name for r in builtin_rules().rules] == [
        "Automated mail",
        "Automated senders",
        "Newsletters and marketing",
        "Urgent requests",
        "Questions and requests",
        "Everything else",
    ]


def test_given_a_vault_without_rules_when_ensured_then_written_once_and_never_overwritten(vault_dir: Path) -> None:
    assert ensure_rules_file(vault_dir) is True
    assert (vault_dir / RULES_FILENAME).read_text(encoding="utf-8") == DEFAULT_RULES_TEXT
    write(vault_dir / RULES_FILENAME, rules_note(RECRUITING))
    assert ensure_rules_file(vault_dir) is False
    assert "Recruiters go to Sam" in (vault_dir / RULES_FILENAME).read_text(encoding="utf-8")
    assert [p.name for p in vault_dir.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_given_a_custom_rule_first_when_it_matches_then_it_wins(vault_dir: Path) -> None:
    write(vault_dir / RULES_FILENAME, rules_note(RECRUITING))
    engine = RulesEngine.for_vault(vault_dir)

    outcome = engine.triage(RECRUITER)

    assert outcome.decision.decision == "delegate"
    assert outcome.decision.delegate_to == "Sam (hiring)"
    assert outcome.rule == "Recruiters go to Sam"
    assert outcome.decision.reasoning == "Recruiting mail from talent.linkedin.com (linkedin.com)"
    assert outcome.warnings == []
    assert engine.triage(NEWSLETTER).rule == "Archive the rest"


def test_given_a_rule_that_archives_everything_then_invoices_are_still_held(vault_dir: Path) -> None:
    write(vault_dir / RULES_FILENAME, rules_note(RECRUITING))
    outcome = RulesEngine.for_vault(vault_dir).triage(INVOICE)
    assert outcome.decision.decision == "needs_info"
    assert outcome.rule == "Archive the rest"


@pytest.mark.parametrize(
    ("label", "block", "complaint"),
    [
        ("bad yaml", "rules:\n  - name: x\n    decision: [archive\n", "not valid YAML"),
        ("unknown decision", "rules:\n  - name: x\n    decision: send_email\n", "decision"),
        ("typo in a key", "rules:\n  - name: x\n    desicion: archive\n", "desicion"),
        ("bad regex", "rules:\n  - name: x\n    when: {subject: '/([unclosed/'}\n    decision: archive\n", "regular"),
        ("unknown condition", "rules:\n  - name: x\n    when: {colour: red}\n    decision: archive\n", "colour"),
        ("confidence out of range", "rules:\n  - name: x\n    decision: archive\n    confidence: 7\n", "confidence"),
        ("delegate without whom", "rules:\n  - name: x\n    decision: delegate\n", "delegate_to"),
        ("empty list", "rules: []\n", "non-empty"),
    ],
)
def test_given_an_invalid_rules_file_then_defaults_apply_and_the_problem_is_reported(
    vault_dir: Path, problems: list[str], label: str, block: str, complaint: str
) -> None:
    write(vault_dir / RULES_FILENAME, rules_note(block))

    outcome = RulesEngine.for_vault(vault_dir).triage(NEWSLETTER)

    assert outcome.decision.decision == "archive"  # the defaults' newsletter rule
    assert outcome.rule == "Automated senders"
    assert outcome.warnings and all(w.startswith(f"{RULES_FILENAME}:") for w in outcome.warnings)
    assert any(complaint in w for w in outcome.warnings), outcome.warnings
    assert any(complaint in line for line in problems), problems


def test_given_no_rules_block_in_the_note_then_defaults_apply(vault_dir: Path) -> None:
    write(vault_dir / RULES_FILENAME, "# Rules\n\nI deleted the block.\n\n```yaml\nfoo: bar\n```\n")
    outcome = RulesEngine.for_vault(vault_dir).triage(NEWSLETTER)
    assert outcome.decision.decision == "archive"
    assert any("no ```yaml block" in w for w in outcome.warnings)


def test_given_a_missing_file_then_defaults_apply_and_it_is_reported(vault_dir: Path, problems: list[str]) -> None:
    outcome = RulesEngine.for_vault(vault_dir).triage(NEWSLETTER)
    assert outcome.decision.decision == "archive"
    assert any("does not exist" in w for w in outcome.warnings)
    assert len(problems) == 1


def test_given_a_broken_file_then_the_problem_is_logged_once_not_per_email(
    vault_dir: Path, problems: list[str]
) -> None:
    write(vault_dir / RULES_FILENAME, rules_note("rules: [\n"))
    engine = RulesEngine.for_vault(vault_dir)
    for _ in range(50):
        engine.triage(NEWSLETTER)
    assert len(problems) == 1


def test_given_an_edit_when_the_mtime_changes_then_the_next_email_uses_the_new_rules(vault_dir: Path) -> None:
    path = vault_dir / RULES_FILENAME
    ensure_rules_file(vault_dir)
    engine = RulesEngine.for_vault(vault_dir)
    assert engine.triage(RECRUITER).decision.decision == "draft_reply"  # defaults: a question
    first = engine.ruleset()

    write(path, rules_note(RECRUITING))
    assert engine.triage(RECRUITER).decision.decision == "delegate"

    assert engine.ruleset() is engine.ruleset()  # unchanged file: compiled once, not per call
    assert engine.ruleset() is not first

    write(path, rules_note("rules: [oops\n"))  # a broken save: defaults, until it is fixed
    assert engine.triage(RECRUITER).decision.decision == "draft_reply"
    write(path, rules_note(RECRUITING))
    assert engine.triage(RECRUITER).decision.decision == "delegate"

    path.unlink()  # deleted: defaults again
    assert engine.triage(RECRUITER).decision.decision == "draft_reply"


def test_given_yaml_examples_in_the_prose_then_only_the_rules_block_counts(vault_dir: Path) -> None:
    prose = "Example:\n\n```yaml\n- name: not a rule\n  decision: archive\n```\n"
    write(vault_dir / RULES_FILENAME, rules_note(RECRUITING, prose=prose))
    assert RulesEngine.for_vault(vault_dir).triage(RECRUITER).rule == "Recruiters go to Sam"


def test_given_conditions_then_any_all_unless_and_regex_behave_as_documented() -> None:
    ruleset = compile_text(
        rules_note(
            """\
rules:
  - name: Vendor
    when:
      sender_domain: vendor.example
      subject: '/^\\[ticket #\\d+\\]/'
    match: all
    unless:
      body: do not auto-handle
    decision: needs_info
    confidence: 0.9
  - name: Disabled
    enabled: false
    decision: archive
  - name: Fallback
    decision: draft_reply
    reply: "Hello {first_name}, re {subject} / {nope}"
"""
        ),
        "test",
    )
    engine = RulesEngine.from_ruleset(ruleset)  # a compiled set without a file

    def rule_for(**fields: object) -> str | None:
        return engine.triage(EmailInput.model_validate(fields)).rule

    assert rule_for(**{"from": "a@help.vendor.example", "subject": "[Ticket #12] down"}) == "Vendor"
    assert rule_for(**{"from": "a@notvendor.example", "subject": "[ticket #12] down"}) == "Fallback"
    assert rule_for(**{"from": "a@vendor.example", "subject": "Re: [ticket #12]"}) == "Fallback"
    assert (
        rule_for(**{"from": "a@vendor.example", "subject": "[ticket #1]", "body": "Do NOT auto-handle"}) == "Fallback"
    )
    reply = engine.triage(EmailInput.model_validate({"from": "Zoë <z@x.example>", "subject": "Plans"})).decision
    assert reply.reply_body == "Hello Zoë, re Plans / {nope}"  # unknown placeholders stay as written


def test_given_many_threads_while_the_file_changes_then_every_decision_is_whole(vault_dir: Path) -> None:
    path = vault_dir / RULES_FILENAME
    write(path, rules_note(RECRUITING))
    engine = RulesEngine.for_vault(vault_dir)
    errors: list[BaseException] = []
    seen: set[str] = set()
    stop = threading.Event()

    def worker() -> None:
        try:
            while not stop.is_set():
                seen.add(engine.triage(RECRUITER).decision.decision)
        except BaseException as exc:  # noqa: BLE001 - a thread's failure is reported by the test below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for i in range(30):
        write(path, DEFAULT_RULES_TEXT if i % 2 else rules_note(RECRUITING))
    stop.set()
    for thread in threads:
        thread.join()

    assert errors == []
    assert seen <= {"delegate", "draft_reply"}
