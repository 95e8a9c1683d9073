"""Reports show the real sender: a display name that looks like an address, or a very long one,
never hides the address in `h0 status`, the dashboard, the briefing or `h0 log`; escaping never
shows a doubled backslash."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.mail.compose.recipients import shown_sender
from h0.report.briefing import collect_day, render_briefing
from h0.report.collect import collect_status
from h0.report.dashboard import render_dashboard
from h0.report.privacy import report_view
from h0.report.trailtext import describe
from h0.vault import Vault
from h0.vault.audit import iso, utcnow

SPOOF = '"ceo@bank.com" <x@evil.example>'
LONG = f'"{"Your Bank Security Team " * 20}" <long@evil.example>'


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (SPOOF, "x@evil.example (the name shows ceo@bank.com, another address)"),
        ('"ceo＠bank.com" <x@evil.example>', "x@evil.example (the name shows ceo@bank.com, another address)"),
        ("Ann Lee <ann@example.com>", "Ann Lee <ann@example.com>"),
        ('"ann@example.com" <ann@example.com>', "ann@example.com"),
        ("a@example.com, b@evil.example", "a@example.com +1 more"),
        ('"C\\\\D" <c@d.example>', "C\\D <c@d.example>"),
        ("Eve\u202e <eve@evil.example>", "Eve\\u202e <eve@evil.example>"),
    ],
)
def test_the_sender_is_shown_by_real_address(value: str, shown: str):
    assert shown_sender(value) == shown


def test_a_long_display_name_is_cut_never_the_address():
    text = shown_sender(LONG)
    assert text.endswith("<long@evil.example>") and len(text) < 80


def note(vault_dir: Path, name: str, sender: str) -> None:
    (vault_dir / "Needs_Action" / name).write_text(
        f"---\ntype: email\nfrom: '{sender.replace(chr(39), chr(39) * 2)}'\nsubject: Wire transfer\n"
        "status: pending\ndecision: urgent\nreasoning: money\n---\nPay now.\n",
        encoding="utf-8",
    )


def test_the_dashboard_and_briefing_show_the_real_address(vault_dir: Path):
    note(vault_dir, "EMAIL_spoof.md", SPOOF)
    note(vault_dir, "EMAIL_long.md", LONG)
    settings = load_settings(vault_path=vault_dir)
    status = collect_status(settings)
    page = render_dashboard(status)
    assert "x@evil.example (the name shows ceo@bank.com, another address)" in page
    assert "<long@evil.example>" in page.replace("\\<", "<").replace("\\>", ">")
    assert "\\\\\\\\" not in page  # no doubled escape

    now = iso(utcnow())
    records = [
        {
            "timestamp": now,
            "stream": "h0",
            "event": "email_ingested",
            "path": "Needs_Action/EMAIL_spoof.md",
            "sender": SPOOF,
            "subject": "Wire transfer",
            "message_id": "m1",
        },
        {
            "timestamp": now,
            "stream": "h0",
            "event": "email_ingested",
            "path": "Needs_Action/EMAIL_long.md",
            "sender": LONG,
            "subject": "Wire transfer",
            "message_id": "m2",
        },
    ]
    briefing = render_briefing(collect_day(dt.date.today(), records, report_view(settings, Vault(vault_dir))), status)
    assert "x@evil.example (the name shows ceo@bank.com, another address)" in briefing
    assert "long@evil.example" in briefing


def test_h0_log_shows_the_real_address():
    line = describe({"event": "email_ingested", "sender": LONG, "subject": "s", "message_id": "m"})
    assert "long@evil.example" in line
    line = describe({"event": "email_ingested", "sender": SPOOF, "subject": "s", "message_id": "m"})
    assert line.startswith("from x@evil.example (the name shows ceo@bank.com")
