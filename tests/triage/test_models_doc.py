"""docs/models.md lists every model call H0 makes, and is true: every module of h0/ that calls a chat model (a
provider's `complete`, an `LLMTriage.ask`) is named in its table, and every module the table names calls one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "models.md"
MODEL_CALLS = frozenset({"complete", "ask"})  # ChatProvider.complete, LLMTriage.ask (h0.triage)


def calling_modules() -> set[str]:
    """The modules of h0/ that call `<something>.complete(...)` or `<something>.ask(...)` on a model."""
    found = set()
    for path in sorted((ROOT / "h0").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MODEL_CALLS:
                found.add(path.relative_to(ROOT).as_posix())
    return found


def table_modules() -> set[str]:
    """The module each row of the table names first (the call's own; a row may name its callers after it)."""
    section = DOC.read_text(encoding="utf-8").split("## Every model call H0 makes", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`h0/" in line]
    return {re.findall(r"`(h0/[\w/]+\.py)`", row.split("|")[2])[0] for row in rows}


def test_every_module_that_calls_a_model_is_in_the_table_and_the_table_names_no_other():
    callers, listed = calling_modules(), table_modules()
    assert callers, "no model call found: the search is broken"
    assert callers == listed, (
        f"missing from docs/models.md: {sorted(callers - listed)}; not a caller: {sorted(listed - callers)}"
    )
