"""H0's limits on frontmatter, enforced before any recursive parser sees it (reading) and
before anything is written that could not be read back (writing)."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from h0.errors import InvalidRequest, ParseError
from h0.vault.frontmatter.yamlhint import explain, where_of
from h0.vault.frontmatter.yamls import EventParser, shorten

# Limits on what H0 reads (and writes: check_representable refuses what could not be read
# back). Real frontmatter is a few hundred bytes and a few dozen keys; these are far above
# that and far below what costs noticeable time or memory (see tests/security).
MAX_YAML_CHARS = 256 * 1024  # the frontmatter block, in characters
MAX_SCALAR_CHARS = 64 * 1024  # one key or one value
MAX_NODES = 10_000  # keys + values + list items, as written (an alias counts once)
MAX_DEPTH = 64  # lists/mappings nested below the top-level mapping
MAX_ALIASES = 100  # `*name` references; as many `&name` anchors
JSON_NODE_BUDGET = 20_000  # values after aliases are expanded; a YAML alias bomb blows far past it


# What YAML (libyaml) refuses in a stream: C0/C1 controls other than tab and line breaks,
# DEL, lone surrogates, U+FFFE and U+FFFF.
_NOT_YAML = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def check_bounds(yaml_text: str, subject: str = "The frontmatter") -> None:
    """Refuse YAML past H0's limits with a ParseError saying which limit and how to fix the note.

    Call it before handing hostile text to any YAML parser: ruamel composes and constructs
    recursively, and past ~30,000 nesting levels its C composer overflows the C stack
    (SIGSEGV, not an exception). This walks the events of the iterative C parser — the very
    tokenizer the loader uses, so quotes, comments and flow/block context are judged exactly
    as the loader will — and stops at the first limit hit: a refused note costs microseconds
    to a few milliseconds, whatever its size. `subject` starts each message (e.g. "The rules block").
    """
    check_text(yaml_text, subject)
    check_structure(yaml_text, subject)


def check_text(text: str, subject: str = "The frontmatter") -> None:
    """The O(n) character-level limits (C-speed: len and one regex character class)."""
    if len(text) > MAX_YAML_CHARS:
        raise _too_big(len(text), subject)
    bad = _NOT_YAML.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise ParseError(
            f"{subject} contains the character U+{ord(bad.group()):04X} on line {line} of it, which YAML "
            "does not allow. Delete it (most editors do not show it).",
            line=line,
            character=f"U+{ord(bad.group()):04X}",
        )


def _too_big(size: int, subject: str = "The frontmatter") -> ParseError:
    return ParseError(
        f"{subject} is {size:,} characters long; H0 reads at most {MAX_YAML_CHARS:,} "
        f"({MAX_YAML_CHARS // 1024} KiB). Move long text below the closing '---', into the note's body.",
        size=size,
        limit=MAX_YAML_CHARS,
    )


def check_structure(text: str, subject: str = "The frontmatter") -> int:
    """Walk the parse events, enforcing the structural limits; return the number of anchors and aliases."""
    depth = nodes = aliases = anchors = 0
    for event in events(text, subject):
        kind = event.__class__
        if kind is ScalarEvent:
            if len(event.value) > MAX_SCALAR_CHARS:
                raise _limit(
                    event,
                    subject,
                    f"has a value {len(event.value):,} characters long; H0 reads values up to "
                    f"{MAX_SCALAR_CHARS:,}. Move that text into the note's body.",
                    MAX_SCALAR_CHARS,
                )
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            depth += 1
            if depth > MAX_DEPTH + 1:  # the top-level mapping is not a nesting level
                raise _limit(
                    event,
                    subject,
                    f"nests lists or mappings more than {MAX_DEPTH} levels deep; H0 reads at most "
                    f"{MAX_DEPTH}. Flatten that value, or move it into the note's body.",
                    MAX_DEPTH,
                )
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            depth -= 1
            continue
        elif kind is AliasEvent:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _limit(
                    event,
                    subject,
                    f"uses more than {MAX_ALIASES} YAML aliases (*name); H0 reads at most "
                    f"{MAX_ALIASES}. Write the values out instead of referring to them.",
                    MAX_ALIASES,
                )
        else:
            continue  # stream and document events
        nodes += 1
        if nodes > MAX_NODES:
            raise _limit(
                event,
                subject,
                f"holds more than {MAX_NODES:,} keys, values and list items; H0 reads at most "
                f"{MAX_NODES:,}. Split the note, or move that data into its body.",
                MAX_NODES,
            )
        if kind is not AliasEvent and event.anchor is not None:
            anchors += 1
            if anchors > MAX_ALIASES:
                raise _limit(
                    event,
                    subject,
                    f"defines more than {MAX_ALIASES} YAML anchors (&name); H0 reads at most "
                    f"{MAX_ALIASES}. Remove the anchors.",
                    MAX_ALIASES,
                )
    return anchors + aliases


def events(text: str, subject: str = "The frontmatter") -> Iterator[Any]:
    """Parse events, from ruamel's C parser when it is installed (the one `load` uses); YAML errors as ParseError."""
    try:
        if EventParser is None:  # pragma: no cover
            yield from YAML(typ="safe", pure=True).parse(text)
            return
        parser = EventParser(text)
        try:
            while parser.check_event():
                yield parser.get_event()
        finally:
            parser.dispose()
    except YAMLError as exc:
        raise ParseError(explain(exc, text, subject), **where_of(exc)) from None
    except (ValueError, TypeError, MemoryError) as exc:  # e.g. text the encoder refuses
        raise ParseError(f"{subject} could not be parsed ({type(exc).__name__}).") from None


