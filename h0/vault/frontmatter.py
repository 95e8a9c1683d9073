"""Frontmatter: split a note, read its YAML as JSON data fast, edit it without churn.

Every input is hostile: `check_bounds` refuses frontmatter past H0's limits (size, nesting,
node and alias counts, scalar length, characters YAML forbids) before any recursive parser
sees it, in time linear in the text, stopping at the first limit hit. Reading then uses a
small line scanner for the shapes Obsidian writes (`key: scalar`, flow and block lists of
scalars) with ruamel.yaml's own YAML 1.2 resolver deciding each scalar's type, and falls
back to ruamel's C-backed safe loader for anything else, so both paths give the same answer
or both refuse (property tests pin that). Editing uses ruamel in round-trip mode, and keeps
every top-level key the caller did not change byte for byte by splicing its original lines
back in.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import math
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.scalarstring import SingleQuotedScalarString

from h0.errors import InvalidRequest, ParseError

try:  # the C event parser: iterative (a heap stack, not the C stack), and the one load uses
    from _ruamel_yaml import CParser as _CParser
except ImportError:  # pragma: no cover - ruamel.yaml.clib is a dependency
    _CParser = None

BOM = "\ufeff"

# Limits on what H0 reads (and writes: check_representable refuses what could not be read
# back). Real frontmatter is a few hundred bytes and a few dozen keys; these are far above
# that and far below what costs noticeable time or memory (see tests/security).
MAX_YAML_CHARS = 256 * 1024  # the frontmatter block, in characters
MAX_SCALAR_CHARS = 64 * 1024  # one key or one value
MAX_NODES = 10_000  # keys + values + list items, as written (an alias counts once)
MAX_DEPTH = 64  # lists/mappings nested below the top-level mapping
MAX_ALIASES = 100  # `*name` references; as many `&name` anchors
JSON_NODE_BUDGET = 20_000  # values after aliases are expanded; a YAML alias bomb blows far past it

_OPEN = re.compile(r"---[ \t]*(\r?\n|$)")
_CLOSE = re.compile(r"^(---|\.\.\.)[ \t]*(?:\r?\n|$)", re.MULTILINE)
# What YAML (libyaml) refuses in a stream: C0/C1 controls other than tab and line breaks,
# DEL, lone surrogates, U+FFFE and U+FFFF.
_NOT_YAML = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


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
    """Cut a note into BOM, frontmatter YAML and body; raise ParseError if `---` is unclosed.

    The closing line is looked for only within MAX_YAML_CHARS of the opening one, so a
    10 MB note costs the same as a 256 KB one.
    """
    bom = BOM if text.startswith(BOM) else ""
    rest = text[len(bom) :]
    newline = "\r\n" if "\r\n" in rest[:4096] else "\n"
    opened = _OPEN.match(rest)
    if not opened:
        return Split(bom, newline, None, rest)
    start = opened.end()
    if not opened.group(1):  # the file is just "---"
        raise ParseError("The frontmatter block opened with '---' is never closed.")
    window = min(len(rest), start + MAX_YAML_CHARS + 8)  # room for the closing line itself
    closed = _CLOSE.search(rest, start, window)
    if closed and closed.end() == window < len(rest):
        closed = _CLOSE.match(rest, closed.start())  # the window cut that line: read all of it
    if not closed and window < len(rest):
        raise ParseError(
            f"The frontmatter block opened with '---' is not closed within {MAX_YAML_CHARS:,} characters "
            f"({MAX_YAML_CHARS // 1024} KiB), the most H0 reads. Close it with a '---' line, and move long "
            "text below that line, into the note's body.",
            limit=MAX_YAML_CHARS,
        )
    if not closed:
        raise ParseError("The frontmatter block opened with '---' is never closed.")
    open_line = rest[: opened.end()].rstrip("\r\n")
    close_line = closed.group(0).rstrip("\r\n")
    return Split(bom, newline, rest[start : closed.start()], rest[closed.end() :], open_line, close_line)


# --------------------------------------------------------------------------- bounds


def check_bounds(yaml_text: str, subject: str = "The frontmatter") -> None:
    """Refuse YAML past H0's limits with a ParseError saying which limit and how to fix the note.

    Call it before handing hostile text to any YAML parser: ruamel composes and constructs
    recursively, and past ~30,000 nesting levels its C composer overflows the C stack
    (SIGSEGV, not an exception). This walks the events of the iterative C parser — the very
    tokenizer the loader uses, so quotes, comments and flow/block context are judged exactly
    as the loader will — and stops at the first limit hit: a refused note costs microseconds
    to a few milliseconds, whatever its size. `subject` starts each message (e.g. "The rules block").
    """
    _check_text(yaml_text, subject)
    _check_structure(yaml_text, subject)


def _check_text(text: str, subject: str = "The frontmatter") -> None:
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


def _check_structure(text: str, subject: str = "The frontmatter") -> int:
    """Walk the parse events, enforcing the structural limits; return the number of anchors and aliases."""
    depth = nodes = aliases = anchors = 0
    for event in _events(text, subject):
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


def _events(text: str, subject: str = "The frontmatter") -> Iterator[Any]:
    """Parse events, from ruamel's C parser when it is installed; YAML errors as ParseError."""
    try:
        if _CParser is None:  # pragma: no cover
            yield from YAML(typ="safe", pure=True).parse(text)
            return
        parser = _CParser(text)
        try:
            while parser.check_event():
                yield parser.get_event()
        finally:
            parser.dispose()
    except YAMLError as exc:
        raise ParseError(f"{subject} is not valid YAML: {_first_line(exc)}") from None
    except (ValueError, TypeError, MemoryError) as exc:  # e.g. text the encoder refuses
        raise ParseError(f"{subject} could not be parsed: {exc}") from None


