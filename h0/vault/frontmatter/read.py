"""Frontmatter YAML read as JSON data: ruamel's C-backed safe loader, after the limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ruamel.yaml.error import YAMLError

from h0.errors import ParseError
from h0.vault.frontmatter.limits import JSON_NODE_BUDGET, MAX_DEPTH, check_bounds
from h0.vault.frontmatter.yamlhint import explain, where_of
from h0.vault.frontmatter.yamls import LOCAL, json_key, json_scalar


def load(yaml_text: str | None) -> dict[str, Any]:
    """Parse frontmatter YAML into JSON-ready data (dates as ISO strings).

    Raises ParseError for text past H0's limits (see check_bounds), invalid YAML, a top
    level that is not a mapping, duplicate keys, or alias expansion beyond JSON_NODE_BUDGET.
    """
    if yaml_text is None:
        return {}
    check_bounds(yaml_text)
    return load_checked(yaml_text)


def load_checked(yaml_text: str) -> dict[str, Any]:
    """`load` of text check_bounds has accepted."""
    try:
        data = LOCAL.safe.load(yaml_text)
    except YAMLError as exc:
        raise ParseError(explain(exc, yaml_text), **where_of(exc)) from None
    except RecursionError:
        raise ParseError("The frontmatter nests too deeply.") from None
    except Exception as exc:  # noqa: BLE001 - ruamel raises a few non-YAMLError types on odd input
        raise ParseError(f"The frontmatter could not be parsed ({type(exc).__name__}).") from None
    finally:
        # ruamel (0.19) keeps a record of every document a YAML object loaded; this one lives as long as
        # its thread, which in the daemon and the vault server is all day.
        LOCAL.safe.doc_infos.clear()
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ParseError("The frontmatter must be a mapping of keys to values.")
    mapping: dict[str, Any] = to_json(data)  # a mapping stays one
    return mapping


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
                name = json_key(key)
                if name in result:  # e.g. `1:` and `"1":`, distinct YAML keys with one JSON name
                    raise ParseError(  # its name is the note's own text: never quoted (h0.vault.frontmatter.yamlhint)
                        "The frontmatter has a key twice, written two ways that read the same (such as 1 and "
                        '"1"). Keep one of them.'
                    )
                result[name] = convert(item, depth + 1)
            return result
        if isinstance(value, (list, tuple, set, frozenset)):
            return [convert(v, depth + 1) for v in value]
        return json_scalar(value)

    return convert(data, 0)
