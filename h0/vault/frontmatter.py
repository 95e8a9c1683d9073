"""Frontmatter: split a note, read its YAML as JSON data fast, edit it without churn.

Reading uses a small line scanner for the shapes Obsidian writes (`key: scalar`, flow
and block lists of scalars) with ruamel.yaml's own YAML 1.2 resolver deciding each
scalar's type, and falls back to ruamel's C-backed safe loader for anything else, so
both paths give the same answer (a test pins that). Editing uses ruamel in round-trip
mode, and keeps every top-level key the caller did not change byte for byte by
splicing its original lines back in.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.scalarstring import SingleQuotedScalarString

from h0.errors import InvalidRequest, ParseError

BOM = "\ufeff"
JSON_NODE_BUDGET = 20_000  # expanded nodes; a YAML alias bomb blows far past it
MAX_DEPTH = 64

_OPEN = re.compile(r"---[ \t]*(\r?\n|$)")
_CLOSE = re.compile(r"^(---|\.\.\.)[ \t]*(?:\r?\n|$)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Split:
    """A note's text cut into its parts; `yaml is None` when there is no frontmatter block."""

    bom: str
    newline: str
    yaml: str | None
    body: str
    open_line: str = "---"
    close_line: str = "---"


def split(text: str) -> Split:
    """Cut a note into BOM, frontmatter YAML and body; raise ParseError if `---` is unclosed."""
    bom = BOM if text.startswith(BOM) else ""
    rest = text[len(bom) :]
    newline = "\r\n" if "\r\n" in rest[:4096] else "\n"
    opened = _OPEN.match(rest)
    if not opened:
        return Split(bom, newline, None, rest)
    start = opened.end()
    if not opened.group(1):  # the file is just "---"
        raise ParseError("The frontmatter block opened with '---' is never closed.")
    closed = _CLOSE.search(rest, start)
    if not closed:
        raise ParseError("The frontmatter block opened with '---' is never closed.")
    open_line = rest[: opened.end()].rstrip("\r\n")
    close_line = closed.group(0).rstrip("\r\n")
    return Split(bom, newline, rest[start : closed.start()], rest[closed.end() :], open_line, close_line)


# --------------------------------------------------------------------------- reading


class _Constructor(SafeConstructor):
    """YAML 1.2, except that a zero-padded integer such as a ZIP code `01234` stays a string."""

    def construct_yaml_int(self, node: Any) -> Any:
        if isinstance(node.value, str) and _LEADING_ZERO_INT.match(node.value):
            return node.value
        return super().construct_yaml_int(node)


_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)


class _Local(threading.local):
    def __init__(self) -> None:
        self.safe = YAML(typ="safe")  # C-backed where ruamel.yaml.clib is installed
        self.safe.Constructor = _Constructor
        self.rt = YAML(typ="rt")
        self.rt.preserve_quotes = True
        self.dumper = YAML(typ="rt")
        self.dumper.width = 4096
        self.dumper.allow_unicode = True
        self.dumper.indent(mapping=2, sequence=4, offset=2)


_local = _Local()
_STR_TAG = "tag:yaml.org,2002:str"
_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_ .\-/]*?)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")
_ITEM = re.compile(r"([ \t]*)-(?:[ \t]+(.*?))?[ \t]*$")
_LEADING_ZERO_INT = re.compile(r"[-+]?0[0-9_]+$")
_PLAIN_BAD_START = set("-?:,[]{}#&*!|>'\"%@`")


class _Fallback(Exception):
    """The fast scanner met a shape it does not handle; use the full loader."""


def load(yaml_text: str | None) -> dict[str, Any]:
    """Parse frontmatter YAML into JSON-ready data (dates as ISO strings).

    Raises ParseError for invalid YAML, a top level that is not a mapping, duplicate
    keys, or alias expansion beyond JSON_NODE_BUDGET.
    """
    if yaml_text is None or not yaml_text.strip():
        return {}
    try:
        return _scan(yaml_text)
    except _Fallback:
        pass
    return load_full(yaml_text)


