"""H0_Dashboard.md and the daily briefing: what the human sees in the vault, kept current by the
daemon without slowing it, escaped against hostile mail, and never in a loop with the watcher."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import time
from pathlib import Path

import pytest

from h0.pipeline.routes import reconcile
from h0.pipeline.watcher import trigger_path
from h0.report import dashwriter as writer_module
from h0.report.collect import AuditTail, collect_status
from h0.report.dashboard import (
    BRIEFINGS,
    DASHBOARD_NOTE,
    collect_day,
    md_link,
    md_text,
    render_briefing,
    render_dashboard,
)
from h0.report.dashwriter import DashboardWriter
from h0.report.privacy import report_view
from h0.vault import AuditLog, Vault
from h0.vault.approval import ApprovalFolder
from h0.vault.audit import iso
from tests.pipeline.harness import approve, running_daemon, settings_for, wait_until, write_draft

HOSTILE = [
    "a | b | c",
    "close ]] the link",
    "![[x]] embed",
    "<img src=http://evil.example/p.png>",
    "two\nlines\n| x | y |",
    "[click](http://evil.example) and [[Secret note]]",
    "<script>alert(1)</script> %% hidden %%",
]
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def read(vault_dir: Path, rel: str = DASHBOARD_NOTE) -> str:
    try:
        return (vault_dir / rel).read_text()
    except FileNotFoundError:
        return ""


def briefing_path(vault_dir: Path) -> Path:
    return vault_dir / BRIEFINGS / f"{dt.date.today().isoformat()}.md"


def assert_inert(markdown: str, allowed_links: set[str]) -> None:
    """Every table row has as many cells as its header; the only links are H0's own; no embed,
    no HTML tag, no Obsidian comment, no bare URL."""
    header_cells = None
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = len(UNESCAPED_PIPE.findall(line))
            if header_cells is None:
                header_cells = cells
            assert cells == header_cells, f"a row with {cells} cell borders, the header has {header_cells}: {line}"
        else:
            header_cells = None
    links = set(re.findall(r"(?<!\\)\[\[([^\]]*)\]\]", markdown))
    assert links <= allowed_links, links - allowed_links
    assert not re.search(r"(?<!\\)!(?<!\\)\[", markdown)  # no embed or image
    assert not re.search(r"(?<!\\)<[a-zA-Z/]", markdown)  # no HTML tag
    assert not re.search(r"(?<!\\)%(?<!\\)%", markdown)  # no comment
    assert "http://" not in markdown and not re.search(r"(?<!\\)\]\(", markdown)  # no URL, no [text](url)


# ------------------------------------------------------------------------------ rendering


def test_md_text_and_md_link_keep_hostile_words_inert():
    for text in HOSTILE:
        cell = md_text(text)
        assert "\n" not in cell and not UNESCAPED_PIPE.search(cell)
        assert_inert(f"| a |\n|---|\n| {cell} |\n", set())
    assert md_link("Drafts/reply.md") == "[[Drafts/reply]]"
    for name in ("Drafts/x]]y.md", "Drafts/a|b.md", "Drafts/h#1.md", "Drafts/![[e]].md"):
        assert "[[" not in md_link(name).replace("\\[\\[", ""), name
    assert md_text(None) == "—" and len(md_text("x" * 1000)) < 200


def test_given_hostile_subjects_and_reasons_then_the_dashboard_and_briefing_stay_well_formed(vault_dir: Path):
    """Notes and log records from a stranger's email (subjects, senders, reasons with `|`, `]]`,
    `![[x]]`, `<img src=http://…>`, line breaks) render as text in every table."""
    settings = settings_for(vault_dir)
    log = AuditLog(vault_dir / "Logs", "h0")
    for i, text in enumerate(HOSTILE):
        quoted = json.dumps(text)  # a JSON string is a YAML string
        (vault_dir / f"Needs_Action/EMAIL_{i}.md").write_text(
            f"---\nstatus: needs_info\ndecision: needs_info\nreasoning: {quoted}\nsubject: {quoted}\nfrom: {quoted}\n"
            f"draft: {quoted}\n---\nx\n"
        )
        (vault_dir / f"Approved/a{i}.md").write_text(f"---\nto: {quoted}\nsubject: {quoted}\n---\nx\n")
        (vault_dir / f"Drafts/r{i}.md").write_text(
            f"---\nsubject: {quoted}\nstatus: not_sent\nh0_error: {quoted}\nh0_error_code: {quoted}\n---\nx\n"
        )
        AuditLog(vault_dir / "Logs", "gmail_mcp").write(
            "email_sent", path=f"Approved/s{i}.md", to=text, subject=text, idempotency_key=f"k{i}"
        )
        log.write("send_failed", "error", path=text, message=text, retry_in=5)
        log.write("email_ingested", path=f"Needs_Action/EMAIL_{i}.md", subject=text, sender=text)
        log.write("triage_decision", note=f"Needs_Action/EMAIL_{i}.md", decision=text, reasoning=text)
        log.write("send_refused", "error", path=f"Approved/q{i}.md", returned_to=text, message=text)
    (vault_dir / "Drafts/weird ]] |name.md").write_text(
        "---\nto: a@b.c\nsubject: s\nstatus: pending_approval\n---\nx\n"
    )
    status = collect_status(settings, live={"running": True, "pid": 1, "started": iso(dt.datetime.now(dt.UTC))})
    n = len(HOSTILE)
    assert status["totals"]["needs_you"] == n and status["totals"]["returned_to_drafts"] == n
    ours = (
        {f"Needs_Action/EMAIL_{i}" for i in range(n)}
        | {f"Approved/a{i}" for i in range(n)}
        | {f"Drafts/r{i}" for i in range(n)}
        | {f"Approved/s{i}" for i in range(n)}
        | {"H0_Dashboard"}
        | {f"EMAIL_{i}" for i in range(n)}
    )
    page = render_dashboard(status)
    assert_inert(page, ours)
    assert "weird" in page  # the oddly named draft is listed, as text
    assert page.count("| [[Needs_Action/EMAIL_") == n and page.count("| [[Approved/a") == n
    today = collect_day(
        dt.date.today(), AuditTail(vault_dir / "Logs").refresh(), report_view(settings, Vault(vault_dir))
    )
    briefing = render_briefing(today, status)
    assert_inert(briefing, ours)
    assert "## Sent (7)" in briefing and "## Arrived (7)" in briefing


def test_the_briefing_covers_the_local_day_from_the_audit_log(vault_dir: Path):
    settings = settings_for(vault_dir)
    log = AuditLog(vault_dir / "Logs", "h0")
    yesterday = dt.datetime.combine(dt.date.today(), dt.time.min).astimezone() - dt.timedelta(minutes=5)
    path = vault_dir / "Logs" / f"gmail_mcp_{yesterday.astimezone(dt.UTC).date().isoformat()}.jsonl"
    with open(path, "a") as handle:
        handle.write(
            json.dumps(
                {
                    "timestamp": iso(yesterday),
                    "event": "email_sent",
                    "severity": "info",
                    "path": "Approved/yesterday.md",
                    "to": "old@example.com",
                }
            )
            + "\n"
        )
    # The notes the records are about (a record whose note is gone is counted, not named: h0.report.privacy).
    for rel, head in (
        ("Needs_Action/EMAIL_1.md", "type: email\nstatus: awaiting_approval"),
        ("Needs_Action/EMAIL_2.md", "status: done"),
        ("Done/r.md", "to: d@x.org\nstatus: sent"),
        ("Drafts/h.md", "to: d@x.org\nstatus: held"),
    ):
        (vault_dir / rel).write_text(f"---\n{head}\n---\nx\n")
    log.write("email_ingested", path="Needs_Action/EMAIL_1.md", subject="Quarterly numbers", sender="Dana <d@x.org>")
    log.write("triage_decision", note="Needs_Action/EMAIL_1.md", decision="draft_reply", reasoning="a question")
    log.write("triage_decision", note="Needs_Action/EMAIL_2.md", decision="archive", reasoning="newsletter")
    AuditLog(vault_dir / "Logs", "gmail_mcp").write(
        "email_sent", path="Approved/r.md", to="d@x.org", subject="Re: Quarterly numbers", idempotency_key="k"
    )
    log.write("email_filed", path="Approved/r.md", done_path="Done/r.md", idempotency_key="k")
    log.write("send_held", "warning", path="Approved/h.md", returned_to="Drafts/h.md", message="already answered")
    (vault_dir / "Needs_Action/EMAIL_3.md").write_text(
        "---\nstatus: delegated\ndelegate_to: Sam\nreasoning: refund\n---\n"
    )
    status = collect_status(settings)
    today = collect_day(
        dt.date.today(), AuditTail(vault_dir / "Logs").refresh(), report_view(settings, Vault(vault_dir))
    )
    text = render_briefing(today, status)
    assert "## Arrived (2)" in text  # one ingested, one dropped into Needs_Action/ by hand and triaged
    assert "| [[EMAIL_1]] | Dana \\<d@x.org\\> | Quarterly numbers |" in text and "| [[EMAIL_2]] | — | — |" in text
    assert "## What H0 decided (2)" in text and "draft\\_reply: 1" in text and "archive: 1" in text
    assert "## Sent (1)" in text and "[[Done/r]]" in text and "yesterday" not in text
    assert "## Not sent, and not sent since (1)" in text and "[[Drafts/h]]" in text
    assert "- Emails that need you: 1" in text and "delegate to Sam: refund" in text


# ------------------------------------------------------------------------------ the writer


def test_a_storm_of_changes_is_written_at_most_about_once_a_second(vault_dir: Path):
    """Debounced: 800 pokes from 4 threads over ~0.6 s cost at most a few rewrites; none on
    the poking threads; nothing unchanged is rewritten (a refresh that finds no change writes nothing)."""
    writer = DashboardWriter(settings_for(vault_dir), min_interval=1.0, poll_interval=0.1)
    writer.start()

    def settled() -> int:
        """Poke and wait for the refresh it causes: every earlier refresh has then counted its write.
        The writer waits LOAD_FACTOR times as long as its last refresh took: collecting 800 drafts on a
        busy machine takes a fifth of a second, so the refresh may come 4 s after the poke."""
        seen = writer.refreshes
        writer.poke()
        assert wait_until(lambda: writer.refreshes > seen, timeout=120)
        return writer.writes

    try:
        assert wait_until(lambda: writer.writes == 1, timeout=5)
        start = time.monotonic()

        def storm(k: int) -> None:
            for i in range(200):
                (vault_dir / f"Drafts/k{k}-{i}.md").write_text("---\nstatus: pending_approval\n---\n")
                writer.poke()
                time.sleep(0.003)  # pacing: the storm lasts about 0.6 s, as a burst of real changes would

        pokers = [threading.Thread(target=storm, args=(k,), name=f"poker-{k}") for k in range(4)]
        for t in pokers:
            t.start()
        for t in pokers:
            t.join()
        elapsed = time.monotonic() - start
        assert wait_until(lambda: "(800, showing 10)" in read(vault_dir), timeout=120)  # a loaded machine is slow
        writes = settled()
        assert writes - 1 <= elapsed + 2, (writes, elapsed)
        assert writer.writers == {"h0-dashboard"}  # written on its own thread, never on a poker's
        assert settled() == writes, "nothing changed, yet the dashboard was rewritten"
    finally:
        writer.stop()


def test_a_change_no_signal_reports_is_seen_by_the_idle_poll(vault_dir: Path):
    writer = DashboardWriter(settings_for(vault_dir), poll_interval=0.1, briefing=False)
    writer.start()
    try:
        assert wait_until(lambda: "No draft is waiting" in read(vault_dir), timeout=5)
        write_draft(vault_dir, "Drafts", "quiet.md", status="pending_approval")  # no poke
        assert wait_until(lambda: "[[Drafts/quiet]]" in read(vault_dir), timeout=5)
    finally:
        writer.stop()
    assert not (vault_dir / BRIEFINGS).exists()


def test_a_failing_write_is_logged_and_does_not_stop_the_writer(vault_dir: Path, monkeypatch):
    calls = []

    def full_disk(path, data, **kw):
        calls.append(path)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer_module, "atomic_write", full_disk)
    writer = DashboardWriter(settings_for(vault_dir), poll_interval=0.1)
    writer.start()
    try:
        assert wait_until(lambda: calls, timeout=5)
        write_draft(vault_dir, "Drafts", "x.md", status="pending_approval")
        assert wait_until(lambda: len(calls) >= 2, timeout=5)  # still trying after the failure
    finally:
        writer.stop()
    assert not (vault_dir / DASHBOARD_NOTE).exists()


def test_the_watcher_and_the_sweep_ignore_the_dashboard_and_the_briefings(vault_dir: Path):
    root = str(vault_dir)
    approval = ApprovalFolder(root)
    (vault_dir / BRIEFINGS).mkdir()
    for rel in (DASHBOARD_NOTE, f"{BRIEFINGS}/2026-01-01.md", f".{DASHBOARD_NOTE}.0123456789ab.tmp"):
        (vault_dir / rel).write_text("---\nto: a@b.c\nsubject: s\nstatus: rejected\n---\n")
        assert trigger_path(root, str(vault_dir / rel), approval) is None
    assert trigger_path(root, str(vault_dir / "Drafts/x.md"), approval) == "Drafts/x.md"  # the check can fail
    assert reconcile(Vault(vault_dir)) == []


# ------------------------------------------------------------------------------ with the daemon


def test_given_a_running_daemon_when_a_draft_is_sent_then_the_dashboard_shows_it_and_stop_says_not_running(
    vault_dir: Path,
):
    """The dashboard appears at start ("running"), shows the send (link to the filed note,
    recipient) and the true number of drafts waiting; after stop it says "not running". It is
    written on its own thread, never a handler's, and the watcher never queues it."""
    for i in range(25):
        write_draft(vault_dir, "Drafts", f"w{i:02}.md", status="pending_approval")
    write_draft(
        vault_dir,
        "Drafts",
        "go.md",
        to="dana@example.com",
        subject="a | b ]] ![[x]] <img src=http://e/x>",
        status="pending_approval",
    )
    with running_daemon(vault_dir) as daemon:
        (writer,) = daemon.companions
        assert isinstance(writer, DashboardWriter)
        queued: list[str] = []
        put = daemon.queue.put
        daemon.queue.put = lambda path, **kw: (queued.append(path), put(path, **kw))[1]
        assert wait_until(lambda: "H0 is running" in read(vault_dir), timeout=10)
        approve(vault_dir, "go.md")
        assert wait_until(lambda: "[[Done/go]]" in read(vault_dir), timeout=10)
        page = read(vault_dir)
        assert "## Drafts waiting for your approval (25, showing 10)" in page
        assert "| [[Done/go]] | to dana@example.com |" in page and "## Last sends (1 in the last 24 h)" in page
        assert_inert(page.split("---\n*Last change")[0], {f"Drafts/w{i:02}" for i in range(10)} | {"Done/go"})
        assert wait_until(lambda: "[[Done/go]]" in read(vault_dir, f"{BRIEFINGS}/{dt.date.today()}.md"), timeout=5)

        # Idle: no write loop with the watcher. Once settled, a poke and the refresh it causes rewrite nothing
        # (the dashboard is outside the folders the watcher reports, so its own write wakes nobody).
        def settled() -> tuple[int, int]:
            seen = writer.refreshes
            writer.poke()
            assert wait_until(lambda: writer.refreshes > seen, timeout=10)
            return writer.writes, (vault_dir / DASHBOARD_NOTE).stat().st_mtime_ns

        settled()
        assert settled() == settled()
    assert not [p for p in queued if p.endswith(DASHBOARD_NOTE) or p.startswith(BRIEFINGS)]
    assert "Approved/go.md" in queued  # the spy saw the watcher's work
    assert "H0 is not running" in read(vault_dir) and "[[Done/go]]" in read(vault_dir)