def _limit(event: Any, subject: str, what: str, limit: int) -> ParseError:
    line = event.start_mark.line + 1
    return ParseError(f"{subject} (line {line} of it) {what}", line=line, limit=limit)


def check_representable(frontmatter: Any) -> None:
    """Refuse frontmatter H0 could not write as YAML and read back as the same data.

    That includes anything past the limits check_bounds applies when reading: H0 never
    writes a note it would then refuse to read.
    """
    if not isinstance(frontmatter, Mapping):
        raise InvalidRequest("frontmatter must be a mapping of keys to values.")
    nodes = [0]
    chars = [0]

    def count(where: str) -> None:
        nodes[0] += 1
        if nodes[0] > MAX_NODES:
            raise InvalidRequest(
                f"The frontmatter holds more than {MAX_NODES:,} keys, values and list items; H0 writes at most "
                f"{MAX_NODES:,}. Put that data in the body.",
                field=where.rstrip(".") or None,
                limit=MAX_NODES,
            )

    def check_text(text: str, where: str) -> None:
        chars[0] += len(text)
        if chars[0] > MAX_YAML_CHARS:
            raise InvalidRequest(
                f"The frontmatter would be more than {MAX_YAML_CHARS:,} characters; H0 writes at most that. "
                "Put long text in the body.",
                field=where.rstrip(".") or None,
                limit=MAX_YAML_CHARS,
            )
        if len(text) > MAX_SCALAR_CHARS:
            raise InvalidRequest(
                f"A frontmatter value is {len(text):,} characters long; H0 writes values up to "
                f"{MAX_SCALAR_CHARS:,}. Put long text in the body.",
                field=where.rstrip(".") or None,
                limit=MAX_SCALAR_CHARS,
            )
        if _BAD_CONTROLS.search(text):
            raise InvalidRequest("A frontmatter value contains control characters YAML cannot carry.", field=where)

    def walk(value: Any, where: str, depth: int) -> None:
        count(where)
        if value is None or isinstance(value, (bool, str, dt.date)):
            if isinstance(value, str):
                check_text(value, where)
            return
        if isinstance(value, int):
            if not -_MAX_INT < value < _MAX_INT:
                raise InvalidRequest(
                    f"A frontmatter number has more than {_MAX_INT_DIGITS:,} digits; write it as a string.",
                    field=where.rstrip(".") or None,
                )
            return
        if isinstance(value, float):
            if not math.isfinite(value):
                raise InvalidRequest("A frontmatter number must be finite.", field=where)
            return
        if isinstance(value, (Mapping, list, tuple)) and depth > MAX_DEPTH:
            raise InvalidRequest(
                f"The frontmatter nests lists or mappings more than {MAX_DEPTH} levels deep.",
                field=where.rstrip(".") or None,
                limit=MAX_DEPTH,
            )
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str) or not key.strip() or any(c in key for c in "\r\n\x00"):
                    raise InvalidRequest(
                        "Frontmatter keys must be non-empty one-line strings.", field=f"{where}{shorten(repr(key))}"
                    )
                count(where)
                check_text(key, where)
                walk(item, f"{where}{shorten(key)}.", depth + 1)
            return
        if isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(item, f"{where}[{index}].", depth + 1)
            return
        raise InvalidRequest(
            f"A frontmatter value of type {type(value).__name__} is not YAML-representable.",
            field=where.rstrip(".") or None,
        )

    walk(frontmatter, "", 0)


# Python refuses to convert integers longer than 4,300 digits to and from text.
_MAX_INT_DIGITS = 4_000
_MAX_INT = 10**_MAX_INT_DIGITS
_BAD_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")  # a regex: linear, C speed
