"""Every report names every recipient (issue 20, class 5).

Hostile inputs first: a display name that poses as another address, recipients hidden in Cc
and Bcc, a name standing where an address should be shown, a list far longer than a line.
Then each report — the console line, `h0 sweep`'s summary, `h0 status` (text and JSON),
`h0 log`, the dashboard and the briefing — after one real `h0 sweep` (in process: the real
CLI, daemon, mail server and outbox backend): To, Cc and Bcc by real address, none cut off,
all of them in the JSON.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.errors import InvalidRequest
from h0.mail.compose.addresses import parse_recipients
from h0.mail.compose.recipients import describe_recipients, recipient_lists
from h0.report.collect import AuditTail, collect_status
from h0.report.dashboard import collect_day, render_briefing, render_dashboard
from h0.report.privacy import report_view
from h0.vault import Vault
from h0.vault.layout import LOGS
from tests.pipeline.harness import frontmatter, outbox, write_draft

pytestmark = pytest.mark.usefixtures("loguru_restored")

BCC = [f"board{i}@example.org" for i in range(45)]


@pytest.fixture
def sweep_env(monkeypatch: pytest.MonkeyPatch, vault_dir: Path):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("LOG_LEVEL", "INFO")
    return monkeypatch


def sweep(capsys, *args: str) -> tuple[int, list[str], str]:
    code = main(["sweep", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


# --- hostile: a display name that poses as another address ----------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        '"ceo@bank.com" <evil@x.example>',
        '"Your CEO (ceo@bank.com)" <evil@x.example>',
        '"ceo＠bank.com" <evil@x.example>',  # a fullwidth at sign reads as @
        "=?utf-8?q?ceo=40bank.com?= <evil@x.example>",  # an encoded word that decodes to one
    ],
)
def test_given_a_display_name_that_reads_as_another_address_then_the_send_is_refused_naming_both(value: str):
    """Given a recipient whose display name reads as a different address, When the recipients are
    parsed for sending, Then refused: the reason names the address it shows and the one it goes to."""
    with pytest.raises(InvalidRequest) as caught:
        parse_recipients("to", value)
    assert "ceo@bank.com" in caught.value.message and "evil@x.example" in caught.value.message


@pytest.mark.parametrize("value", ['"Dana Rivera" <dana@example.com>', '"dana@example.com" <DANA@example.com>'])
def test_given_a_display_name_that_is_a_name_or_the_same_address_then_it_is_sent(value: str):
    (address,) = parse_recipients("to", value)
    assert address.addr_spec.lower() == "dana@example.com"


def test_given_a_posing_draft_when_swept_then_it_comes_back_unsent_with_the_reason(vault_dir: Path, sweep_env, capsys):
    """Given an approved draft to `"ceo@bank.com" <evil@x.example>`, When swept, Then nothing is
    sent and the draft is back in Drafts/ with a reason naming both addresses."""
    write_draft(vault_dir, "Approved", "pose.md", to="'\"ceo@bank.com\" <evil@x.example>'")
    code, out, _ = sweep(capsys)
    assert code == 0 and out[0].startswith("h0 sweep: 1 refused")
    reason = frontmatter(vault_dir, "Drafts/pose.md")["h0_error"]
    assert "ceo@bank.com" in reason and "evil@x.example" in reason
    assert outbox(vault_dir) == []


# --- the recipients as reports show them -------------------------------------------------------------


def test_given_names_and_lists_then_only_real_addresses_are_shown_and_a_long_list_says_how_many_more():
    lists = recipient_lists('"Boss" <boss@example.com>, Ann <ann@example.com>', ["Cc Person <cc@example.com>"], BCC)
    assert lists["to"] == ["boss@example.com", "ann@example.com"] and lists["cc"] == ["cc@example.com"]
    # Unquoted, an address before <…> is a recipient of its own (the send path splits it so too).
    assert recipient_lists("ceo@bank.com <evil@x.example>")["to"] == ["ceo@bank.com", "evil@x.example"]
    assert "Boss" not in describe_recipients(lists)
    assert describe_recipients(lists).count("@") == 48  # no limit: all of them
    short = describe_recipients(lists, limit=10)
    assert short.endswith("+38 more") and short.startswith("to boss@example.com, ann@example.com · cc cc@example.com")


def test_given_a_domain_in_another_script_then_its_ascii_form_is_shown_beside_it():
    """A look-alike (Cyrillic а in bаnk.com) shows as what it is: its punycode beside it."""
    text = describe_recipients(recipient_lists("ceo@b\u0430nk.com"))
    assert "xn--" in text and "ceo@b\u0430nk.com" in text


# --- every report, after one real sweep ----------------------------------------------------------------


def test_given_a_send_to_to_cc_and_bcc_then_every_report_names_every_recipient(vault_dir: Path, sweep_env, capsys):
    """Given an approved draft to a named recipient, one Cc and 45 Bcc, When `h0 sweep` sends it,
    Then the console line, the sweep summary, `h0 log` (text and JSON), `h0 status` (text and JSON),
    the dashboard and the briefing each name To, Cc and Bcc by real address; the text reports that
    shorten a long list say "+N more", and the JSON holds every address."""
    write_draft(
        vault_dir,
        "Approved",
        "board.md",
        to="'Dana Rivera <dana@example.com>'",
        cc="carol@example.net",
        bcc=json.dumps(BCC),
    )
    code, out, err = sweep(capsys, "-v")  # -v: the console lines too (the pass is quiet by default)
    assert code == 0, err
    (message,) = outbox(vault_dir)
    assert message["Bcc"] is None or "board44@example.org" in str(message["Bcc"])  # the outbox keeps what was sent

    console = [line for line in err.splitlines() if "✉ sent" in line]
    assert len(console) == 1
    assert "to dana@example.com · cc carol@example.net · bcc board0@example.org" in console[0]
    assert all(address in console[0] for address in BCC) and "Dana Rivera" not in console[0]

    assert out[0] == "h0 sweep: 1 sent"
    assert out[1].startswith("  ✉ Approved/board.md → to dana@example.com · cc carol@example.net · bcc ")
    assert all(address in out[1] for address in BCC)

    assert main(["log"]) == 0
    text = capsys.readouterr().out
    assert "to dana@example.com · cc carol@example.net · bcc board0@example.org" in text
    assert all(address in text for address in BCC)
    assert main(["log", "--json"]) == 0
    (sent,) = json.loads(capsys.readouterr().out)
    assert sent["recipients"] == {"to": ["dana@example.com"], "cc": ["carol@example.net"], "bcc": BCC}

    assert main(["status"]) == 0
    status_text = capsys.readouterr().out
    (line,) = [line for line in status_text.splitlines() if "board.md →" in line]
    assert "to dana@example.com · cc carol@example.net · bcc board0@example.org" in line
    assert "+27 more (h0 status --json lists all)" in line
    assert main(["status", "--json"]) == 0
    (recent,) = json.loads(capsys.readouterr().out)["recent_sends"]
    assert recent["recipients"] == {"to": ["dana@example.com"], "cc": ["carol@example.net"], "bcc": BCC}

    settings = load_settings(vault_path=vault_dir)
    status = collect_status(settings)
    page = render_dashboard(status)
    (row,) = [line for line in page.splitlines() if "[[Done/board]]" in line]
    assert "to dana@example.com · cc carol@example.net · bcc board0@example.org" in row and "+27 more" in row
    records = AuditTail(vault_dir / LOGS).refresh()
    briefing = render_briefing(collect_day(dt.date.today(), records, report_view(settings, Vault(vault_dir))), status)
    (row,) = [line for line in briefing.splitlines() if "board" in line and "carol@example.net" in line]
    assert "to dana@example.com · cc carol@example.net · bcc board0@example.org" in row and "+27 more" in row


def test_given_drafts_waiting_or_returned_then_status_names_their_recipients(vault_dir: Path, sweep_env, capsys):
    """Given a draft back in Drafts/ (refused) with a Bcc, When `h0 status` runs, Then its line names
    To and Bcc by real address, and the JSON lists them."""
    write_draft(
        vault_dir, "Approved", "back.md", to="'Eve <eve@example.com>'", bcc="hidden@example.org", body="Hi \u200b\n"
    )
    sweep(capsys)
    assert main(["status"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "Drafts/back.md" in line]
    assert "to eve@example.com · bcc hidden@example.org" in line
    assert main(["status", "--json"]) == 0
    (returned,) = json.loads(capsys.readouterr().out)["returned_to_drafts"]
    assert returned["recipients"] == {"to": ["eve@example.com"], "cc": [], "bcc": ["hidden@example.org"]}
