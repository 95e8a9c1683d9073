"""Case-insensitive regex search of the owner's rule patterns: fast paths, and a time limit.

The patterns are the owner's (or whoever wrote `H0_Rules.md`), and the text is a stranger's,
so a pattern that backtracks catastrophically (`(a|aa)+$` on a long run of a's) must not
freeze triage. They run on the `regex` engine: each search has a time limit (MATCH_TIMEOUT_S;
past it, RuleTimeout) and a search still running after GIL_HOLD_S is redone without the GIL
(`concurrent=True`), so the daemon's other threads — a send, the signal handler that stops on
SIGTERM — run meanwhile.

The fast paths: the engine skips ahead quickly only when a pattern starts with a known character and is not
IGNORECASE; a leading `\\b` or the IGNORECASE flag makes it try a full match at every
position (measured: `\\bby eod\\b` on 4 KB of prose, ~130 µs; `by eod\\b` on the lowered
text, ~5 µs). So a pattern with no capital letters runs without IGNORECASE on the lowered
text (same result: both sides lowered), and a leading `\\b` is checked by hand around each
candidate instead of by the engine. Results equal `re.search(p, text, re.I)` (a test pins
it), except for exotic case folds such as "ſ" matching "s", which nobody writes in rules.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import regex

# A rule's pattern gets this long per email field; an honest pattern on the 20 KB a rule sees
# takes well under a millisecond, so only a runaway pattern ever reaches it.
MATCH_TIMEOUT_S = 0.1
# A search first runs holding the GIL for up to this long, and only a pattern still running then lets
# go of it: dropping and taking back the GIL around every search, with four workers contending for
# it, cost as much CPU as the matching (rules triage took ~2x the CPU per email).
GIL_HOLD_S = 0.002
error = regex.error  # what an invalid pattern raises


class RuleTimeout(Exception):
    """A pattern ran past MATCH_TIMEOUT_S on one text: the rule is skipped for that email."""

    def __init__(self, source: str, seconds: float) -> None:
        super().__init__(f"the pattern /{source}/ took longer than {seconds * 1000:.0f} ms")
        self.source = source
        self.seconds = seconds


def _is_word(char: str) -> bool:
    # Exactly re's Unicode \w: alphanumeric or underscore.
    return char.isalnum() or char == "_"


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled user pattern; `search(raw, lowered)` returns the matched text or None."""

    source: str  # as the owner wrote it (for the report when it runs out of time)
    compiled: regex.Pattern[str]  # what is searched
    lowered: bool  # search the lowered text (compiled without IGNORECASE)
    boundary: bool  # a leading \b was taken off the pattern and is checked by hand
    exact: regex.Pattern[str]  # the pattern as written, IGNORECASE, for the rare cases below

    def search(self, raw: str, lowered: str, timeout: float = MATCH_TIMEOUT_S) -> str | None:
        """The matched text or None; RuleTimeout when the search takes longer than `timeout` seconds."""
        # The time the pattern runs (this thread's CPU time, as the engine counts its limit), not
        # the clock: on a busy machine a thread kept waiting has not run the pattern any longer.
        deadline = time.thread_time() + timeout
        if self.lowered and len(lowered) != len(raw):
            # A few characters lower into two ("İ" → "i̇"), shifting what \b and classes see.
            return self._exact(raw, deadline)
        text = lowered if self.lowered else raw
        if not self.boundary:
            found = self._search(self.compiled, text, 0, deadline)
            return found.group(0) if found else None
        pos = 0
        while True:
            found = self._search(self.compiled, text, pos, deadline)
            if found is None:
                return None
            start, end = found.span()
            if start == end:  # where an empty match sits decides \b: let the engine do it
                return self._exact(raw, deadline)
            before = _is_word(text[start - 1]) if start else False
            if before != _is_word(text[start]):
                return found.group(0)
            pos = start + 1

    def _exact(self, raw: str, deadline: float) -> str | None:
        found = self._search(self.exact, raw, 0, deadline)
        return found.group(0) if found else None

    def _search(self, compiled: regex.Pattern[str], text: str, pos: int, deadline: float) -> regex.Match[str] | None:
        left = deadline - time.thread_time()
        try:
            if left <= 0:
                raise TimeoutError
            try:  # holding the GIL: an honest pattern is done long before GIL_HOLD_S
                return compiled.search(text, pos, timeout=min(left, GIL_HOLD_S))
            except TimeoutError:
                left = deadline - time.thread_time()
                if left <= 0:
                    raise
            # Still running: searched again from the start without the GIL, for the rest of its time.
            return compiled.search(text, pos, concurrent=True, timeout=left)
        except TimeoutError:
            raise RuleTimeout(self.source, MATCH_TIMEOUT_S) from None


def compile_pattern(source: str) -> Pattern:
    """Compile a case-insensitive pattern; raises `error` (regex.error) if it is invalid."""
    exact = regex.compile(source, regex.IGNORECASE)
    lowered = _lowercase_safe(source)
    # Only a \b in front of one plain sequence can move out: in `\bfoo|bar` it binds to foo alone.
    boundary = source.startswith("\\b") and "|" not in source and len(source) > 2
    flags = 0 if lowered else regex.IGNORECASE
    compiled = regex.compile(source[2:] if boundary else source, flags)
    return Pattern(source=source, compiled=compiled, lowered=lowered, boundary=boundary, exact=exact)


def _lowercase_safe(source: str) -> bool:
    """True if matching lowered text without IGNORECASE equals matching with it.

    Any capital letter — a literal, or an escape such as \\S, \\W, \\D, \\B, \\A, \\Z — could
    mean something else once lowered; `(?-i:` asks for case to matter.
    """
    return source == source.lower() and "(?-" not in source
