"""The command reference in the README and `docs/commands.md`, written from the parser so it cannot drift.

Both files hold a `cog` block that calls these functions; `tests/test_docs.py` fails when a file
is not what `cog` would write (regenerate with `.venv/bin/cog -r README.md docs/commands.md`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from h0.cli.parser import CommandDoc, build_parser


def _commands() -> list[CommandDoc]:
    docs: list[CommandDoc] = []
    build_parser(docs)
    return docs


class _Fixed(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=100)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def command_table() -> str:
    """One row a command: its name and what it does (the README's table)."""
    rows = ["| command | what it does |", "|---|---|"]
    rows += [
        f"| [`h0 {doc.name}`](docs/commands.md#h0-{doc.name.replace(' ', '-')}) | {_cell(doc.summary)} |"
        for doc in _commands()
    ]
    return "\n".join(rows) + "\n"


def command_details() -> str:
    """Every command with its `--help`, as argparse prints it (`docs/commands.md`)."""
    out: list[str] = []
    for doc in _commands():
        # A fixed width: argparse otherwise wraps to the terminal of whoever regenerates the file.
        doc.parser.formatter_class = _Fixed
        out += [f"## h0 {doc.name}", "", doc.summary, "", "```text", doc.parser.format_help().rstrip(), "```", ""]
    return "\n".join(out)


_SECTION = re.compile(r"^# -{2,} (.+?) -*$")
_SETTING = re.compile(r"^#?([A-Z][A-Z0-9_]+)=(.*)$")


def settings_reference(example: Path) -> str:
    """Every setting of `.env.example`, section by section: a table of the setting, its example value
    and the comment above it (`docs/configuration.md`; the comments are the one place a setting is explained)."""
    out: list[str] = []
    comment: list[str] = []
    rows: list[str] = []

    def flush() -> None:
        if rows:
            out.extend(["| setting | example | what it does |", "|---|---|---|", *rows, ""])
            rows.clear()

    for line in example.read_text(encoding="utf-8").splitlines():
        if section := _SECTION.match(line):
            flush()
            comment = []
            out += [f"### {section.group(1)}", ""]
        elif setting := _SETTING.match(line):
            value = setting.group(2).strip()
            what = _cell(" ".join(comment)) if comment else "(with the setting above)"
            rows.append(f"| `{setting.group(1)}` | {f'`{_cell(value)}`' if value else ''} | {what} |")
            comment = []
        elif line.startswith("#"):
            comment.append(line.lstrip("#").strip())
        elif not line.strip():
            if not rows and comment and out:  # a section's introduction, before its first setting
                out += [" ".join(comment), ""]
            comment = [] if not rows else comment
    flush()
    return "\n".join(out).rstrip("\n") + "\n"
