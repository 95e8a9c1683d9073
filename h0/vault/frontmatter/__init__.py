"""Frontmatter: split a note, read its YAML as JSON data, edit it without churn.

Every input is hostile: `check_bounds` refuses frontmatter past H0's limits (size, nesting,
node and alias counts, scalar length, characters YAML forbids) before any recursive parser
sees it, in time linear in the text, stopping at the first limit hit. Reading then is ruamel.yaml's
C-backed safe loader, H0's one YAML parser (two parsers of the same bytes would one day disagree).
Editing keeps every top-level key the caller did not change byte for byte, by splicing its original
lines back in: where each key starts is the same parser's answer (its events' line marks).

One idea a module: `text` (a note cut into BOM, block and body, and put back), `limits` (what
H0 reads and writes at most), `yamls` (ruamel set up for YAML 1.2, values as JSON), `read` (load),
`write` (render).
"""

from h0.vault.frontmatter.limits import (
    JSON_NODE_BUDGET,
    MAX_ALIASES,
    MAX_DEPTH,
    MAX_NODES,
    MAX_SCALAR_CHARS,
    MAX_YAML_CHARS,
    check_bounds,
    check_representable,
)
from h0.vault.frontmatter.read import load, to_json
from h0.vault.frontmatter.text import BOM, Split, compose, split
from h0.vault.frontmatter.write import render

__all__ = [
    "BOM",
    "JSON_NODE_BUDGET",
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_SCALAR_CHARS",
    "MAX_YAML_CHARS",
    "Split",
    "check_bounds",
    "check_representable",
    "compose",
    "load",
    "render",
    "split",
    "to_json",
]