def _limit(event: Any, subject: str, what: str, limit: int) -> ParseError:
    line = event.start_mark.line + 1
    return ParseError(f"{subject} (line {line} of it) {what}", line=line, limit=limit)


# --------------------------------------------------------------------------- reading


class _Constructor(SafeConstructor):
    """YAML 1.2 as ruamel reads it, with three changes.

    A zero-padded integer such as a ZIP code `01234` stays a string. `<<` is an ordinary
    key, not YAML 1.1's merge key (not part of YAML 1.2): merges of merges expand
    exponentially, 2.5 KB of them took 74 s. And `=` / `<<` as values are strings, as
    YAML 1.2 reads them, instead of failing to construct.
    """

    def construct_yaml_int(self, node: Any) -> Any:
        if isinstance(node.value, str) and _LEADING_ZERO_INT.match(node.value):
            return node.value
        return super().construct_yaml_int(node)

    def flatten_mapping(self, node: Any) -> None:
        return None


_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)
_Constructor.add_constructor("tag:yaml.org,2002:merge", _Constructor.construct_yaml_str)
_Constructor.add_constructor("tag:yaml.org,2002:value", _Constructor.construct_yaml_str)


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
        self.dumper.representer.ignore_aliases = lambda data: True  # write shared values out in full


_local = _Local()
_STR_TAG = "tag:yaml.org,2002:str"
# Linear-time patterns: no two adjacent parts can match the same characters, so a match
# costs time linear in the line (the old lazy `(.*?)[ \t]*$` was quadratic in a run of
# blanks: 60 K spaces took 18 s). Surrounding blanks are stripped in Python instead.
_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_ .\-/]*):(?:[ \t](.*))?\Z")
_ITEM = re.compile(r"( *)-(?: (.*))?\Z")
_LEADING_ZERO_INT = re.compile(r"[-+]?0[0-9_]+$")
_PLAIN_BAD_START = set("-?:,[]{}#&*!|>'\"%@`")
_LINE_BREAKS_YAML_ONLY = ("\x85", "\u2028", "\u2029")  # libyaml breaks lines there; str.split does not
_MAX_SIMPLE_KEY = 1000  # libyaml forgets a possible key 1024 characters before its ':'
_MAX_CACHED = 64


class _Fallback(Exception):
    """The fast scanner met a shape it does not handle; use the full loader."""


def load(yaml_text: str | None) -> dict[str, Any]:
    """Parse frontmatter YAML into JSON-ready data (dates as ISO strings).

    Raises ParseError for text past H0's limits (see check_bounds), invalid YAML, a top
    level that is not a mapping, duplicate keys, or alias expansion beyond JSON_NODE_BUDGET.
    """
    if yaml_text is None:
        return {}
    _check_text(yaml_text)
    try:
        return _scan(yaml_text)
    except _Fallback:
        pass
    return load_full(yaml_text)


def load_full(yaml_text: str) -> dict[str, Any]:
    """Parse with ruamel's safe loader (no fast path), after check_bounds."""
    check_bounds(yaml_text)
    return _load_checked(yaml_text)


def _load_checked(yaml_text: str) -> dict[str, Any]:
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
    """Read the common flat shapes; raise _Fallback for anything else (or anything near a limit).

    The caller has checked the size and characters (_check_text).
    """
    if "\r" in text.replace("\r\n", "\n") or any(ch in text for ch in _LINE_BREAKS_YAML_ONLY):
        raise _Fallback  # a line break str.split and YAML do not agree on
    result: dict[str, Any] = {}
    nodes = 1  # the top-level mapping, counted as check_bounds counts events
    list_key: str | None = None  # the key a following "- item" line belongs to
    list_indent: str | None = None  # every item of one block list has the same indent
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        if len(line) > MAX_SCALAR_CHARS:
            raise _Fallback  # let check_bounds judge long values
        content = line.lstrip(" ")
        if not content or content[0] == "#":
            continue
        if not content.strip(" \t"):
            raise _Fallback  # a blank line holding a tab: libyaml refuses some of those
        if line[0] in " \t-":
            item = _ITEM.match(line)
            if item is None or list_key is None:
                raise _Fallback
            raw = (item.group(2) or "").lstrip(" ")
            if not raw or raw[0] == "\t":
                raise _Fallback  # libyaml refuses a tab between "- " and the item
            raw = raw.rstrip(" \t")
            if list_indent is None:
                list_indent = item.group(1)
            elif item.group(1) != list_indent:
                raise _Fallback
            if result[list_key] is None:
                result[list_key] = []
            result[list_key].append(_scalar(raw))
            nodes += 1
            if nodes > MAX_NODES:
                raise _Fallback
            continue
        key, raw = _key_line(line)
        if key in result:
            raise _Fallback  # duplicate key: let the full loader report it
        list_key = list_indent = None
        if raw is None:
            result[key] = None
            list_key = key
        elif raw.startswith("["):
            result[key] = _flow_list(raw)
            nodes += len(result[key])
        else:
            result[key] = _scalar(raw)
        nodes += 2
        if nodes > MAX_NODES:
            raise _Fallback
    return result


