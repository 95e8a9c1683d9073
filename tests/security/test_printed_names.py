"""No note can forge H0's output (issue 20, class 8, the printing half).

Note names and header values holding line breaks, ESC sequences (colours, screen clears, window
titles, the one-byte CSI), bidi controls or tag characters are escaped wherever H0 prints or
logs them — console lines, `h0 sweep`'s summary, `h0 status`, `h0 log`, the dashboard and the
briefing — by one function, `h0.printable.printable`. Hostile names first, through a real sweep.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.printable import one_line, printable
from h0.report.collect import AuditTail, collect_status
from h0.report.dashboard import collect_day, md_link, md_text, render_briefing, render_dashboard
from h0.report.privacy import report_view
from h0.vault import Vault
from h0.vault.layout import LOGS
from tests.pipeline.harness import write_draft

pytestmark = pytest.mark.usefixtures("loguru_restored")

FORGED = "00:00:00.000 INFO    ✉ sent forged.md → to boss@example.com"
HOSTILE_NAMES = [
    f"line\n{FORGED}.md",
    "title\x1b]0;pwned\x07.md",
    "clear\x1b[2J\x1b[H.md",
    "csi\x9b31m.md",
    "invoice\u202efdp.exe.md",
    "tags\U000e0041\U000e0042.md",
    "sep\u2028arator.md",
]
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")


@pytest.mark.parametrize(
    "text",
    [
        "a\nb",
        "a\rb",
        "a\x1b[31mb",
        "a\x9bb",
        "a\x00b",
        "a\x7fb",
        "a\u202eb",
        "a\u2028b",
        "a\U000e0041b",
        "a\u200bb",
        "a\tb",
    ],
)
def test_every_control_format_and_separator_character_is_escaped_visibly(text: str):
    shown = printable(text)
    assert not RAW.search(shown) and "\n" not in shown and "\u200b" not in shown
    assert shown.startswith("a") and shown.endswith("b") and "\\" in shown


def test_ordinary_text_is_left_as_it_is():
    text = "Grüße, 日本語, emoji 👩 ❤️, a non-breaking\u00a0space"
    assert printable(text) == text
    assert printable("x" * 50, 10) == "x" * 9 + "…"


@pytest.fixture
def sweep_env(monkeypatch: pytest.MonkeyPatch, vault_dir: Path):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("LOG_LEVEL", "INFO")
    return monkeypatch


@pytest.mark.parametrize("text", ["a\nb", "a\r\n\tb", "a\u2028b", "a\x85b", "a\x1cb", " a  \u00a0 b\n"])
def test_one_line_makes_every_run_of_whitespace_one_space(text: str):
    assert one_line(text, 40) == "a b"


def test_one_line_cuts_to_its_limit_with_an_ellipsis_and_no_space_before_it():
    assert one_line("hidden text here", 8) == "hidden…"  # "hidden " cut, its space dropped
    assert one_line("hiddentexthere", 8) == "hiddent…"
    assert len(one_line("x" * 500, 40)) == 40
    assert one_line("fits exactly", 12) == "fits exactly"


def test_given_hostile_note_names_when_swept_then_no_output_obeys_them(vault_dir: Path, sweep_env, capsys):
    """Given approved drafts whose file names hold a forged log line, ESC sequences, a CSI, a bidi
    override, tag characters and a line separator (one of them with invisible text, so it is refused
    and logged too), When `h0 sweep`, `h0 status` and `h0 log` run, Then no raw control, bidi or tag
    character reaches stdout or stderr, no line is a forged log line, and each name is shown escaped."""
    for index, name in enumerate(HOSTILE_NAMES):
        body = "Hi\u200b\n" if index == 0 else "Hi Bob,\n"
        write_draft(vault_dir, "Approved", name, subject=f"S{index}", body=body)
    outputs = []
    assert main(["sweep"]) == 0
    outputs.append(capsys.readouterr())
    assert main(["status"]) == 0
    outputs.append(capsys.readouterr())
    assert main(["log"]) == 0
    outputs.append(capsys.readouterr())
    assert main(["log", "--json"]) == 0
    outputs.append(capsys.readouterr())
    for captured in outputs:
        for stream in (captured.out, captured.err):
            assert not RAW.search(stream), stream
            assert not any(line.startswith(FORGED[:30]) for line in stream.splitlines()), stream
    sweep_out, sweep_err = outputs[0]
    assert "title\\x1b]0;pwned\\x07.md" in sweep_out  # the ✉ line names it, escaped
    assert "line\\n00:00:00.000 INFO" in sweep_err  # the refusal's console line, escaped
    assert "invoice\\u202efdp.exe.md" in outputs[1].out
    assert json.loads(outputs[3].out)  # JSON escapes by its own rules and stays parseable


def test_the_dashboard_and_the_briefing_escape_names_and_values(vault_dir: Path, sweep_env, capsys):
    """Given sends and a refusal of notes with bidi and ESC in their names and subjects, When the
    dashboard and the briefing are rendered, Then neither holds a raw control or bidi character and
    a hostile name is no [[link]] but escaped text."""
    write_draft(vault_dir, "Approved", "invoice\u202efdp.exe.md", subject="'Pay \\e[31mnow'")
    write_draft(vault_dir, "Approved", "clear\x1b[2J.md", body="Hi\u200b\n")
    main(["sweep"])
    capsys.readouterr()
    settings = load_settings(vault_path=vault_dir)
    status = collect_status(settings)
    page = render_dashboard(status)
    today = collect_day(dt.date.today(), AuditTail(vault_dir / LOGS).refresh(), report_view(settings, Vault(vault_dir)))
    briefing = render_briefing(today, status)
    for text in (page, briefing):
        assert not RAW.search(text)
    assert "invoice\\\\u202efdp.exe" in page or "invoice\\u202efdp.exe" in page
    assert md_link("Done/a\u202eb.md").startswith("Done/a") and "[[" not in md_link("Done/a\u202eb.md")
    assert "\\x1b" in md_text("x\x1by") or "\\\\x1b" in md_text("x\x1by")
