"""The house keeps its shape: imports point down the layer picture of ARCHITECTURE.md, and a module
that grows past ~400 lines is split (or named here as one still to split).

Read from the source with `ast`, nothing is imported: a lazy import inside a function counts the
same as one at the top, since it ties the rooms together all the same. The direction of imports is
checked by import-linter against the contracts in pyproject.toml.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
H0 = ROOT / "h0"

# The layer picture lives in pyproject.toml as import-linter contracts (top first there); this is it
# bottom first: a room may import the rooms before it in this list, never one after it.
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
LAYERS = tuple(name.split(".")[1] for name in reversed(CONTRACTS[0]["layers"]))

# Modules at the top of h0/ that every room may use; they import no room themselves.
SHARED = {"h0", *CONTRACTS[1]["source_modules"]}

# The size at which a module is split by idea (STYLE.md: a module does one thing you can say in its first line).
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room(module: str) -> str | None:
    """The layer a module belongs to; None for the shared modules."""
    if module == "h0.__main__":
        return "cli"  # `python -m h0` is the command line
    return None if module in SHARED else module.split(".")[1]


def sources() -> list[Path]:
    return sorted(H0.rglob("*.py"))


def test_every_h0_module_is_in_a_room_of_the_layer_picture_or_shared():
    unplaced = {module_name(p) for p in sources() if room(module_name(p)) not in (*LAYERS, None)}
    assert unplaced == set(), "add the room to LAYERS (where it sits in ARCHITECTURE.md) or the module to SHARED"


def test_imports_point_down_the_layers_and_the_shared_modules_import_no_room():
    """Given the contracts in pyproject.toml, when import-linter reads every import of h0 (those inside
    functions too, not `if TYPE_CHECKING:` ones), then each is kept: a room imports only the rooms
    below it, and the shared modules import no room."""
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def test_the_contracts_name_every_room_once():
    assert len(set(LAYERS)) == len(LAYERS) == len(CONTRACTS[1]["forbidden_modules"])
    assert set(LAYERS) == {name.split(".")[1] for name in CONTRACTS[1]["forbidden_modules"]}


def test_no_module_grows_past_the_size_to_split():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in sources()}
    too_long = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert too_long == {}, (
        "split these modules by idea (STYLE.md: a module does one thing you can say in its first line)"
    )


def outside_imports(path: Path) -> list[tuple[int, str]]:
    """(line, 'module' or 'module:name') for every import of something that is not H0's own."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found += [(node.lineno, f"{node.module}:{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name.split(":")[0].split(".")[0] != "h0"]


def test_h0_imports_only_the_public_names_of_other_libraries():
    """Given every import in h0/ of a module that is not H0's own, then no part of its name is private
    (a leading underscore): internals of the SDK, the email package or watchdog change without notice."""
    private = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sources()
        for line, name in outside_imports(path)
        if any(part.startswith("_") and part != "__future__" for part in name.replace(":", ".").split("."))
    ]
    assert private == []


@functools.cache
def known_modules() -> frozenset[str]:
    return frozenset(module_name(p) for p in sources())


def runtime_imports(path: Path) -> set[str]:
    """The h0 modules a module imports when it runs: at its top and inside its functions alike (an import
    moved into a function still closes a circle, it only hides it); `if TYPE_CHECKING:` blocks are not run."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    known = known_modules()
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            # `from package import module` imports the module; `from module import name` the module
            found |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names}
    return {module for module in found if module in known and module != name}


def test_no_import_cycles_between_h0_modules():
    """Given the imports each h0 module runs (inside functions too), then no module reaches itself again."""
    graph = {module_name(p): runtime_imports(p) for p in sources()}
    cycles = []
    for start in graph:
        stack, seen = [(start, (start,))], set()
        while stack:
            module, trail = stack.pop()
            for target in graph.get(module, ()):
                if target == start:
                    cycles.append(" → ".join((*trail, target)))
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, (*trail, target)))
    assert cycles == []