def test_a_refused_draft_shows_up_as_not_sent_with_its_reason(vault_dir: Path):
    with running_daemon(vault_dir):
        assert wait_until(lambda: "H0 is running" in read(vault_dir), timeout=10)
        (vault_dir / "Approved/bad.md").write_text("---\nsubject: nobody to send to\n---\nx\n")
        assert wait_until(lambda: "Not sent — back in Drafts/" in read(vault_dir), timeout=15)
        page = read(vault_dir)
    assert "| [[Drafts/bad]] | no recipient yet (fill in to:) | nobody to send to | invalid\\_request:" in page
    assert "## Last errors (1 in the last 24 h)" in page and "send\\_refused" in page
    assert "## Not sent, and not sent since (1)" in read(vault_dir, f"{BRIEFINGS}/{dt.date.today()}.md")


def test_sends_paused_because_smtp_is_not_configured_are_shown_with_the_reason(vault_dir: Path):
    with running_daemon(vault_dir, mail_backend="smtp") as daemon:
        write_draft(vault_dir, "Approved", "go.md", subject="Hello there")
        assert wait_until(lambda: "Sending is paused" in read(vault_dir), timeout=15)
        page = read(vault_dir)
        assert daemon.ctx.state.sends_paused_for() > 0
    assert "> SMTP is not configured: SMTP\\_HOST is not set" in page
    (row,) = [line for line in page.splitlines() if line.startswith("| [[Approved/go]]")]
    assert "sending is paused: SMTP is not configured" in row
    assert "Sending is paused" not in read(vault_dir)  # stopped: not running, nothing paused


