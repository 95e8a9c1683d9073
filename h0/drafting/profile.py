"""The owner's profile, `H0_Profile.md`: who writes the replies, and how.

`h0 init` writes it (DEFAULT_PROFILE_TEXT, which explains itself); the owner edits it in
Obsidian. The frontmatter holds name, role, signature, languages, tone and the default
greeting and sign-off; `## Standing facts` holds what every reply may need (working hours,
how to book a meeting). `## Learned from your sent mail` is H0's: rewritten from the owner's
sent replies (h0.drafting.voice), per recipient and overall.

H0 has no greeting or sign-off of its own: when there is no profile, the defaults are the
ones this file's own default text names, so there is one place to change them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h0.calendar.hours import OwnerHours, parse_hours
from h0.drafting.ownernotes import Loaded, bullets, load_control_note, safe_lines, section, section_span
from h0.errors import H0Error, InvalidRequest
from h0.vault.layout import PROFILE_NOTE
from h0.vault.profile_fields import PROSE_KEYS, profile_fields

LEARNED_HEADING = "Learned from your sent mail"
FACTS_HEADING = "Standing facts"
MAX_FACTS = 30
MAX_FIELD_CHARS = 200

DEFAULT_PROFILE_TEXT = """\
---
type: h0-profile
name: ""
role: ""
languages: [en]
tone: friendly, clear and brief
greeting: "Hi {first_name},"
sign_off: "Best regards,"
signature: ""
# Your calendar hours, for replies that propose meeting times (docs/calendar.md).
timezone: ""  # an IANA name like Europe/Berlin; empty = this computer's time zone
working_hours: Mon-Fri 09:00-17:00  # several ranges: Mon-Thu 09:00-12:00, 13:00-17:00; Fri 09:00-13:00
meeting_minutes: 30  # a meeting's length unless the email asks for another
meeting_buffer_minutes: 0  # kept free before and after each busy time
tags: [h0]
---
# Your profile for H0

H0 reads this note before it drafts a reply, so its drafts sound like you and know what you
would say. Edit it freely; H0 picks up the change with the next email.

