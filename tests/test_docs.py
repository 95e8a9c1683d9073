"""The README is a front door and `docs/` explains: both stay true to the code and to each other.

Given the README and the documents under docs/, then every relative link leads to a file of this
repository, the command reference is what the parser says (written by cog), the README stays short,
and nothing refers to a document or issue number a clone does not contain.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from cogapp import Cog

from tests.conftest import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file_of_the_repo(page: Path):
    broken = []
    prose = re.sub(r"`[^`\n]*`", "", page.read_text(encoding="utf-8"))  # a link shown as code is an example
    for target in LINK.findall(prose):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if not (page.parent / path).exists():
            broken.append(target)
    assert broken == [], f"{page.name} links to files that do not exist: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_refers_to_a_document_or_issue_a_clone_does_not_hold(page: Path):
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"\b(?:ADR-\d+|FR-\d+|SC-\d+|[Ii]ssue \d+|issue #\d+)\b", text)
    assert found == [], f"{page.name} names {found}: say what is meant instead"


def test_the_readme_is_a_front_door_of_at_most_200_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the detail into docs/"


@pytest.mark.skipif(
    sys.version_info[:2] not in ((3, 11), (3, 12)),
    reason="argparse's help layout changed in 3.13; the reference is written with 3.11",
)
@pytest.mark.parametrize("page", ["README.md", "docs/commands.md", "docs/configuration.md"])
def test_the_command_reference_is_what_the_parser_says(page: str, capsys):
    status = Cog().main(["cog", "--check", str(ROOT / page)])
    out = capsys.readouterr()
    assert status == 0, f"{page} is out of date: run .venv/bin/cog -r {page}\n{out.out}{out.err}"
    assert "[[[end]]]" in (ROOT / page).read_text(encoding="utf-8")  # the block cog fills is there