def test_a_reached_hourly_cap_keeps_the_second_draft_waiting_and_says_until_when(vault_dir: Path):
    with running_daemon(vault_dir, rate_limit_per_hour=1):
        write_draft(vault_dir, "Drafts", "one.md", subject="First")
        write_draft(vault_dir, "Drafts", "two.md", subject="Second")
        approve(vault_dir, "one.md")
        assert wait_until(lambda: (vault_dir / "Done/one.md").exists(), timeout=10)
        approve(vault_dir, "two.md")
        assert wait_until(
            lambda: "per-hour send cap (1) is reached" in read(vault_dir) and "[[Approved/two]]" in read(vault_dir),
            timeout=15,
        )
        page = read(vault_dir)
    (row,) = [line for line in page.splitlines() if line.startswith("| [[Approved/two]]")]
    assert "cap" in row and "next try" in row
    assert "| per hour | 1 of 1 | 0 |" in page
    assert (vault_dir / "Approved/two.md").exists()


@pytest.mark.parametrize("dashboard, briefings", [(False, False), (False, True)])
def test_a_disabled_dashboard_writes_no_file(vault_dir: Path, dashboard: bool, briefings: bool):
    with running_daemon(vault_dir, dashboard_enabled=dashboard, briefings_enabled=briefings) as daemon:
        write_draft(vault_dir, "Approved", "go.md")
        assert wait_until(lambda: (vault_dir / "Done/go.md").exists(), timeout=10)
        if briefings:
            assert wait_until(lambda: "## Sent (1)" in read(vault_dir, f"{BRIEFINGS}/{dt.date.today()}.md"), timeout=5)
        else:
            assert daemon.companions == []  # no writer at all: nothing can write the note, now or on stop
    assert not (vault_dir / DASHBOARD_NOTE).exists()
    assert (vault_dir / BRIEFINGS).exists() == briefings


