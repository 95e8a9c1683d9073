"""The YAML machinery H0 reads and writes frontmatter with: ruamel.yaml set up for YAML 1.2 as
Obsidian writes it (one set per thread), and how its values become JSON data."""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
import math
import re
import threading
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

# The C event parser (ruamel.yaml.clib): iterative, a heap stack and not the C stack; the one load uses.
EventParser: type[Any] | None
try:
    from ruamel.yaml.cyaml import CBaseLoader

    EventParser = CBaseLoader
except ImportError:  # pragma: no cover - ruamel.yaml.clib is a dependency
    EventParser = None

_LEADING_ZERO_INT = re.compile(r"[-+]?0[0-9_]+$")


class _Constructor(SafeConstructor):
    """YAML 1.2 as ruamel reads it, with four changes.

    A zero-padded integer such as a ZIP code `01234` stays a string. A timestamp that is no real
    moment (`0000-01-01`, `2026-02-30`, hour 25) stays the string it is: one impossible date must
    not make the whole note unreadable; whoever reads that property says what is wrong with it
    (h0.vault.dates). `<<` is an ordinary
    key, not YAML 1.1's merge key (not part of YAML 1.2): merges of merges expand
    exponentially, 2.5 KB of them took 74 s. And `=` / `<<` as values are strings, as
    YAML 1.2 reads them, instead of failing to construct.
    """

    def construct_yaml_int(self, node: Any) -> Any:
        if isinstance(node.value, str) and _LEADING_ZERO_INT.match(node.value):
            return node.value
        return super().construct_yaml_int(node)

    def construct_yaml_timestamp(self, node: Any, values: Any = None) -> Any:
        try:
            return super().construct_yaml_timestamp(node, values)
        except (ValueError, OverflowError):
            return str(node.value)

    def flatten_mapping(self, node: Any) -> None:
        return None


_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)
_Constructor.add_constructor("tag:yaml.org,2002:timestamp", _Constructor.construct_yaml_timestamp)
_Constructor.add_constructor("tag:yaml.org,2002:merge", _Constructor.construct_yaml_str)
_Constructor.add_constructor("tag:yaml.org,2002:value", _Constructor.construct_yaml_str)


_MAX_RESOLVED = 4_096  # plain scalars whose type is kept (a vault repeats its statuses, senders, dates)
_MAX_RESOLVED_CHARS = 80  # longer ones (subjects, hashes) rarely repeat
_resolved: dict[tuple[Any, str], Any] = {}


class _Resolver(VersionedResolver):
    """ruamel's own YAML resolver, its answer for a short plain scalar kept: the same regular expressions
    asked once per (YAML version, text) instead of for every value of every note (they were a third of
    a load). The answer depends on the version and the text alone; bounded, and thread-safe under the GIL."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not ScalarNode or not implicit[0] or len(value) > _MAX_RESOLVED_CHARS:
            return super().resolve(kind, value, implicit)
        version = self.__dict__.get("_version_read")
        if version is None:  # ruamel finds it through two exceptions a call; one document has one version
            version = self.__dict__["_version_read"] = self.processing_version
        key = (version, value)
        tag = _resolved.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_resolved) >= _MAX_RESOLVED:
                _resolved.clear()
            _resolved[key] = tag
        return tag


class _Local(threading.local):
    def __init__(self) -> None:
        self.safe = YAML(typ="safe")  # C-backed where ruamel.yaml.clib is installed
        self.safe.Constructor = _Constructor
        self.safe.Resolver = _Resolver
        self.dumper = YAML(typ="rt")
        self.dumper.width = 4096
        self.dumper.allow_unicode = True
        self.dumper.indent(mapping=2, sequence=4, offset=2)
        self.dumper.representer.ignore_aliases = lambda data: True  # write shared values out in full


LOCAL = _Local()


@functools.lru_cache(maxsize=8192)
def resolves_to(raw: str, kind: str) -> bool:
    """Whether a plain scalar `raw` reads as YAML type `kind` ("str", "timestamp", "float").

    Asked for every value H0 renders or keeps, so kept: ruamel's resolver is pure Python (about a
    tenth of the vault server's CPU in a triage burst), and a vault repeats its values (statuses,
    senders, folders). The answer depends on the text alone: the safe loader's YAML 1.2 rules."""
    tag: str = LOCAL.safe.resolver.resolve(ScalarNode, raw, (True, False))
    return tag == f"tag:yaml.org,2002:{kind}"


def json_scalar(value: Any) -> Any:
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


def json_key(key: Any) -> str:
    if isinstance(key, str):
        return str(key)
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    return str(json_scalar(key))


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
