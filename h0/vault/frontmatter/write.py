"""Frontmatter written without churn: every top-level key the caller did not change kept byte for byte by
splicing its original lines back in (where each starts: the parser's own events), the others emitted."""

from __future__ import annotations

import datetime as dt
import io
import itertools
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ruamel.yaml.events import MappingEndEvent, MappingStartEvent, ScalarEvent, SequenceEndEvent, SequenceStartEvent
from ruamel.yaml.scalarstring import SingleQuotedScalarString

from h0.errors import InvalidRequest, ParseError
from h0.vault.frontmatter.limits import check_representable, check_structure, check_text, events
from h0.vault.frontmatter.read import load_checked, to_json
from h0.vault.frontmatter.yamls import LOCAL, resolves_to

_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off"}


def render(old_yaml: str | None, new: Mapping[str, Any], newline: str = "\n") -> str:
    """Render `new` as frontmatter YAML, keeping untouched keys of `old_yaml` byte for byte.

    Keys keep the order they had in `old_yaml`; new keys are appended in the caller's
    order. A key counts as untouched when its value, read as JSON data, equals the new
    value — so a date read back as "2026-11-21" and written back stays a date.
    """
    blocks = _old_blocks(old_yaml) if old_yaml else None
    if blocks is None:
        check_representable(new)
    else:
        # Only what changes is checked: a key kept byte for byte was readable as it stands, and
        # refusing it (a subject with a control character written by someone else) would make
        # the note impossible to annotate, e.g. with the h0_error that explains why it was refused.
        kept = blocks[1]
        check_representable({k: v for k, v in new.items() if k not in kept or not _same(kept[k][0], v)})
    out: list[str] = []
    if blocks is None:
        for key, value in new.items():
            out.append(_render_key(key, value, None))
    else:
        header, ordered = blocks
        out.append(header)
        for key, (old_value, old_text, old_kind) in ordered.items():
            if key not in new:
                continue
            new_value = new[key]
            if _same(old_value, new_value):
                out.append(old_text)
            else:
                out.append(_render_key(key, new_value, old_kind))
        for key, value in new.items():
            if key not in ordered:
                out.append(_render_key(key, value, None))
    text = "".join(piece if piece.endswith("\n") or not piece else piece + "\n" for piece in out)
    text = text.replace("\r\n", "\n")
    text = text.replace("\n", newline) if newline != "\n" else text
    try:  # what H0 writes, H0 can read: kept blocks plus new keys stay within the limits
        check_text(text)
        check_structure(text)
    except ParseError as exc:
        raise InvalidRequest(f"H0 will not write this frontmatter. {exc.message}", **exc.details) from None
    return text


# Line breaks YAML counts and str.splitlines does not agree on: no block is kept where they are.
_ODD_BREAKS = re.compile("\r(?!\n)|[\x85\u2028\u2029]")
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _old_blocks(old_yaml: str) -> tuple[str, dict[str, tuple[Any, str, str | None]]] | None:
    """Split old frontmatter into a header and, per top-level key, (JSON value, text, kind).

    `kind` is "timestamp" for a YAML date/datetime, "str" for a string, else None. Where each key
    starts is the line mark of its event, from the parser `load` uses. None (the new frontmatter
    replaces the old whole) for a block that does not read, uses anchors or aliases (a kept block
    could refer to an anchor in a dropped one), has keys that are not plain lines, or line breaks
    YAML and Python count differently.
    """
    try:
        check_text(old_yaml)
        if _ODD_BREAKS.search(old_yaml) or check_structure(old_yaml):
            return None
        starts = _key_starts(old_yaml)
        old_json = load_checked(old_yaml)
    except ParseError:
        return None
    if not starts or len(starts) != len(old_json) or any(a[0] >= b[0] for a, b in itertools.pairwise(starts)):
        return None  # several keys on one line (or a key spelled twice that reads as one): no clean blocks
    lines = old_yaml.splitlines(keepends=True)
    header = "".join(lines[: starts[0][0]])
    blocks: dict[str, tuple[Any, str, str | None]] = {}
    for index, ((line, kind), name) in enumerate(zip(starts, old_json, strict=True)):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(lines)
        value = old_json[name]
        blocks[name] = (value, "".join(lines[line:end]), kind if isinstance(value, str) else None)
    return header, blocks