def test_while_the_work_queue_has_a_backlog_the_writer_refreshes_at_most_every_few_seconds(vault_dir: Path):
    """During a burst the dashboard yields the CPU to the work, yet is never more than BUSY_STALENESS
    behind; once the queue is drained it refreshes at its usual pace again."""
    backlog = [0]
    writer = DashboardWriter(settings_for(vault_dir), min_interval=1.0, backlog=lambda: backlog[0])
    last = 100.0
    assert writer.due_in(101.0, last) == 0.0  # idle queue: once a second
    backlog[0] = 4_000
    assert writer.due_in(101.0, last) == writer_module.BUSY_STALENESS - 1.0
    assert writer.due_in(last + writer_module.BUSY_STALENESS, last) == 0.0  # the staleness cap
    backlog[0] = 0  # the burst is done: no more waiting for the cap
    assert writer.due_in(101.0, last) == 0.0
    assert DashboardWriter(settings_for(vault_dir), min_interval=1.0).due_in(101.0, last) == 0.0  # no queue


def test_a_daemon_s_dashboard_writer_yields_to_its_own_queue(vault_dir: Path):
    with running_daemon(vault_dir) as daemon:
        writer = next(c for c in daemon.companions if isinstance(c, DashboardWriter))
        assert writer.backlog == daemon.queue.busy
