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

One idea a module: `text` (a note cut into BOM, block and body, and put back), `limits` (what
H0 reads and writes at most), `yamls` (ruamel set up for YAML 1.2, values as JSON), `scan` (the
fast reader), `read` (load), `write` (render).
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
from h0.vault.frontmatter.read import load, load_full, to_json
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
    "load_full",
    "render",
    "split",
    "to_json",
]