def _key_starts(yaml_text: str) -> list[tuple[int, str]] | None:
    """(line, kind of its value) of each top-level key, in order: "timestamp" for a value YAML reads as a
    date, else "str". None when the top level is not a block mapping of scalar keys."""
    starts: list[tuple[int, str]] = []
    depth = 0
    at_key = True
    for event in events(yaml_text):
        kind = event.__class__
        if kind is MappingStartEvent or kind is SequenceStartEvent:
            if depth == 0 and (kind is SequenceStartEvent or event.flow_style):
                return None
            if depth == 1 and at_key:
                return None  # a list or a mapping as a key
            depth += 1
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            depth -= 1
            at_key = True
        elif depth == 1 and at_key:
            if kind is not ScalarEvent:
                return None
            starts.append((event.start_mark.line, "str"))
            at_key = False
        elif depth == 1:
            if kind is ScalarEvent and (
                event.tag == _TIMESTAMP or (event.implicit[0] and resolves_to(event.value, "timestamp"))
            ):
                starts[-1] = (starts[-1][0], "timestamp")
            at_key = True
    return starts


def _same(old_json: Any, new_value: Any) -> bool:
    try:
        return json.dumps(old_json) == json.dumps(to_json(new_value))
    except (ParseError, TypeError, ValueError):
        return False


def _render_key(key: str, value: Any, old_kind: str | None) -> str:
    value = _coerce(value, old_kind)
    fast = fast_render(key, value)
    if fast is not None:
        return fast
    stream = io.StringIO()
    LOCAL.dumper.dump({key: quote_ambiguous(value)}, stream)
    return stream.getvalue()


_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")
_SAFE_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ .,@/()<>+'!?&=%$-]*\Z")


def fast_render(key: str, value: Any) -> str | None:
    """Emit the common shapes directly (ruamel's emitter costs ~0.3 ms a key); None = let ruamel do it."""
    if not _SIMPLE_KEY.match(key):
        return None
    if value is None:
        return f"{key}:\n"
    scalar = _plain_scalar(value)
    if scalar is not None:
        return f"{key}: {scalar}\n"
    if isinstance(value, list):
        if not value:
            return f"{key}: []\n"
        items = [_plain_scalar(item) for item in value]
        if all(item is not None for item in items):
            return f"{key}:\n" + "".join(f"  - {item}\n" for item in items)
    return None


def _plain_scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))  # an IntEnum's str() is its name
    if isinstance(value, dt.datetime):
        text = value.isoformat().replace("+00:00", "Z")
        return text if value.tzinfo is not None and to_json(value) == text else None
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        text = repr(value)
        return text if math.isfinite(value) and resolves_to(text, "float") and float(text) == value else None
    if isinstance(value, str):
        if (
            _SAFE_PLAIN.match(value)
            and not value.endswith(" ")
            and value.lower() not in _YAML11_WORDS
            and resolves_to(value, "str")
        ):
            return value
        # YAML 1.2 is a superset of JSON: a JSON string is a valid double-quoted scalar,
        # as long as it holds no character YAML wants escaped that JSON leaves raw.
        if not _JSON_UNSAFE.search(value):
            return json.dumps(value, ensure_ascii=False)
        return None
    return None


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")


def _coerce(value: Any, old_kind: str | None) -> Any:
    """Write ISO dates as YAML dates (Obsidian's Date property), when that reads back identically.

    A string key stays a string; anything that would not come back as exactly the same
    string stays a string.
    """
    if not isinstance(value, str) or not value[:1].isdigit() or not 10 <= len(value) <= 35:
        return value
    if old_kind == "str":
        return value  # the key held a string before: keep it a string
    candidate: Any = None
    try:
        if len(value) == 10:
            candidate = dt.date.fromisoformat(value)
        elif "T" in value or " " in value:
            candidate = dt.datetime.fromisoformat(value)
    except ValueError:
        return value
    if candidate is None or to_json(candidate) != value:
        return value
    return candidate


def quote_ambiguous(value: Any) -> Any:
    """Quote strings other YAML readers (YAML 1.1: yes/no/on/off) would not read as strings."""
    if isinstance(value, str) and value.lower() in _YAML11_WORDS:
        return SingleQuotedScalarString(value)
    if isinstance(value, Mapping):
        return {k: quote_ambiguous(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [quote_ambiguous(v) for v in value]
    return value
