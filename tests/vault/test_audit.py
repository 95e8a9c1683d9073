"""The JSONL audit log: one intact object per line, even with many concurrent writers."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
from pathlib import Path

import pytest

from h0.errors import InternalError
from h0.vault import AuditLog


def _hammer(logs_dir: str, worker: int, count: int) -> None:
    log = AuditLog(Path(logs_dir), "h0")
    for i in range(count):
        log.write("tick", worker=worker, i=i, payload="x" * (50 + (i * 37) % 3000))


def test_a_record_has_timestamp_event_severity_and_fields(tmp_path: Path):
    log = AuditLog(tmp_path / "Logs", "h0")
    record = log.write("email_sent", "info", to="bob@example.com", skipped=None)
    lines = log.path_for(dt.datetime.now(dt.UTC).date()).read_text().splitlines()
    assert json.loads(lines[0]) == record
    assert record["event"] == "email_sent" and record["severity"] == "info" and record["to"] == "bob@example.com"
    assert "skipped" not in record
    assert record["timestamp"].endswith("Z")


def test_concurrent_processes_never_tear_or_interleave_lines(tmp_path: Path):
    logs = tmp_path / "Logs"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_hammer, args=(str(logs), w, 300)) for w in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    records = list(AuditLog(logs, "h0").records())
    assert len(records) == 6 * 300
    seen = {(r["worker"], r["i"]) for r in records}
    assert len(seen) == 6 * 300


def test_records_can_be_filtered_by_event_and_time(tmp_path: Path):
    log = AuditLog(tmp_path / "Logs", "gmail_mcp")
    log.write("pre_send_audit", to="a")
    log.write("email_sent", to="a")
    assert [r["event"] for r in log.records(event="email_sent")] == ["email_sent"]
    future = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    assert list(log.records(since=future)) == []


def test_torn_or_foreign_lines_are_skipped_when_reading(tmp_path: Path):
    log = AuditLog(tmp_path / "Logs", "h0")
    log.write("one")
    with open(log.path_for(dt.datetime.now(dt.UTC).date()), "a") as handle:
        handle.write('{"event": "tor\n[1, 2]\n')
    log.write("two")
    assert [r["event"] for r in log.records()] == ["one", "two"]


def test_an_unwritable_log_is_a_typed_error(tmp_path: Path):
    blocker = tmp_path / "Logs"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(InternalError):
        AuditLog(blocker, "h0").write("x")


def test_very_long_fields_are_clipped(tmp_path: Path):
    record = AuditLog(tmp_path / "Logs", "h0").write("x", body="y" * 100_000)
    assert len(record["body"]) < 5000
