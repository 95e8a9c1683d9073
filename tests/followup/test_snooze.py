"""Snooze (issue 25): `snooze_until:` hides a note from the dashboard and `h0 status` until then, brings it
back when the time comes — across a restart, with the daemon off at that moment — and a new message in
the thread wakes it early. A broken value is a typed error written on the note."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

from h0.followup.workdays import add_working_days
from h0.pipeline.daemon import Daemon
from h0.report.collect import collect_status
from h0.report.dashboard import collect_day, render_briefing, render_dashboard
from h0.report.dashwriter import start_dashboard
from h0.report.privacy import report_view
from h0.report.text import render_status
from h0.vault import Vault
from tests.followup.conftest import DANA, DAY, Clock, context, fm, follow, ingest, synced, triage
from tests.pipeline.harness import events, settings_for, wait_until


def local_day(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")


def email_note(
    vault_dir: Path, name: str, *, snooze: str | None = None, status: str = "needs_info", thread: str = "t-1"
) -> str:
    lines = [
        "---",
        "type: email",
        f"status: {status}",
        f"message_id: {name}",
        f"thread_id: {thread}",
        f"from: {DANA}",
        "subject: Contract renewal",
        "received: 2026-01-05T10:00:00Z",
        "reasoning: the contract needs a decision",
    ]
    if snooze is not None:
        lines.append(f"snooze_until: {snooze}")
    (vault_dir / "Needs_Action" / f"{name}.md").write_text("\n".join([*lines, "---", "```text\nRenew?\n```", ""]))
    return f"Needs_Action/{name}.md"


def test_a_snoozed_note_is_hidden_until_its_time_then_comes_back_with_why(vault_dir):
    """Given an email that needs the owner and a waiting draft, both snoozed until tomorrow 09:00, When the
    status is collected today, Then neither is listed (and the status says how many are snoozed); When the
    time has come and the follow-up pass runs, Then `snooze_until` is gone, the note says when and why it
    woke, it is listed again, and the dashboard and briefing say it is back."""
    clock = Clock()
    ctx = context(vault_dir, None)
    tomorrow = local_day(clock.now + DAY)
    path = email_note(vault_dir, "EMAIL_snoozed", snooze=tomorrow)
    (vault_dir / "Drafts" / "REPLY_x.md").write_text(
        f"---\nto: dana@example.com\nsubject: 'Re: x'\nstatus: pending_approval\nsnooze_until: {tomorrow}\n---\nHi\n"
    )
    status = collect_status(ctx.settings, now=clock.now)
    assert status["needs_you"] == [] and status["waiting_for_approval"] == []
    assert status["totals"]["needs_you"] == 0 and status["totals"]["snoozed"] == 2
    assert "Snoozed (hidden until their time): 2" in render_status(status)
    assert follow(ctx, clock.now).woke == []

    report = follow(ctx, clock.advance(days=1, seconds=120))
    assert sorted(report.woke) == ["Drafts/REPLY_x.md", path]
    note = fm(vault_dir, path)
    assert "snooze_until" not in note and note["snooze_woke_reason"].startswith("its snooze ended")
    assert note["snooze_woke_at"]
    assert sorted(r["path"] for r in events(vault_dir, event="note_unsnoozed")) == sorted(report.woke)
    status = collect_status(ctx.settings, now=clock.now)
    assert [n["path"] for n in status["needs_you"]] == [path] and status["waiting_for_approval"] == [
        "Drafts/REPLY_x.md"
    ]
    assert "## Snoozed (0 hidden until their time)" in render_dashboard(status)
    assert f"back: [[{path.removesuffix('.md')}]]" in render_dashboard(status)
    records = events(vault_dir)
    for record in records:
        record["stream"] = "h0"
    today = collect_day(dt.date.today(), records, report_view(ctx.settings, Vault(vault_dir)))
    briefing = render_briefing(today, status)
    assert "Back from snooze at" in briefing and "[[EMAIL_snoozed]]" in briefing
    assert follow(ctx, clock.advance(seconds=60)).woke == []  # woken once


def test_a_broken_snooze_until_is_a_typed_error_on_the_note_and_hides_nothing(vault_dir):
    clock = Clock()
    ctx = context(vault_dir, None)
    path = email_note(vault_dir, "EMAIL_broken", snooze="next tuesday")
    report = follow(ctx, clock.now)
    assert report.snooze_errors == [path] and report.failed == 0
    note = fm(vault_dir, path)
    assert note["snooze_error_code"] == "invalid_request" and "next tuesday" in note["snooze_error"]
    assert "2026-05-12" in note["snooze_error"] and note["snooze_until"] == "next tuesday"  # the owner's word kept
    assert [n["path"] for n in collect_status(ctx.settings, now=clock.now)["needs_you"]] == [path]
    assert follow(ctx, clock.advance(seconds=60)).snooze_errors == []  # written once
    assert len(events(vault_dir, event="snooze_invalid")) == 1

    text = (vault_dir / path).read_text().replace("snooze_until: next tuesday", "snooze_until: 2099-01-01")
    (vault_dir / path).write_text(text)
    follow(ctx, clock.advance(seconds=60))
    assert "snooze_error" not in fm(vault_dir, path)
    assert collect_status(ctx.settings, now=clock.now)["needs_you"] == []


def test_a_new_message_in_a_snoozed_thread_wakes_it(ctx, gmail, vault_dir, clock):
    """Given Dana's email, triaged and snoozed for a week, When Dana writes again in the same thread, Then the
    next pass wakes the snoozed note at once, saying who wrote."""
    synced(ctx, gmail)
    first = gmail.add_message(sender=DANA, subject="Contract", body="What do you think about the renewal?")
    (path,) = ingest(ctx).written
    triage(ctx, path)
    follow(ctx, clock.now)
    Vault(vault_dir).update_frontmatter(path, {"snooze_until": local_day(clock.now + 7 * DAY)})
    assert follow(ctx, clock.advance(seconds=60)).woke == []
    assert collect_status(ctx.settings, now=clock.now)["totals"]["snoozed"] == 1

    gmail.add_message(sender=DANA, subject="Re: Contract", body="Sorry, one more thing.", thread_id=first)
    ingest(ctx)
    report = follow(ctx, clock.advance(seconds=60))
    assert report.woke == [path]
    note = fm(vault_dir, path)
    assert "snooze_until" not in note and note["snooze_woke_reason"] == "dana@example.com wrote again in this thread"


def test_a_snooze_that_ends_while_h0_is_off_comes_back_when_it_runs_again(vault_dir):
    """Given the daemon running with a snoozed email (hidden on H0_Dashboard.md), When it stops, the snooze's
    time passes, and it starts again, Then its first follow-up pass wakes the note: the dashboard lists it
    again and today's briefing says it is back."""
    clock = Clock()
    path = email_note(vault_dir, "EMAIL_later", snooze=local_day(clock.now + DAY))
    dashboard = vault_dir / "H0_Dashboard.md"

    def run(until: object) -> Daemon:
        daemon = Daemon(settings_for(vault_dir), workers=2, companions=[start_dashboard])
        daemon.clock = clock
        daemon.start()
        stop = threading.Event()
        loop = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
        loop.start()
        try:
            assert wait_until(lambda: daemon.last_followup is not None), "no follow-up pass at start"
            assert wait_until(until), dashboard.read_text() if dashboard.exists() else "no dashboard"
        finally:
            stop.set()
            loop.join(5)
            daemon.stop()
        return daemon

    run(lambda: dashboard.exists() and "Snoozed (1 hidden" in dashboard.read_text())
    assert "[[Needs_Action/EMAIL_later]]" not in dashboard.read_text()
    clock.advance(days=2)  # the daemon is off meanwhile
    daemon = run(lambda: "[[Needs_Action/EMAIL_later]]" in dashboard.read_text())
    assert daemon.last_followup.woke == [path]
    assert "snooze_until" not in fm(vault_dir, path)
    briefing = vault_dir / "Briefings" / f"{dt.date.today().isoformat()}.md"
    assert "Back from snooze at" in briefing.read_text() and "[[EMAIL_later]]" in briefing.read_text()


def test_working_days_decide_when_a_snoozed_owed_reply_shows(vault_dir):
    """A reply owed is surfaced on the note even while it is snoozed (the note keeps the truth), but the
    reports leave it out until the snooze ends."""
    clock = Clock()
    ctx = context(vault_dir, None)
    received = dt.datetime.fromtimestamp(clock.now, dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    path = email_note(vault_dir, "EMAIL_owed", status="needs_info", snooze=local_day(clock.now + 30 * DAY))
    text = (vault_dir / path).read_text().replace("received: 2026-01-05T10:00:00Z", f"received: {received}")
    (vault_dir / path).write_text(text)
    follow(ctx, clock.now)
    report = follow(ctx, add_working_days(clock.now, 2) + 60)
    assert report.owed == [path] and fm(vault_dir, path)["follow_up"] == "reply_owed"
    status = collect_status(ctx.settings, now=add_working_days(clock.now, 2) + 120)
    assert status["totals"]["replies_owed"] == 0 and status["totals"]["snoozed"] == 1