def load_full(yaml_text: str) -> dict[str, Any]:
    """Parse with ruamel's safe loader (no fast path)."""
    try:
        data = _local.safe.load(yaml_text)
    except YAMLError as exc:
        raise ParseError(f"The frontmatter is not valid YAML: {_first_line(exc)}") from None
    except RecursionError:
        raise ParseError("The frontmatter nests too deeply.") from None
    except Exception as exc:  # ruamel raises a few non-YAMLError types on odd input
        raise ParseError(f"The frontmatter could not be parsed: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ParseError("The frontmatter must be a mapping of keys to values.")
    return to_json(data)


def _scan(text: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    list_key: str | None = None  # the key a following "- item" line belongs to
    list_indent: str | None = None  # every item of one block list has the same indent
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[0] in " \t-":
            item = _ITEM.match(line)
            if item is None or list_key is None or item.group(2) is None:
                raise _Fallback
            if list_indent is None:
                list_indent = item.group(1)
            elif item.group(1) != list_indent:
                raise _Fallback
            if result[list_key] is None:
                result[list_key] = []
            result[list_key].append(_scalar(item.group(2)))
            continue
        match = _KEY.match(line)
        if match is None:
            raise _Fallback
        key, raw = match.group(1), match.group(2)
        if key in result:
            raise _Fallback  # duplicate key: let the full loader report it
        list_key = list_indent = None
        if raw is None:
            result[key] = None
            list_key = key
        elif raw.startswith("["):
            result[key] = _flow_list(raw)
        else:
            result[key] = _scalar(raw)
    return result


def _flow_list(raw: str) -> list[Any]:
    if not raw.endswith("]") or raw.count("[") != 1 or raw.count("]") != 1 or "{" in raw:
        raise _Fallback
    inner = raw[1:-1].strip()
    if not inner:
        return []
    if '"' in inner or "'" in inner:
        raise _Fallback
    return [_scalar(part.strip(), flow=True) for part in inner.split(",")]


def _scalar(raw: str, *, flow: bool = False) -> Any:
    if not raw:
        raise _Fallback
    first = raw[0]
    if first == '"':
        if len(raw) < 2 or not raw.endswith('"') or "\\" in raw or '"' in raw[1:-1]:
            raise _Fallback
        return raw[1:-1]
    if first == "'":
        inner = raw[1:-1]
        if len(raw) < 2 or not raw.endswith("'") or "'" in inner.replace("''", ""):
            raise _Fallback
        return inner.replace("''", "'")
    if first in _PLAIN_BAD_START and not (first == "-" and len(raw) > 1 and (raw[1].isdigit() or raw[1] == ".")):
        raise _Fallback
    if ": " in raw or raw.endswith(":") or " #" in raw or "\t#" in raw:
        raise _Fallback
    if flow and any(ch in raw for ch in "[]{}:"):
        raise _Fallback
    if raw[0] not in _MAYBE_TYPED_START and raw.lower() not in _TYPED_WORDS:
        return raw  # cannot resolve to anything but a string in YAML 1.2
    return _typed_plain(raw)


_MAYBE_TYPED_START = set("0123456789+-.~")
_TYPED_WORDS = {"null", "true", "false"}


@lru_cache(maxsize=4096)
def _typed_plain(raw: str) -> Any:
    """Resolve a plain scalar exactly as ruamel's YAML 1.2 loader would (cached: values repeat)."""
    tag = _local.safe.resolver.resolve(ScalarNode, raw, (True, False))
    if tag == _STR_TAG:
        return raw
    node = ScalarNode(tag, raw)
    constructor = _local.safe.constructor
    try:
        value = constructor.construct_object(node)
    except Exception:
        raise _Fallback from None
    finally:
        # construct_object memoises every node in constructed_objects, which only a whole
        # document load clears: without this, each new typed scalar (every timestamp) leaked
        # ~600 bytes for the life of the process (~10 MB per 10,000 email notes parsed).
        constructor.constructed_objects.pop(node, None)
        constructor.recursive_objects.pop(node, None)
    return _json_scalar(value)


def _json_scalar(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def to_json(data: Any) -> Any:
    """Convert YAML-loaded data to plain JSON values, refusing alias bombs."""
    budget = [JSON_NODE_BUDGET]

    def convert(value: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise ParseError(
                "The frontmatter expands to too many values (a YAML alias bomb?).",
                limit=JSON_NODE_BUDGET,
            )
        if depth > MAX_DEPTH:
            raise ParseError("The frontmatter nests too deeply.", limit=MAX_DEPTH)
        if isinstance(value, Mapping):
            return {_key(k): convert(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [convert(v, depth + 1) for v in value]
        return _json_scalar(value)

    return convert(data, 0)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return str(key)
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    return str(_json_scalar(key))


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return " ".join(part.strip() for part in text[:3]) if text else type(exc).__name__


# --------------------------------------------------------------------------- writing

_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off"}


def check_representable(frontmatter: Any) -> None:
    """Refuse frontmatter H0 could not write as YAML and read back as the same data."""
    if not isinstance(frontmatter, Mapping):
        raise InvalidRequest("frontmatter must be a mapping of keys to values.")

    def walk(value: Any, where: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise InvalidRequest("The frontmatter nests too deeply.", field=where)
        if value is None or isinstance(value, (bool, int, str, dt.date)):
            if isinstance(value, str) and ("\x00" in value or _has_bad_controls(value)):
                raise InvalidRequest("A frontmatter value contains control characters YAML cannot carry.", field=where)
            return
        if isinstance(value, float):
            if not math.isfinite(value):
                raise InvalidRequest("A frontmatter number must be finite.", field=where)
            return
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str) or not key.strip() or any(c in key for c in "\r\n\x00"):
                    raise InvalidRequest("Frontmatter keys must be non-empty one-line strings.", field=f"{where}{key!r}")
                walk(item, f"{where}{key}.", depth + 1)
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


def _has_bad_controls(text: str) -> bool:
    return any(ord(c) < 32 and c not in "\t\n\r" or 0xD800 <= ord(c) <= 0xDFFF for c in text)


def render(old_yaml: str | None, new: Mapping[str, Any], newline: str = "\n") -> str:
    """Render `new` as frontmatter YAML, keeping untouched keys of `old_yaml` byte for byte.

    Keys keep the order they had in `old_yaml`; new keys are appended in the caller's
    order. A key counts as untouched when its value, read as JSON data, equals the new
    value — so a date read back as "2026-11-21" and written back stays a date.
    """
    check_representable(new)
    blocks = _old_blocks(old_yaml) if old_yaml else None
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
    return text.replace("\n", newline) if newline != "\n" else text


def _old_blocks(old_yaml: str) -> tuple[str, dict[str, tuple[Any, str, str | None]]] | None:
    """Split old frontmatter into a header and, per top-level key, (JSON value, text, kind).

    `kind` is "timestamp" for a YAML date/datetime, "str" for a string, else None. The
    line scanner finds the blocks for the shapes it reads; anything else asks ruamel's
    round-trip loader where each key starts.
    """
    fast = _fast_blocks(old_yaml)
    if fast is not None:
        return fast
    try:
        native = _local.rt.load(old_yaml)
        old_json = load(old_yaml)
    except Exception:
        return None
    if not isinstance(native, Mapping) or not native:
        return None
    lines = old_yaml.splitlines(keepends=True)
    starts: list[tuple[int, Any]] = []
    for key in native:
        try:
            starts.append((native.lc.key(key)[0], key))
        except Exception:
            return None
    starts.sort(key=lambda item: item[0])
    if len({line for line, _ in starts}) != len(starts):
        return None  # several keys on one line (a flow mapping): no clean blocks
    header = "".join(lines[: starts[0][0]])
    blocks: dict[str, tuple[Any, str, str | None]] = {}
    for index, (line, key) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(lines)
        name = _key(key)
        if name not in old_json:
            return None
        value = native[key]
        kind = "timestamp" if isinstance(value, dt.date) else "str" if isinstance(value, str) else None
        blocks[name] = (old_json[name], "".join(lines[line:end]), kind)
    return header, blocks


def _fast_blocks(old_yaml: str) -> tuple[str, dict[str, tuple[Any, str, str | None]]] | None:
    try:
        data = _scan(old_yaml)
    except _Fallback:
        return None
    if not data:
        return None
    lines = old_yaml.splitlines(keepends=True)
    starts: list[tuple[int, str, str | None]] = []
    for index, line in enumerate(lines):
        if line[:1] in ("", " ", "\t", "-", "#", "\r", "\n"):
            continue
        match = _KEY.match(line.rstrip("\r\n"))
        if match is None:
            return None
        starts.append((index, match.group(1), match.group(2)))
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
            kind = "timestamp" if plain and _resolves_to(raw, "timestamp") else "str"
        blocks[key] = (value, "".join(lines[index:end]), kind)
    return header, blocks


def _resolves_to(raw: str, kind: str) -> bool:
    return _local.safe.resolver.resolve(ScalarNode, raw, (True, False)) == f"tag:yaml.org,2002:{kind}"


def _same(old_json: Any, new_value: Any) -> bool:
    try:
        return json.dumps(old_json) == json.dumps(to_json(new_value))
    except (ParseError, TypeError, ValueError):
        return False


def _render_key(key: str, value: Any, old_kind: str | None) -> str:
    value = _coerce(value, old_kind)
    fast = _fast_render(key, value)
    if fast is not None:
        return fast
    stream = io.StringIO()
    _local.dumper.dump({key: _quote_ambiguous(value)}, stream)
    return stream.getvalue()


_SIMPLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")
_SAFE_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ .,@/()<>+'!?&=%$-]*\Z")


def _fast_render(key: str, value: Any) -> str | None:
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
        return str(value)
    if isinstance(value, dt.datetime):
        text = value.isoformat().replace("+00:00", "Z")
        return text if value.tzinfo is not None and to_json(value) == text else None
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        text = repr(value)
        return text if math.isfinite(value) and _resolves_to(text, "float") and float(text) == value else None
    if isinstance(value, str):
        if _SAFE_PLAIN.match(value) and not value.endswith(" ") and value.lower() not in _YAML11_WORDS:
            if _resolves_to(value, "str"):
                return value
        # YAML 1.2 is a superset of JSON: a JSON string is a valid double-quoted scalar,
        # as long as it holds no character YAML wants escaped that JSON leaves raw.
        if not _JSON_UNSAFE.search(value):
            return json.dumps(value, ensure_ascii=False)
        return None
    return None


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")


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
            candidate = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if candidate is None or to_json(candidate) != value:
        return value
    return candidate


def _quote_ambiguous(value: Any) -> Any:
    """Quote strings other YAML readers (YAML 1.1: yes/no/on/off) would not read as strings."""
    if isinstance(value, str) and value.lower() in _YAML11_WORDS:
        return SingleQuotedScalarString(value)
    if isinstance(value, Mapping):
        return {k: _quote_ambiguous(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_quote_ambiguous(v) for v in value]
    return value


def compose(parts: Split | None, frontmatter_yaml: str | None, body: str) -> str:
    """Assemble note text from (old) parts, new frontmatter YAML and a body."""
    bom = parts.bom if parts else ""
    newline = parts.newline if parts else "\n"
    if frontmatter_yaml is None:
        return bom + body
    open_line = parts.open_line if parts and parts.yaml is not None else "---"
    close_line = parts.close_line if parts and parts.yaml is not None else "---"
    return f"{bom}{open_line}{newline}{frontmatter_yaml}{close_line}{newline}{body}"
