"""`h0 status`: true totals beside capped lists, what needs the human and why, why approved drafts
wait, the send caps, pauses — the library function first, then the command (in-process)."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.report.collect import SHOWN, AuditTail, collect_status
from h0.report.text import render_status
from h0.state import DB_FILE, StateDB, state_dir_for
from h0.vault import AuditLog, audit
from h0.vault.audit import iso

RUNNING = {"running": True, "pid": 4242, "started": "2026-01-01T00:00:00.000Z"}


def settings_for(vault_dir: Path, **overrides):
    return load_settings(vault_path=vault_dir, **overrides)


def note(vault_dir: Path, rel: str, frontmatter: str, body: str = "body\n", age: float = 60.0) -> Path:
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter.strip()}\n---\n{body}")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def log_line(vault_dir: Path, stream: str, when: dt.datetime, event: str, severity: str = "info", **fields) -> None:
    """An audit record with a chosen timestamp (AuditLog.write always stamps now)."""
    record = {"timestamp": iso(when), "event": event, "severity": severity, **fields}
    path = vault_dir / "Logs" / f"{stream}_{when.astimezone(dt.UTC).date().isoformat()}.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def run_status(capsys, vault_dir: Path, *args: str) -> tuple[int, str]:
    code = main(["status", "--vault", str(vault_dir), *args])
    return code, capsys.readouterr().out


def test_given_25_drafts_waiting_then_the_total_is_25_and_the_list_shows_10(vault_dir: Path, capsys):
    for i in range(25):
        note(vault_dir, f"Drafts/d{i:02}.md", "to: a@example.com\nsubject: s\nstatus: pending_approval")
    note(vault_dir, "Drafts/zz-urgent.md", "to: a@example.com\nsubject: s\nstatus: pending_approval\npriority: urgent")
    note(vault_dir, "Drafts/mine.md", "to: a@example.com\nsubject: not yet pending")  # no status: not waiting
    code, out = run_status(capsys, vault_dir)
    assert code == 0
    assert "Drafts waiting for your approval: 26 (showing 10)" in out
    code, text = run_status(capsys, vault_dir, "--json")
    data = json.loads(text)
    assert data["totals"]["waiting_for_approval"] == 26 and len(data["waiting_for_approval"]) == SHOWN
    assert data["waiting_for_approval"][0] == "Drafts/zz-urgent.md"  # urgent first
    assert data["folders"]["Drafts"] == 27


def test_the_emails_that_need_the_human_are_listed_with_their_reason_urgent_first(vault_dir: Path, capsys):
    """As triage leaves them: urgent (a draft waits), needs_info (a question, or no address to
    reply to), delegated (with whom); replied-to and untriaged emails are not listed."""
    note(
        vault_dir,
        "Needs_Action/EMAIL_b-info.md",
        "status: needs_info\ndecision: needs_info\n"
        "reasoning: Which invoice do they mean?\nsubject: Invoice\nfrom: Bo <bo@example.com>",
    )
    note(
        vault_dir,
        "Needs_Action/EMAIL_c-noaddr.md",
        "status: needs_info\ndecision: draft_reply\n"
        "reasoning: looks routine\nproblem: no address to reply to\nsubject: Hi",
    )
    note(
        vault_dir,
        "Needs_Action/EMAIL_d-deleg.md",
        "status: delegated\ndecision: delegate\n"
        "delegate_to: Sam (finance)\nreasoning: a refund request\nsubject: Refund",
    )
    note(
        vault_dir,
        "Needs_Action/EMAIL_z-urgent.md",
        "status: awaiting_approval\ndecision: urgent\n"
        "reasoning: the server is down\ndraft: Drafts/REPLY_EMAIL_z-urgent.md\nsubject: DOWN",
    )
    note(
        vault_dir,
        "Needs_Action/clients/EMAIL_e-filed.md",
        "status: needs_info\ndecision: needs_info\nreasoning: filed in a sub-folder by the human",
    )
    note(vault_dir, "Needs_Action/EMAIL_f-reply.md", "status: awaiting_approval\ndecision: draft_reply\nreasoning: x")
    note(vault_dir, "Needs_Action/EMAIL_g-new.md", "status: pending\nsubject: untriaged, mentions urgent")
    data = collect_status(settings_for(vault_dir))
    assert data["totals"]["needs_you"] == 5
    rows = {item["path"]: item for item in data["needs_you"]}
    assert next(item["path"] for item in data["needs_you"]) == "Needs_Action/EMAIL_z-urgent.md"
    assert rows["Needs_Action/EMAIL_z-urgent.md"]["draft"] == "Drafts/REPLY_EMAIL_z-urgent.md"
    assert rows["Needs_Action/EMAIL_b-info.md"]["reason"] == "Which invoice do they mean?"
    assert rows["Needs_Action/EMAIL_c-noaddr.md"]["reason"] == "no address to reply to"
    deleg = rows["Needs_Action/EMAIL_d-deleg.md"]
    assert deleg["decision"] == "delegate" and deleg["delegate_to"] == "Sam (finance)"
    assert "Needs_Action/clients/EMAIL_e-filed.md" in rows
    _code, out = run_status(capsys, vault_dir)
    assert "Emails that need you: 5" in out
    assert "Needs_Action/EMAIL_d-deleg.md  delegate — delegate to Sam (finance): a refund request" in out
    assert "EMAIL_f-reply" not in out and "EMAIL_g-new" not in out


def test_more_than_ten_emails_that_need_the_human_are_counted_in_full(vault_dir: Path):
    for i in range(13):
        note(vault_dir, f"Needs_Action/EMAIL_{i:02}.md", "status: needs_info\ndecision: needs_info\nreasoning: why")
    data = collect_status(settings_for(vault_dir))
    assert data["totals"]["needs_you"] == 13 and len(data["needs_you"]) == SHOWN


def test_without_a_daemon_approved_drafts_wait_for_h0_to_run(vault_dir: Path, capsys):
    note(vault_dir, "Approved/go.md", "to: a@example.com\nsubject: Go")
    _code, out = run_status(capsys, vault_dir)
    assert "Daemon: not running" in out
    assert (
        "Approved but not yet sent: 1" in out
        and "Approved/go.md → to a@example.com (first message to example.com)  not_running" in out
    )


def test_each_approved_draft_says_why_it_waits(vault_dir: Path):
    """Given a running daemon (its own view), each approved note's reason comes from what is
    knowable: its mtime (settling), the audit log (rate limited, failed with a retry, outcome
    unknown), its status (rejected) — and an old failure does not stick to a newer note."""
    now = dt.datetime.now(dt.UTC)
    for name in ("settling", "deferred", "failed", "unknown", "rejected", "queued", "stale"):
        note(
            vault_dir,
            f"Approved/{name}.md",
            f"to: a@example.com\nsubject: {name}" + ("\nstatus: rejected" if name == "rejected" else ""),
            age=2.0 if name == "settling" else 600.0,
        )
    log_line(
        vault_dir,
        "h0",
        now,
        "send_deferred",
        "warning",
        path="Approved/deferred.md",
        retry_in=120.0,
        message="hourly cap of 100 reached",
    )
    log_line(
        vault_dir,
        "h0",
        now,
        "send_failed",
        "error",
        path="Approved/failed.md",
        retry_in=8.0,
        message="connection reset",
    )
    log_line(vault_dir, "h0", now, "send_outcome_unknown", "error", path="Approved/unknown.md", message="timed out")
    log_line(
        vault_dir,
        "h0",
        now - dt.timedelta(hours=2),
        "send_failed",
        "error",
        path="Approved/stale.md",
        retry_in=8.0,
        message="long ago, before the note was written",
    )
    data = collect_status(settings_for(vault_dir, approval_settle_seconds=10), live=RUNNING)
    why = {item["path"].split("/")[1][:-3]: item for item in data["approved_not_yet_sent"]}
    assert {k: v["code"] for k, v in why.items()} == {
        "settling": "settling",
        "deferred": "rate_limited",
        "failed": "retrying",
        "unknown": "outcome_unknown",
        "rejected": "rejected",
        "queued": "queued",
        "stale": "queued",
    }
    assert "connection reset" in why["failed"]["reason"]
    retry = dt.datetime.fromisoformat(why["deferred"]["retry_at"])
    assert abs((retry - now).total_seconds() - 120.0) < 1.0
    settle = dt.datetime.fromisoformat(why["settling"]["retry_at"])
    assert 6.0 < (settle - now).total_seconds() <= 8.5
    assert data["totals"]["approved_not_yet_sent"] == 7


def test_a_pause_from_the_audit_log_is_shown_while_a_daemon_runs_and_ends_after_a_send(vault_dir: Path, capsys):
    now = dt.datetime.now(dt.UTC)
    note(vault_dir, "Approved/go.md", "to: a@example.com\nsubject: Go")
    log_line(
        vault_dir,
        "h0",
        now - dt.timedelta(seconds=5),
        "sends_paused",
        "error",
        path="Approved/go.md",
        reason="Gmail needs you to sign in again: run `h0 auth gmail`.",
    )
    running = collect_status(settings_for(vault_dir), live=RUNNING)
    assert running["sending"]["paused"] and "h0 auth gmail" in running["sending"]["pause_reason"]
    assert running["approved_not_yet_sent"][0]["code"] == "paused"
    assert "Sending: PAUSED — Gmail needs you to sign in again" in render_status(running)
    # The daemon's own view says paused too (a pause it has not logged again).
    live = collect_status(
        settings_for(vault_dir), live={**RUNNING, "paused_for": 30.0, "pause_reason": "token revoked"}
    )
    assert live["sending"]["pause_reason"] == "token revoked"
    # No daemon: no pause to report.
    assert not collect_status(settings_for(vault_dir))["sending"]["paused"]
    # A send after the pause ended it.
    log_line(vault_dir, "gmail_mcp", now, "email_sent", path="Approved/other.md", to="x@example.com")
    assert not collect_status(settings_for(vault_dir), live=RUNNING)["sending"]["paused"]


def test_an_old_pause_has_ended(vault_dir: Path):
    log_line(vault_dir, "h0", dt.datetime.now(dt.UTC) - dt.timedelta(minutes=10), "sends_paused", "error", reason="x")
    assert not collect_status(settings_for(vault_dir), live=RUNNING)["sending"]["paused"]


def _sent(db: StateDB, n: int, at: float) -> None:
    mid = f"<m{n}@test>"
    assert (
        db.claim_send(key=f"k{n}", rfc822_message_id=mid, content_hash="h", caps=[], in_flight_s=60, now=at).status
        == "claimed"
    )
    db.mark_sent(mid, provider_message_id=None, thread_id=None, sent_at="", backend="outbox", now=at)


def test_the_send_caps_show_used_left_and_when_the_next_slot_frees(vault_dir: Path, capsys):
    settings = settings_for(vault_dir, rate_limit_per_hour=2, rate_limit_per_day=10)
    assert not state_dir_for(vault_dir, settings.h0_state_dir).exists()
    collect_status(settings)
    # Status creates no state database (it keeps the vault index, a cache of the notes, in that folder).
    assert not (state_dir_for(vault_dir, settings.h0_state_dir) / DB_FILE).exists()
    now = time.time()
    db = StateDB.for_vault(vault_dir, settings.h0_state_dir)
    for n, ago in enumerate((7200, 3000, 2000, 1000)):
        _sent(db, n, now - ago)
    note(vault_dir, "Approved/go.md", "to: a@example.com\nsubject: Go")
    data = collect_status(settings, live=RUNNING)
    hour, day = data["sending"]["caps"]
    assert (hour["window"], hour["used"], hour["left"], hour["limit"]) == ("hour", 3, 0, 2)
    assert (day["used"], day["left"]) == (4, 6) and day["next_slot_at"] is None
    # Two sends fill the cap of 2: the slot frees when the second newest of the three leaves the hour.
    frees = dt.datetime.fromisoformat(hour["next_slot_at"]).timestamp()
    assert abs(frees - (now - 2000 + 3600)) < 1.0
    assert data["sending"]["cap_reached"] == ["hour"]
    assert data["approved_not_yet_sent"][0]["code"] == "rate_limited"
    _code, out = run_status(capsys, vault_dir, "--json")
    assert json.loads(out)["sending"]["caps"][1]["used"] == 4  # RATE_LIMIT_* come from the settings: defaults here
    assert "per hour 3/2 used, 0 left (next slot" in render_status(data)


def test_refused_and_held_drafts_back_in_drafts_are_listed_with_their_reason(vault_dir: Path, capsys):
    note(
        vault_dir,
        "Drafts/bad.md",
        "subject: nobody\nstatus: not_sent\nh0_error: The frontmatter needs `to:`\n"
        "h0_error_code: invalid_request\nh0_error_at: 2026-01-01T00:00:00Z",
    )
    note(
        vault_dir,
        "Drafts/held.md",
        "to: a@example.com\nsubject: again\nstatus: held\nh0_error: already answered\nh0_error_code: already_answered",
    )
    (vault_dir / "Drafts/broken.md").write_text("---\nto: [unclosed\n---\nbody\n")
    note(vault_dir, "Drafts/ok.md", "to: a@example.com\nsubject: fine\nstatus: pending_approval")
    data = collect_status(settings_for(vault_dir))
    returned = {r["path"]: r for r in data["returned_to_drafts"]}
    assert set(returned) == {"Drafts/bad.md", "Drafts/held.md", "Drafts/broken.md"}
    assert returned["Drafts/bad.md"]["code"] == "invalid_request" and returned["Drafts/held.md"]["status"] == "held"
    assert returned["Drafts/broken.md"]["status"] == "unreadable"
    assert data["waiting_for_approval"] == ["Drafts/ok.md"]
    _code, out = run_status(capsys, vault_dir)
    assert "Not sent, back in Drafts/ to fix: 3" in out and "already_answered: already answered" in out


def test_errors_are_counted_in_full_across_streams_newest_first(vault_dir: Path):
    now = dt.datetime.now(dt.UTC)
    for i in range(12):
        log_line(
            vault_dir,
            "gmail_mcp" if i % 2 else "h0",
            now - dt.timedelta(minutes=30 - i),
            f"boom_{i}",
            "error",
            message=f"m{i}",
        )
    log_line(vault_dir, "vault_mcp", now - dt.timedelta(hours=30), "old_boom", "error")  # older than 24 h
    log_line(vault_dir, "h0", now, "note_written", "info")
    data = collect_status(settings_for(vault_dir))
    assert data["totals"]["errors_24h"] == 12 and len(data["recent_errors"]) == SHOWN
    assert [e["event"] for e in data["recent_errors"][:2]] == ["boom_11", "boom_10"]
    assert {e["stream"] for e in data["recent_errors"]} == {"h0", "gmail_mcp"}


def test_recent_sends_name_where_the_sent_note_was_filed(vault_dir: Path):
    log, mail = AuditLog(vault_dir / "Logs", "h0"), AuditLog(vault_dir / "Logs", "gmail_mcp")
    for i in range(12):
        # Each send filed as its note (a send whose note is gone is counted, not named: h0.report.privacy).
        note(vault_dir, f"Done/s{i} (2).md", f"to: a@example.com\nsubject: S{i}\nstatus: sent")
        mail.write("email_sent", path=f"Approved/s{i}.md", to="a@example.com", subject=f"S{i}", idempotency_key=f"k{i}")
        log.write("email_filed", path=f"Approved/s{i}.md", done_path=f"Done/s{i} (2).md", idempotency_key=f"k{i}")
    data = collect_status(settings_for(vault_dir))
    assert data["totals"]["sends_24h"] == 12 and len(data["recent_sends"]) == SHOWN
    assert (
        data["recent_sends"][0]["path"] == "Approved/s11.md"
        and data["recent_sends"][0]["done_path"] == "Done/s11 (2).md"
    )


def test_hostile_text_cannot_drive_the_terminal(vault_dir: Path, capsys):
    """A subject or reason with escape sequences and line breaks prints as one plain line."""
    note(
        vault_dir,
        "Needs_Action/EMAIL_x.md",
        'status: needs_info\ndecision: needs_info\nreasoning: "clear \\e[2J\\e]0;pwned\\a screen\\nINJECTED LINE"',
    )
    code, out = run_status(capsys, vault_dir)
    assert code == 0 and "\x1b" not in out and "\x07" not in out
    (line,) = [line for line in out.splitlines() if "EMAIL_x" in line]
    assert "INJECTED LINE" in line and not any(text.startswith("INJECTED") for text in out.splitlines())


class TestAuditTail:
    def test_it_parses_only_complete_lines_and_only_what_was_appended(self, tmp_path: Path):
        logs = tmp_path / "Logs"
        log = AuditLog(logs, "h0")
        log.write("email_filed", path="a")
        tail = AuditTail(logs)
        assert [r["path"] for r in tail.refresh()] == ["a"]
        path = log.path_for(dt.datetime.now(dt.UTC).date())
        with open(path, "a") as handle:
            handle.write('{"timestamp": "9999-01-01T00:00:00.000Z", "event": "email_filed", "pa')  # being written
        assert [r["path"] for r in tail.refresh()] == ["a"]
        with open(path, "a") as handle:
            handle.write('th": "b"}\n')
        log.write("note_written", path="ignored: not an event the status uses")
        assert [r["path"] for r in tail.refresh()] == ["a", "b"]

    def test_a_replaced_file_is_read_again(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
        logs = tmp_path / "Logs"
        log = AuditLog(logs, "h0")
        log.write("email_filed", path="a")
        tail = AuditTail(logs)
        tail.refresh()
        path = log.path_for(dt.datetime.now(dt.UTC).date())
        before = path.stat().st_mtime_ns
        path.unlink()  # the human deleted today's log; H0 starts a new one a moment later:
        later = audit.utcnow() + dt.timedelta(milliseconds=20)
        monkeypatch.setattr(audit, "utcnow", lambda: later)  # its first record's time (the tail's identity of a file)
        log.write("email_filed", path="c")  # as long as the old one (perhaps its inode too): only times tell them apart
        os.utime(path, ns=(before + 20_000_000, before + 20_000_000))  # the file's, which a coarse clock may not move
        assert [r["path"] for r in tail.refresh()] == ["c"]


@pytest.mark.parametrize("flag", ["--json", None])
def test_a_missing_vault_exits_1(tmp_path: Path, capsys, flag):
    code = main(["status", "--vault", str(tmp_path / "nope")] + ([flag] if flag else []))
    assert code == 1 and "does not exist" in capsys.readouterr().err