def _key_line(line: str) -> tuple[str, str | None]:
    """(key, raw value or None) of a `key: value` line the scanner reads; else _Fallback."""
    match = _KEY.match(line)
    if match is None:
        raise _Fallback
    key = match.group(1).rstrip(" ")
    if match.end(1) > _MAX_SIMPLE_KEY or (
        (key[0] in _MAYBE_TYPED_START or key.lower() in _TYPED_WORDS) and not _resolves_to(key, "str")
    ):
        raise _Fallback  # a key YAML reads as a number, bool or null: the loader names it
    raw = (match.group(2) or "").strip(" \t")
    return key, raw or None


def _flow_list(raw: str) -> list[Any]:
    if not raw.endswith("]") or raw.count("[") != 1 or raw.count("]") != 1 or "{" in raw:
        raise _Fallback
    inner = raw[1:-1].strip(" \t")
    if not inner:
        return []
    if '"' in inner or "'" in inner:
        raise _Fallback
    return [_scalar(part.strip(" \t"), flow=True) for part in inner.split(",")]


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
    if ": " in raw or ":\t" in raw or raw.endswith(":") or " #" in raw or "\t#" in raw:
        raise _Fallback
    if flow and any(ch in raw for ch in "[]{}:?"):  # libyaml refuses `?` anywhere in a flow plain scalar
        raise _Fallback
    if raw[0] not in _MAYBE_TYPED_START and raw.lower() not in _TYPED_WORDS:
        return raw  # cannot resolve to anything but a string in YAML 1.2
    return _typed_plain(raw) if len(raw) <= _MAX_CACHED else _typed_plain.__wrapped__(raw)


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
        if depth > MAX_DEPTH and isinstance(value, (Mapping, list, tuple, set, frozenset)):
            raise ParseError(
                f"The frontmatter nests lists or mappings more than {MAX_DEPTH} levels deep.", limit=MAX_DEPTH
            )
        if isinstance(value, Mapping):
            result: dict[str, Any] = {}
            for key, item in value.items():
                name = _key(key)
                if name in result:  # e.g. `1:` and `"1":`, distinct YAML keys with one JSON name
                    raise ParseError(
                        f"The frontmatter has the key {_shorten(name)!r} twice (written two ways that read "
                        "the same). Keep one of them.",
                        key=_shorten(name),
                    )
                result[name] = convert(item, depth + 1)
            return result
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


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return " ".join(part.strip() for part in text[:3]) if text else type(exc).__name__


# --------------------------------------------------------------------------- writing

_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off"}


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
                        "Frontmatter keys must be non-empty one-line strings.", field=f"{where}{_shorten(repr(key))}"
                    )
                count(where)
                check_text(key, where)
                walk(item, f"{where}{_shorten(key)}.", depth + 1)
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
    try:
        check_bounds(text)  # what H0 writes, H0 can read: kept blocks plus new keys stay within the limits
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
        _check_text(old_yaml)
    except ParseError:
        return None  # unreadable: the new frontmatter replaces it whole
    fast = _fast_blocks(old_yaml)
    if fast is not None:
        return fast
    try:
        if _check_structure(old_yaml):
            return None  # anchors or aliases: a kept block could refer to an anchor in a dropped one
        old_json = _load_checked(old_yaml)
        native = _local.rt.load(old_yaml)  # only now: the round-trip loader is recursive pure Python
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
        try:
            key, raw = _key_line(line.rstrip("\r\n"))
        except _Fallback:
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
        return str(int(value))  # an IntEnum's str() is its name
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
        if not _OPEN.match((bom + body).removeprefix(BOM)):
            return bom + body
        frontmatter_yaml = ""  # a body starting with '---' would be read as frontmatter: an empty block keeps it body
    open_line = parts.open_line if parts and parts.yaml is not None else "---"
    close_line = parts.close_line if parts and parts.yaml is not None else "---"
    return f"{bom}{open_line}{newline}{frontmatter_yaml}{close_line}{newline}{body}"
