"""`H0_Memory.md`: short lessons H0 drew from how the owner changed its drafts.

Each lesson is one line under `## Lessons`, linking the sent drafts it came from; later
prompts carry them (the newest MAX_LESSONS). The owner reads and corrects them in Obsidian,
and deleting a line forgets it: the note is the only place a lesson lives.

A lesson's links are its provenance: the sent drafts (in `Done/`) whose edits it was drawn from
(h0.drafting.learning writes them). `h0 eval`, drafting a past email again, keeps only the lessons
drawn from replies sent before the one it hides (`Memory.learned_before`); a line without a link is
the owner's own and always counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from h0.drafting.ownernotes import bullets, load_control_note, safe_lines, section
from h0.errors import Conflict, H0Error, NotFound
from h0.vault.api import Notes
from h0.vault.layout import MEMORY_NOTE

LESSONS_HEADING = "Lessons"
MAX_LESSONS = 40
MAX_LESSON_CHARS = 240

DEFAULT_MEMORY_TEXT = """\
---
type: h0-memory
tags: [h0]
---
# What H0 learned from your edits

When a reply you sent differs from the draft H0 wrote, H0 notes what you changed, in one
short line under **Lessons**, linked to the drafts it came from, and follows it in later
drafts. Edit a line to correct it; delete it and H0 forgets it. Only H0's model writes new
lines (with `LLM_PROVIDER` set); the comparison itself is kept in `Logs/drafting_<date>.jsonl`.

## Lessons

"""

_LINK = re.compile(r"\[\[([^\[\]|#\n]+)(?:[|#][^\[\]\n]*)?\]\]")


@dataclass(frozen=True, slots=True)
class Lesson:
    text: str  # the lesson without its links
    links: tuple[str, ...]  # the drafts it came from, as [[links]]

    @property
    def line(self) -> str:
        return f"{self.text} ({', '.join(self.links)})" if self.links else self.text

    @property
    def sources(self) -> tuple[str, ...]:
        """The names of the notes it was drawn from ("REPLY_EMAIL_1"), as its links name them."""
        return tuple(link[2:-2].rsplit("/", 1)[-1].removesuffix(".md").strip() for link in self.links)


@dataclass(frozen=True, slots=True)
class Memory:
    lessons: tuple[Lesson, ...] = ()
    exists: bool = False
    problems: tuple[H0Error, ...] = field(default=(), compare=False)

    def learned_before(self, sent_at: Callable[[str], float | None], before: float) -> tuple[Memory, int]:
        """The memory as it stood before `before` (epoch seconds): a lesson counts when every draft it was
        drawn from was sent earlier (`sent_at(name)`: when the note of that name was sent; None: unknown);
        a lesson from a later reply, or from one that cannot be dated, is left out (fail closed: it may be
        the very reply being hidden). A lesson without a link is the owner's own and stays. Returns the
        memory and how many lessons were left out."""
        kept = []
        for lesson in self.lessons:
            times = [sent_at(name) for name in lesson.sources]
            if all(t is not None and t < before for t in times):
                kept.append(lesson)
        return replace(self, lessons=tuple(kept)), len(self.lessons) - len(kept)


def load_memory(root: Path) -> Memory:
    """The lessons of the vault's memory note (the newest MAX_LESSONS); never raises."""
    loaded = load_control_note(root, MEMORY_NOTE)
    if not loaded.exists or not loaded.usable:
        return Memory(exists=loaded.exists, problems=tuple(loaded.problems))
    lines = safe_lines(loaded, bullets(section(loaded.body, LESSONS_HEADING)), "lesson")
    lessons = [_lesson(line) for line in lines][-MAX_LESSONS:]
    return Memory(tuple(lessons), True, tuple(loaded.problems))


def _lesson(line: str) -> Lesson:
    links = tuple(f"[[{m.group(1).strip()}]]" for m in _LINK.finditer(line))
    text = _LINK.sub("", line)
    text = re.sub(r"\(\s*[,;\s]*\)", "", text)  # the emptied "( , )" the links stood in
    return Lesson(" ".join(text.split()).strip(" -–—;,"), links)


def clean_lesson(text: str) -> str | None:
    """A lesson as H0 may write it: one line, short, no links or markup of its own; None if unusable."""
    line = " ".join(str(text).split()).strip(" -*•")
    line = _LINK.sub("", line).replace("%%", "").replace("<", "‹").replace(">", "›")
    if not line or len(line) > MAX_LESSON_CHARS:
        return None
    from h0.drafting.ownernotes import injected

    return None if injected(line) else line


def add_lessons(api: Notes, lessons: Sequence[str], sources: Sequence[str], attempts: int = 3) -> list[str]:
    """Append lessons (each linking `sources`) to the memory note through `api` (h0.vault.api.Notes), creating
    it when absent; a line already there is not added twice. Returns the lines added."""
    links = ", ".join(f"[[{s.rsplit('/', 1)[-1].removesuffix('.md')}]]" for s in sources)
    for _ in range(attempts):
        try:
            note = api.read(MEMORY_NOTE)
            fm: Mapping[str, Any] = note.frontmatter
            body, if_match, create = note.body, note.hash, False
        except NotFound:
            from h0.vault import frontmatter

            parts = frontmatter.split(DEFAULT_MEMORY_TEXT)
            fm, body, if_match, create = frontmatter.load(parts.yaml), parts.body, None, True
        have = {" ".join(_lesson(line).text.lower().split()) for line in bullets(section(body, LESSONS_HEADING))}
        new = [lesson for lesson in lessons if " ".join(lesson.lower().split()) not in have]
        if not new:
            return []
        added = [f"- {lesson} ({links})" if links else f"- {lesson}" for lesson in new]
        try:
            api.write(MEMORY_NOTE, dict(fm), _append(body, added), if_match=if_match, create_only=create)
        except Conflict:
            continue  # the owner edited it meanwhile: read it again
        return [line[2:] for line in added]
    return []


def _append(body: str, lines: list[str]) -> str:
    match = re.search(rf"^##\s+{LESSONS_HEADING}\s*$", body, re.IGNORECASE | re.MULTILINE)
    if match is None:
        return body.rstrip("\n") + f"\n\n## {LESSONS_HEADING}\n\n" + "\n".join(lines) + "\n"
    nxt = re.compile(r"^#{1,2}\s", re.MULTILINE).search(body, match.end())
    end = nxt.start() if nxt else len(body)
    head = body[:end].rstrip("\n") + "\n"
    return head + "\n".join(lines) + "\n" + ("\n" + body[end:] if nxt else "")
