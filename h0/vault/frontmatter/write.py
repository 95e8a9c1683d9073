"""Frontmatter written without churn: ruamel in round-trip mode where needed, every top-level key
the caller did not change kept byte for byte by splicing its original lines back in."""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import SingleQuotedScalarString

from h0.errors import InvalidRequest, ParseError
from h0.vault.frontmatter.limits import check_representable, check_structure, check_text
from h0.vault.frontmatter.read import load_checked, to_json
from h0.vault.frontmatter.scan import NeedsFullLoader, key_line, scan
from h0.vault.frontmatter.yamls import LOCAL, json_key, resolves_to

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
        try:
            scan(text)  # flat frontmatter the fast reader takes is within them, as `load` trusts when reading
        except NeedsFullLoader:
            check_structure(text)
    except ParseError as exc:
        raise InvalidRequest(f"H0 will not write this frontmatter. {exc.message}", **exc.details) from None
    return text


def _old_blocks(old_yaml: str) -> tuple[str, dict[str, tuple[Any, str, str | None]]] | None:
    """Split old frontmatter into a header and, per top-level key, (JSON value, text, kind).

    `kind` is "timestamp" for a YAML date/datetime, "str" for a string, else None. The
    line scanner finds the blocks for the shapes it reads; anything else asks ruamel's
    round-trip loader where each key starts.
    """
    try:
        check_text(old_yaml)
    except ParseError:
        return None  # unreadable: the new frontmatter replaces it whole
    fast = _fast_blocks(old_yaml)
    if fast is not None:
        return fast
    try:
        if check_structure(old_yaml):
            return None  # anchors or aliases: a kept block could refer to an anchor in a dropped one
        old_json = load_checked(old_yaml)
        native = LOCAL.rt.load(old_yaml)  # only now: the round-trip loader is recursive pure Python
    except Exception:  # noqa: BLE001 - any failure to read the old block: the new frontmatter replaces it whole
        return None
    if not isinstance(native, CommentedMap) or not native:  # the round-trip loader's mapping, with line marks
        return None
    lines = old_yaml.splitlines(keepends=True)
    starts: list[tuple[int, Any]] = []
    for key in native:
        try:
            starts.append((native.lc.key(key)[0], key))
        except Exception:  # noqa: BLE001 - no line to keep a block by: the new frontmatter replaces it whole
            return None
    starts.sort(key=lambda item: item[0])
    if len({line for line, _ in starts}) != len(starts):
        return None  # several keys on one line (a flow mapping): no clean blocks
    header = "".join(lines[: starts[0][0]])
    blocks: dict[str, tuple[Any, str, str | None]] = {}
    for index, (line, key) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(lines)
        name = json_key(key)
        if name not in old_json:
            return None
        value = native[key]
        kind = "timestamp" if isinstance(value, dt.date) else "str" if isinstance(value, str) else None
        blocks[name] = (old_json[name], "".join(lines[line:end]), kind)
    return header, blocks


def _fast_blocks(old_yaml: str) -> tuple[str, dict[str, tuple[Any, str, str | None]]] | None:
    try:
        data = scan(old_yaml)
    except NeedsFullLoader:
        return None
    if not data:
        return None
    lines = old_yaml.splitlines(keepends=True)
    starts: list[tuple[int, str, str | None]] = []
    for index, line in enumerate(lines):
        if line[:1] in ("", " ", "\t", "-", "#", "\r", "\n"):
            continue
        try:
            key, raw = key_line(line.rstrip("\r\n"))
        except NeedsFullLoader:
            return None
        starts.append((index, key, raw))
    if [key for _, key, _ in starts] != list(data):
        return None
    header = "".join(lines[: starts[0][0]])
    blocks: dict[str, tuple[Any, str, str | None]] = {}
    for position, (index, key, raw) in enumerate(starts):
        end = starts[position + 1][0] if position + 1 < len(starts) else len(lines)
        value = data[key]
        kind: str | None = None
        if isinstance(value, str):
            plain = raw is not None and raw[:1] not in ("'", '"')
            kind = "timestamp" if plain and raw is not None and resolves_to(raw, "timestamp") else "str"
        blocks[key] = (value, "".join(lines[index:end]), kind)
    return header, blocks


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
