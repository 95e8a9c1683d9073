"""List the functions and classes defined in h0/ that nothing else names: candidates for deletion.

A name counts as used when it appears as a word in another module of h0/ or scripts/, in the README or
docs/ (cog blocks call the command reference), or more than once in its own module (its own callers,
`__all__`). A name only tests mention is listed too, marked `tests only`: dead unless the test is of a
public API. Methods a framework calls by name (`emit`, `handle_startendtag`, pydantic validators under a
decorator, protocol hooks) are left out by their decorators or listed in HOOKS.

    .venv/bin/python scripts/dead_code.py           # from the checkout's root
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Called by a library by their name, never by H0's code.
HOOKS = frozenset(
    {
        "emit",  # logging.Handler
        "handle_startendtag",  # html.parser.HTMLParser
        "pause_writing",  # asyncio.Protocol
        "resume_writing",
        "connection_lost",
        "http_open",  # urllib.request handlers
        "https_open",
        "get_field_value",  # pydantic-settings source
        "flatten_mapping",  # ruamel.yaml constructor
    }
)
# Named only by tests, on purpose: the one-note form of a batch handler that the tests drive it with.
PUBLIC = frozenset({"triage_email"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def main() -> int:
    words: dict[str, Counter[Path]] = defaultdict(Counter)
    sources = {p: p.read_text(encoding="utf-8") for d in ("h0", "tests", "scripts") for p in (ROOT / d).rglob("*.py")}
    for path, text in sources.items():
        for word in _WORD.findall(text):
            words[word][path] += 1
    prose = " ".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    found = 0
    for path in sorted((ROOT / "h0").rglob("*.py")):
        tree = ast.parse(sources[path])
        members = [n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body]
        for node in [*tree.body, *members]:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            name = node.name
            if (
                name.startswith("__")
                or node.decorator_list
                or name in HOOKS | PUBLIC
                or re.search(rf"\b{name}\b", prose)
            ):
                continue
            where = words[name]
            others = [q for q in where if q != path]
            if where[path] > 1 or any("/tests/" not in str(q) for q in others):
                continue
            note = " (tests only)" if others else ""
            print(f"{path.relative_to(ROOT)}:{node.lineno} {name}{note}")
            found += 1
    print(f"{found} unreferenced", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