- **Properties** (above): your `name` and `role`, the `languages` you write in, your `tone`,
  and the `greeting` and `sign_off` H0 uses for someone you have not written to yet
  (`{first_name}`, `{name}` and `{last_name}` are the recipient's). `signature` is added under
  the sign-off (your name, say); leave it empty to end with the sign-off alone.
- **Calendar hours**: your `timezone`, `working_hours`, `meeting_minutes` and
  `meeting_buffer_minutes`. When an email asks to meet and H0 can read your calendar
  (CALENDAR_ICS or CALDAV_URL), the draft proposes free times inside these hours.
- **Standing facts** (below): what a reply may need on any day — working hours, how to book
  a meeting with you, where you are this month. One per line.
- **Learned from your sent mail** is H0's section: it rewrites it from the replies you send
  (how you greet and sign off each person, how long and how formal you write, in which
  language). To someone you have written to before, H0 opens and closes the way your last
  replies to them did. Your edits to that section are overwritten; change the properties
  above instead.

Nothing here is ever sent as it is. Notes with `private: true` in their properties, and
folders listed in PRIVATE_FOLDERS, never reach the model; neither does anything in `Logs/`.

## Standing facts

- Working hours: (for example) Monday to Friday, 9:00–17:00
- To book a meeting: (for example) reply with two times that suit you

## Learned from your sent mail

Nothing yet: H0 fills this in from the replies you send.
"""


@dataclass(frozen=True, slots=True)
class RecipientVoice:
    """How the owner greets and signs off to one person, learned from their replies to them."""

    address: str
    greeting: str | None
    sign_off: str | None
    replies: int
    last: str | None = None  # a [[link]] to the latest reply it was learned from


@dataclass(frozen=True, slots=True)
class Profile:
    name: str = ""
    role: str = ""
    languages: tuple[str, ...] = ()
    tone: str = ""
    greeting: str = ""
    sign_off: str = ""
    signature: str = ""
    facts: tuple[str, ...] = ()
    learned: str = ""  # the learned section as H0 last wrote it (for the prompt's summary)
    path: str = PROFILE_NOTE
    exists: bool = False
    problems: tuple[H0Error, ...] = field(default=(), compare=False)
    hours: OwnerHours = field(default_factory=lambda: parse_hours(profile_fields({})), compare=False)

    def summary(self) -> str:
        """The profile as a prompt shows it: who the owner is, how they write, standing facts."""
        said = (("Name", self.name), ("Role", self.role), ("Writes in", ", ".join(self.languages)), ("Tone", self.tone))
        lines = [f"{label}: {value}" for label, value in said if value]
        if self.facts:
            lines.append("Standing facts:")
            lines += [f"- {fact}" for fact in self.facts]
        if self.learned.strip():
            lines.append("Learned from the owner's sent mail:")
            lines += [line for line in self.learned.strip().splitlines() if line.strip().startswith("- ")]
        return "\n".join(lines)


def default_profile() -> Profile:
    """The profile DEFAULT_PROFILE_TEXT describes (used when the vault has none, or it is unusable)."""
    from h0.vault import frontmatter

    parts = frontmatter.split(DEFAULT_PROFILE_TEXT)
    return _build(Loaded(PROFILE_NOTE, frontmatter.load(parts.yaml), parts.body), exists=False, facts=False)


def load_profile(root: Path) -> Profile:
    """The vault's profile, or the defaults (with the problem) when it is missing or unusable. Never raises."""
    loaded = load_control_note(root, PROFILE_NOTE)
    if not loaded.exists or not loaded.usable:
        defaults = default_profile()
        return Profile(**{**_fields(defaults), "exists": loaded.exists, "problems": tuple(loaded.problems)})
    return _build(loaded, exists=True)


def _fields(profile: Profile) -> dict[str, Any]:
    return {name: getattr(profile, name) for name in Profile.__slots__ if not name.startswith("__")}


def _build(loaded: Loaded, *, exists: bool, facts: bool = True) -> Profile:
    fields = profile_fields(loaded.frontmatter)
    defaults = default_profile() if exists else None
    checked: dict[str, str] = {}
    for key in PROSE_KEYS:
        value = fields.prose[key]
        lines = [line for line in value.splitlines() if line.strip()]
        if lines and len(safe_lines(loaded, lines, f"`{key}`")) != len(lines):
            value = ""  # an order to the model posing as a property: the default instead
        checked[key] = value
    if defaults is not None:
        # A profile that leaves the greeting or sign-off empty still gets the default's.
        checked["greeting"] = checked["greeting"] or defaults.greeting
        checked["sign_off"] = checked["sign_off"] or defaults.sign_off
    languages = fields.languages
    fact_lines = safe_lines(loaded, bullets(section(loaded.body, FACTS_HEADING)), "standing fact") if facts else []
    fact_lines = [
        f
        for f in fact_lines
        if not f.lower().startswith("working hours: (for example)")
        and not f.lower().startswith("to book a meeting: (for example)")
    ]
    if len(fact_lines) > MAX_FACTS:
        loaded.problems.append(
            InvalidRequest(
                f"{loaded.path} lists {len(fact_lines)} standing facts; H0 uses the first {MAX_FACTS}.",
                path=loaded.path,
            )
        )
        fact_lines = fact_lines[:MAX_FACTS]
    learned = section(loaded.body, LEARNED_HEADING)
    hours = parse_hours(fields, loaded.path)
    loaded.problems.extend(hours.problems)
    return Profile(
        name=checked["name"],
        role=checked["role"],
        languages=languages[:10],
        tone=checked["tone"],
        greeting=checked["greeting"],
        sign_off=checked["sign_off"],
        signature=checked["signature"],
        facts=tuple(fact_lines),
        learned=learned if exists else "",
        exists=exists,
        problems=tuple(loaded.problems),
        hours=hours,
    )


_NAME_SLOT = re.compile(r"\{(first_name|last_name|name)\}")


def fill_names(template: str, display_name: str) -> str:
    """A greeting template with the recipient's names filled in (`{first_name}`, `{last_name}`, `{name}`)."""
    name = display_name.strip().strip("\"'")
    if "," in name:  # "Rivera, Dana"
        last, first = (part.strip() for part in name.split(",", 1))
        name = f"{first} {last}".strip()
    words = [w for w in name.split() if "@" not in w]
    values = {
        "first_name": words[0] if words else "",
        "last_name": words[-1] if words else "",
        "name": " ".join(words),
    }
    filled = _NAME_SLOT.sub(lambda m: values[m.group(1)], template)
    # "Hi ," when the name is unknown: drop the gap rather than invent a name.
    return re.sub(r"\s+([,!.])", r"\1", filled).strip()


def render_learned(lines: list[str]) -> str:
    return f"## {LEARNED_HEADING}\n\n" + "\n".join(lines).rstrip() + "\n"


def with_learned(text: str, learned: str) -> str:
    """The profile's text with its learned section replaced by `learned` (appended when it has none)."""
    found = section_span(text, LEARNED_HEADING)
    if found is None:
        return text.rstrip("\n") + "\n\n" + learned
    tail = text[found[2] :]
    return text[: found[0]] + learned + ("\n" + tail if tail else "")


def ensure_profile_file(root: Path) -> bool:
    """Write the default `H0_Profile.md` unless the vault has one; True if written (never over the owner's)."""
    from h0.platform.fs import write_new

    return write_new(Path(root) / PROFILE_NOTE, DEFAULT_PROFILE_TEXT)
