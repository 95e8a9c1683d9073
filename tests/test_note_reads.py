"""The note model is the only way to read a note: outside h0/vault/, no module reads a raw frontmatter key.

Read from the source with `ast`, nothing imported (the style of tests/test_layers.py). A raw read is
`<x>.frontmatter.get(...)`, `<x>.frontmatter[...]` or `"key" in <x>.frontmatter` — and the same on a
variable named `frontmatter`, `fm` or `meta`, the names a note's frontmatter goes by. Writing keys,
and copying the whole mapping to write it back, are not reads. What a note says is asked of
`Note.facts` (h0/vault/model.py) instead; the few reads left show the owner what a person wrote,
exactly as written, and decide nothing: each is named in ALLOWED with why.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
H0 = ROOT / "h0"
VAULT = H0 / "vault"
NAMES = frozenset({"frontmatter", "fm", "meta"})

# (module, function) -> (how many raw reads, why they are only a display of what the person wrote). Empty:
# what a person wrote is shown from the model too (`NoteFacts.email.to_written`, `received_written`, …).
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {}


def _is_frontmatter(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in NAMES
    return isinstance(node, ast.Attribute) and node.attr == "frontmatter"


def raw_reads(source: str) -> list[tuple[int, str]]:
    """(line, enclosing function) of each raw frontmatter read in one module's source."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        read = (
            (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and _is_frontmatter(node.func.value)
            )
            or (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_frontmatter(node.value))
            or (
                isinstance(node, ast.Compare)
                and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
                and any(_is_frontmatter(c) for c in node.comparators)
            )
        )
        if read:
            found.append((getattr(node, "lineno", 0), function))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(source), "<module>")
    return found


def reads_outside_the_vault() -> dict[tuple[str, str], list[int]]:
    reads: dict[tuple[str, str], list[int]] = {}
    for path in sorted(H0.rglob("*.py")):
        if VAULT in path.parents:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for line, function in raw_reads(path.read_text(encoding="utf-8")):
            reads.setdefault((rel, function), []).append(line)
    return reads


def test_the_detector_finds_each_shape_of_a_raw_read_and_no_write():
    """Given a module with each shape of a raw read and of a write, when it is read, then the reads are
    found and the writes are not."""
    source = (
        "def f(note, fm, frontmatter):\n"
        "    a = note.frontmatter.get('status')\n"
        "    b = fm['to']\n"
        "    c = 'stale' in frontmatter\n"
        "    frontmatter['x'] = 1\n"
        "    copy = {k: v for k, v in note.frontmatter.items()}\n"
        "    d = note.facts.status\n"
    )
    assert [line for line, _ in raw_reads(source)] == [2, 3, 4]


def test_no_module_outside_the_vault_reads_a_raw_frontmatter_key_beyond_the_display_reads_named():
    """Given every module of h0/ outside h0/vault/, when their sources are read, then each raw frontmatter
    read is one of ALLOWED's display reads (asked of `Note.facts` otherwise), and ALLOWED names no read
    that is gone."""
    found = Counter({key: len(lines) for key, lines in reads_outside_the_vault().items()})
    allowed = Counter({key: count for key, (count, _) in ALLOWED.items()})
    extra = {
        f"{path}:{lines}": function
        for (path, function), lines in reads_outside_the_vault().items()
        if found[(path, function)] > allowed[(path, function)]
    }
    assert extra == {}, "read these through the note model (h0.vault.model: Note.facts), or say why they are display"
    stale = {key for key in allowed if found[key] < allowed[key]}
    assert stale == set(), "ALLOWED names reads that are gone: lower their count"
    assert sum(allowed.values()) <= 10


# The modules of h0/vault/ that read a note's raw keys: the model and the readers it is made of, and the two
# that keep their own bookkeeping keys (a control note's proposal, the disclosure gate's thread keys, read by the
# readers of h0.vault.values). Every other vault module is a consumer and asks the model, as modules outside do.
VAULT_READERS = frozenset(
    {
        "control.py",  # a proposal's h0_confirm
        "control_watch.py",  # a proposal's h0_proposed_by / h0_proposed_over / h0_error
        "dates.py",
        "disclosure.py",
        "draft_state.py",
        "marks.py",
        "model.py",
        "person.py",
        "profile_fields.py",
        "sendable.py",
        "suspicion.py",
    }
)


def test_inside_the_vault_only_the_model_and_its_readers_read_raw_keys():
    """Given every module of h0/vault/, when their sources are read, then only VAULT_READERS read a raw
    frontmatter key: a feature kept in h0/vault/ (the sending claim, approval, copies) asks `Note.facts`."""
    readers = {
        path.relative_to(VAULT).as_posix()
        for path in sorted(VAULT.rglob("*.py"))
        if raw_reads(path.read_text(encoding="utf-8"))
    }
    assert readers - VAULT_READERS == set(), "read these through the note model (h0.vault.model: Note.facts)"
    assert VAULT_READERS - readers == set(), "VAULT_READERS names a module that reads no raw key any more"
