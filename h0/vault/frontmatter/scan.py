"""The fast path of reading: a line scanner for the shapes Obsidian writes (`key: scalar`, flow
and block lists of scalars), ruamel's YAML 1.2 resolver deciding each scalar's type. Anything
else raises `NeedsFullLoader`, and the full loader reads it (the property tests pin that both agree)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ruamel.yaml.nodes import ScalarNode

from h0.vault.frontmatter.limits import MAX_NODES, MAX_SCALAR_CHARS
from h0.vault.frontmatter.yamls import LOCAL, json_scalar, resolves_to

_STR_TAG = "tag:yaml.org,2002:str"


# Linear-time patterns: no two adjacent parts can match the same characters, so a match
# costs time linear in the line (the old lazy `(.*?)[ \t]*$` was quadratic in a run of
# blanks: 60 K spaces took 18 s). Surrounding blanks are stripped in Python instead.
_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_ .\-/]*):(?:[ \t](.*))?\Z")
_ITEM = re.compile(r"( *)-(?: (.*))?\Z")
_PLAIN_BAD_START = set("-?:,[]{}#&*!|>'\"%@`")
_LINE_BREAKS_YAML_ONLY = ("\x85", "\u2028", "\u2029")  # libyaml breaks lines there; str.split does not
_MAX_SIMPLE_KEY = 1000  # libyaml forgets a possible key 1024 characters before its ':'
_MAX_CACHED = 64


class NeedsFullLoader(Exception):
    """The fast scanner met a shape it does not handle; use the full loader."""


def scan(text: str) -> dict[str, Any]:
    """Read the common flat shapes; raise NeedsFullLoader for anything else (or anything near a limit).

    The caller has checked the size and characters (check_text).
    """
    if "\r" in text.replace("\r\n", "\n") or any(ch in text for ch in _LINE_BREAKS_YAML_ONLY):
        raise NeedsFullLoader  # a line break str.split and YAML do not agree on
    result: dict[str, Any] = {}
    nodes = 1  # the top-level mapping, counted as check_bounds counts events
    list_key: str | None = None  # the key a following "- item" line belongs to
    list_indent: str | None = None  # every item of one block list has the same indent
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        if len(line) > MAX_SCALAR_CHARS:
            raise NeedsFullLoader  # let check_bounds judge long values
        content = line.lstrip(" ")
        if not content or content[0] == "#":
            continue
        if not content.strip(" \t"):
            raise NeedsFullLoader  # a blank line holding a tab: libyaml refuses some of those
        if line[0] in " \t-":
            item = _ITEM.match(line)
            if item is None or list_key is None:
                raise NeedsFullLoader
            raw = (item.group(2) or "").lstrip(" ")
            if not raw or raw[0] == "\t":
                raise NeedsFullLoader  # libyaml refuses a tab between "- " and the item
            raw = raw.rstrip(" \t")
            if list_indent is None:
                list_indent = item.group(1)
            elif item.group(1) != list_indent:
                raise NeedsFullLoader
            if result[list_key] is None:
                result[list_key] = []
            result[list_key].append(_scalar(raw))
            nodes += 1
            if nodes > MAX_NODES:
                raise NeedsFullLoader
            continue
        key, raw = key_line(line)
        if key in result:
            raise NeedsFullLoader  # duplicate key: let the full loader report it
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
            raise NeedsFullLoader
    return result


def key_line(line: str) -> tuple[str, str | None]:
    """(key, raw value or None) of a `key: value` line the scanner reads; else NeedsFullLoader."""
    match = _KEY.match(line)
    if match is None:
        raise NeedsFullLoader
    key = match.group(1).rstrip(" ")
    if match.end(1) > _MAX_SIMPLE_KEY or (
        (key[0] in _MAYBE_TYPED_START or key.lower() in _TYPED_WORDS) and not resolves_to(key, "str")
    ):
        raise NeedsFullLoader  # a key YAML reads as a number, bool or null: the loader names it
    raw = (match.group(2) or "").strip(" \t")
    return key, raw or None


def _flow_list(raw: str) -> list[Any]:
    if not raw.endswith("]") or raw.count("[") != 1 or raw.count("]") != 1 or "{" in raw:
        raise NeedsFullLoader
    inner = raw[1:-1].strip(" \t")
    if not inner:
        return []
    if '"' in inner or "'" in inner:
        raise NeedsFullLoader
    return [_scalar(part.strip(" \t"), flow=True) for part in inner.split(",")]


def _scalar(raw: str, *, flow: bool = False) -> Any:
    if not raw:
        raise NeedsFullLoader
    first = raw[0]
    if first == '"':
        if len(raw) < 2 or not raw.endswith('"'):
            raise NeedsFullLoader
        return _double_quoted(raw[1:-1])
    if first == "'":
        inner = raw[1:-1]
        if len(raw) < 2 or not raw.endswith("'") or "'" in inner.replace("''", ""):
            raise NeedsFullLoader
        return inner.replace("''", "'")
    if first in _PLAIN_BAD_START and not (first == "-" and len(raw) > 1 and (raw[1].isdigit() or raw[1] == ".")):
        raise NeedsFullLoader
    if ": " in raw or ":\t" in raw or raw.endswith(":") or " #" in raw or "\t#" in raw:
        raise NeedsFullLoader
    if flow and any(ch in raw for ch in "[]{}:?"):  # libyaml refuses `?` anywhere in a flow plain scalar
        raise NeedsFullLoader
    if raw[0] not in _MAYBE_TYPED_START and raw.lower() not in _TYPED_WORDS:
        return raw  # cannot resolve to anything but a string in YAML 1.2
    return _typed_plain(raw) if len(raw) <= _MAX_CACHED else _typed_plain.__wrapped__(raw)


def _double_quoted(inner: str) -> str:
    """A double-quoted scalar's text whose only escapes are `\\\\` and `\\"` (what H0 writes for a
    backslash or a quote); any other escape, or a bare quote, is the full loader's."""
    if "\\" not in inner:
        if '"' in inner:
            raise NeedsFullLoader
        return inner
    parts: list[str] = []
    start = 0
    while (slash := inner.find("\\", start)) >= 0:
        if '"' in inner[start:slash] or slash + 1 >= len(inner) or inner[slash + 1] not in '\\"':
            raise NeedsFullLoader
        parts += (inner[start:slash], inner[slash + 1])
        start = slash + 2
    if '"' in inner[start:]:
        raise NeedsFullLoader
    parts.append(inner[start:])
    return "".join(parts)


_MAYBE_TYPED_START = set("0123456789+-.~")
_TYPED_WORDS = {"null", "true", "false"}


@lru_cache(maxsize=4096)
def _typed_plain(raw: str) -> Any:
    """Resolve a plain scalar exactly as ruamel's YAML 1.2 loader would (cached: values repeat)."""
    tag = LOCAL.safe.resolver.resolve(ScalarNode, raw, (True, False))
    if tag == _STR_TAG:
        return raw
    node = ScalarNode(tag, raw)
    constructor = LOCAL.safe.constructor
    try:
        value = constructor.construct_object(node)
    except Exception:  # noqa: BLE001 - anything the fast path cannot construct goes to the full parser
        raise NeedsFullLoader from None
    finally:
        # construct_object memoises every node in constructed_objects, which only a whole
        # document load clears: without this, each new typed scalar (every timestamp) leaked
        # ~600 bytes for the life of the process (~10 MB per 10,000 email notes parsed).
        constructor.constructed_objects.pop(node, None)
        constructor.recursive_objects.pop(node, None)
    return json_scalar(value)
