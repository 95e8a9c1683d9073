"""Say on `H0_Rules.md` which rule ran out of time, so the owner sees it where they fix it.

A rule whose pattern runs past its time limit (h0.triage.textmatch.MATCH_TIMEOUT_S) is skipped
for that email and named in the property `h0_rule_timeouts` of the rules note: one line per
rule and pattern, with the email and the time it first happened. The line is added once (a
pattern that times out on every email writes once, not every time) and only with the hash
the note was read with, so an edit the owner is making is never overwritten. The owner
removes the line (or the property) once the pattern is fixed. Never raises: a note that
cannot be written leaves the report in the triage log and `h0 doctor` alone.
"""

from __future__ import annotations

import threading
from pathlib import Path

from loguru import logger

from h0.errors import H0Error
from h0.state import StateDB
from h0.vault import Vault
from h0.vault.audit import note_timestamp
from h0.vault.last_change import H0_CLIENT, name_key
from h0.vault.marks import RULE_TIMEOUTS_KEY

MAX_LINES = 20  # a rules note with more runaway patterns than this needs one look, not a longer list


def timeout_line(rule: str, pattern: str) -> str:
    """The start of a report line: what identifies it (the rule and its pattern)."""
    return f"rule “{rule}”, pattern /{pattern[:120]}/"


class TimeoutReporter:
    """Adds a rule's timeout to the rules note, once per rule and pattern (thread-safe)."""

    def __init__(self, path: Path, state_dir: Path | None = None) -> None:
        self.path = Path(path)
        self.state_dir = state_dir
        self._lock = threading.Lock()
        self._said: set[str] = set()

    def report(self, rule: str, pattern: str, email: str, seconds: float) -> None:
        key = timeout_line(rule, pattern)
        with self._lock:
            if key in self._said:
                return
            self._said.add(key)
            try:
                self._write(key, email, seconds)
            except H0Error as error:
                logger.warning("could not note the rule timeout on {}: {}", self.path.name, error.message)
            except OSError as exc:
                logger.warning("could not note the rule timeout on {}: {}", self.path.name, exc)

    def _write(self, key: str, email: str, seconds: float) -> None:
        vault = Vault(self.path.parent)
        note = vault.read_note(self.path.name)
        lines = list(note.facts.rule_timeouts)
        if any(line.startswith(key) for line in lines) or len(lines) >= MAX_LINES:
            return
        lines.append(
            f"{key} took longer than {seconds * 1000:.0f} ms on {email} ({note_timestamp()}): skipped for that "
            "email and every email it runs out of time on. Fix the pattern, then delete this line."
        )
        written = vault.update_frontmatter(note.path, {RULE_TIMEOUTS_KEY: lines}, if_match=note.hash)
        logger.warning("{}: {}", note.path, lines[-1])
        try:
            StateDB.for_vault(vault.root, self.state_dir).record_note_writes(
                [(name_key(written.path), written.path, written.hash, "rule_timeout", H0_CLIENT)]
            )
        except H0Error as error:  # only who made the change goes unrecorded
            logger.debug("rule timeout write not recorded: {}", error.message)
