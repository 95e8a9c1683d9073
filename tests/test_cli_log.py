"""`h0 log`: what H0 sent, and one note's trail from ingest to filing.

Most tests write Logs/ with the real AuditLog (the events and fields H0 writes today) on a
clock the test sets, then run `h0 log` in-process. Two run the real daemon.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest

import h0.vault.audit as audit_module
from h0.cli import main
from h0.vault import AuditLog

UTC = dt.UTC


@pytest.fixture(autouse=True)
def new_york(monkeypatch: pytest.MonkeyPatch):
    """Local time is New York's (UTC-5 in November), so local and UTC dates differ in the evening."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 11, 20, 14, 0, tzinfo=UTC)

    def set(self, text: str) -> None:
        self.now = dt.datetime.fromisoformat(text).replace(tzinfo=UTC)

    def tick(self) -> dt.datetime:
        self.now += dt.timedelta(milliseconds=7)
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """AuditLog's clock: each record 7 ms after the one before."""
    clock = Clock()
    monkeypatch.setattr(audit_module, "utcnow", clock.tick)
    return clock


def streams(vault_dir: Path) -> tuple[AuditLog, AuditLog, AuditLog]:
    return tuple(AuditLog(vault_dir / "Logs", s) for s in ("h0", "gmail_mcp", "vault_mcp"))  # type: ignore[return-value]


def sent_trail(
    vault_dir: Path,
    n: int,
    *,
    draft: str | None = None,
    done: str | None = None,
    email: str | None = None,
    to: str = "sam@example.org",
    subject: str = "Re: Dinner?",
    cc: str | None = None,
) -> dict[str, str]:
    """The records of one email ingested, triaged, its reply approved, sent and filed — as H0 writes them."""
    h0, mail, vault = streams(vault_dir)
    email = email or f"EMAIL_m{n}.md"
    draft = draft or f"REPLY_{email}"
    done = done or f"Done/{draft}"
    ids = {"gid": f"18c{n:04d}", "key": f"n-key{n}", "rfc": f"<h0.rfc{n}@h0.local>", "pid": f"19a{n:04d}", "done": done}
    h0.write(
        "email_ingested",
        path=f"Needs_Action/{email}",
        message_id=ids["gid"],
        subject=subject[4:],
        sender="Sam <sam@example.org>",
    )
    vault.write("note_written", tool="write_note", path=f"Drafts/{draft}", hash="a1")
    h0.write(
        "triage_decision",
        note=f"Needs_Action/{email}",
        decision="draft_reply",
        confidence=0.6,
        reasoning="A direct question",
        provider="rules",
        latency_ms=4.2,
        rule="Direct questions",
        draft=f"Drafts/{draft}",
    )
    h0.write("draft_approved", path=f"Approved/{draft}", arrival="moved", note_hash="b2")
    mail.write(
        "pre_send_audit",
        durable=True,
        rfc822_message_id=ids["rfc"],
        idempotency_key=ids["key"],
        backend="gmail",
        note_path=f"Approved/{draft}",
        note_hash="b2",
        to=to,
        cc=cc,
        subject=subject,
        body_preview="Hi Sam",
    )
    mail.write(
        "email_sent",
        rfc822_message_id=ids["rfc"],
        idempotency_key=ids["key"],
        provider_message_id=ids["pid"],
        thread_id=f"t{n}",
        sent_at=audit_module.iso(audit_module.utcnow()),
        backend="gmail",
        note_path=f"Approved/{draft}",
    )
    h0.write(
        "email_sent",
        path=f"Approved/{draft}",
        note_hash="b2",
        to=to,
        subject=subject,
        idempotency_key=ids["key"],
        message_id=ids["pid"],
        rfc822_message_id=ids["rfc"],
        thread_id=f"t{n}",
        already_sent=False,
        backend="gmail",
        elapsed_ms=15.0,
    )
    vault.write("note_moved", tool="move_note", source=f"Approved/{draft}", destination=done)
    vault.write("note_moved", tool="move_note", source=f"Needs_Action/{email}", destination=f"Done/{email}")
    h0.write("source_filed", path=f"Needs_Action/{email}", done_path=f"Done/{email}", reply=done)
    h0.write("email_filed", path=f"Approved/{draft}", done_path=done, idempotency_key=ids["key"])
    return ids


def h0_log(vault_dir: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["log", "--vault", str(vault_dir), *args])
    out, err = capsys.readouterr()
    return code, out, err


def trail_events(out: str) -> list[str]:
    """The event column of `h0 log NOTE`'s lines."""
    return [line.split()[3] for line in out.splitlines()[1:] if line[:4].isdigit()]


# ----------------------------------------------------------------------------------- the list


def test_given_three_sends_on_two_days_when_listed_then_oldest_first_in_local_time_with_filed_note_and_id(
    vault_dir, clock, capsys
):
    clock.set("2026-11-19T15:00:00")
    sent_trail(vault_dir, 1, to="ann@example.com", subject="Re: Budget")
    clock.set("2026-11-20T14:00:00")
    sent_trail(vault_dir, 2, done="Done/REPLY_EMAIL_m2 (2).md", cc="Carol <carol@example.net>")
    sent_trail(vault_dir, 3, to="bob@example.com", subject="Re: Lunch")

    code, out, err = h0_log(vault_dir, capsys)

    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "3 message(s) sent, oldest first:"
    assert lines[1].startswith('2026-11-19 10:00  to ann@example.com  "Re: Budget"  Done/REPLY_EMAIL_m1.md')
    assert "(no longer there)" in lines[1]  # the log says Done/…, the vault no longer has it
    assert lines[1].endswith("id 19a0001")
    assert "to sam@example.org · cc carol@example.net  " in lines[2]  # real addresses, every field
    assert "Done/REPLY_EMAIL_m2 (2).md" in lines[2] and lines[2].endswith("id 19a0002")
    assert lines[3].startswith('2026-11-20 09:00  to bob@example.com  "Re: Lunch"')


def test_given_sends_over_days_when_filtered_by_date_then_only_that_local_range_is_shown(vault_dir, clock, capsys):
    for n, stamp in enumerate(("2026-11-18T12:00:00", "2026-11-20T03:00:00", "2026-11-20T12:00:00"), 1):
        clock.set(stamp)
        sent_trail(vault_dir, n)
    # 2026-11-20T03:00Z is 22:00 on the 19th in New York.
    assert "id 19a0002" in h0_log(vault_dir, capsys, "--since", "2026-11-19", "--until", "2026-11-19")[1]
    code, out, _ = h0_log(vault_dir, capsys, "--since", "2026-11-19")
    assert code == 0 and out.count(" id ") == 2 and "id 19a0001" not in out
    code, out, _ = h0_log(vault_dir, capsys, "--until", "2026-11-18")
    assert code == 0 and out.count(" id ") == 1 and "id 19a0001" in out
    clock.now = dt.datetime.now(UTC) - dt.timedelta(seconds=1)
    sent_trail(vault_dir, 4)
    code, out, _ = h0_log(vault_dir, capsys, "--today")
    assert code == 0 and out.count(" id ") == 1 and "id 19a0004" in out
    code, out, _ = h0_log(vault_dir, capsys, "--days", "1")
    assert code == 0 and out.count(" id ") == 1 and "id 19a0004" in out


def test_given_sends_when_filtered_by_recipient_or_note_then_substrings_match_in_any_case(vault_dir, clock, capsys):
    sent_trail(vault_dir, 1, to="Bob Builder <BOB@example.com>")
    sent_trail(vault_dir, 2, to="ann@example.com", cc="bob@example.com")
    sent_trail(vault_dir, 3, to="carol@example.com", draft="followup.md", done="Done/followup (2).md")

    code, out, _ = h0_log(vault_dir, capsys, "--to", "bob@")
    assert code == 0 and out.count(" id ") == 2 and "id 19a0003" not in out
    code, out, _ = h0_log(vault_dir, capsys, "--note", "FOLLOWUP")
    assert code == 0 and out.count(" id ") == 1 and "Done/followup (2).md" in out
    code, out, err = h0_log(vault_dir, capsys, "--to", "nobody@")
    assert code == 1 and out == "" and err.count("\n") == 1 and "matching the filters" in err


def test_given_more_sends_than_the_limit_then_the_newest_are_shown_with_the_true_total(vault_dir, clock, capsys):
    for n in range(1, 6):
        sent_trail(vault_dir, n)
    code, out, _ = h0_log(vault_dir, capsys, "--limit", "2")
    assert code == 0
    assert out.splitlines()[0] == "5 message(s) sent, oldest first — showing the newest 2 of 5 (--limit 0 shows all):"
    assert [line.rsplit(" ", 1)[1] for line in out.splitlines()[1:]] == ["19a0004", "19a0005"]
    assert h0_log(vault_dir, capsys, "--limit", "0")[1].count(" id ") == 5


def test_json_is_one_array_of_sends_and_says_the_total_on_stderr(vault_dir, clock, capsys):
    ids = sent_trail(vault_dir, 1, done="Done/REPLY_EMAIL_m1 (2).md")
    sent_trail(vault_dir, 2)
    code, out, err = h0_log(vault_dir, capsys, "--json", "--limit", "1")
    assert code == 0
    (send,) = json.loads(out)
    assert send["provider_message_id"] == "19a0002" and send["filed"] is True
    assert send["sent_from"] == "Approved/REPLY_EMAIL_m2.md" and send["to"] == "sam@example.org"
    assert "showing the newest 1 of 2" in err
    (first,) = json.loads(
        h0_log(vault_dir, capsys, "--json", "--until", clock.now.astimezone().date().isoformat(), "--note", "(2)")[1]
    )
    assert first["note"] == ids["done"] and first["rfc822_message_id"] == ids["rfc"]


def test_a_date_range_opens_only_the_files_of_its_days(vault_dir, clock, capsys):
    clock.set("2026-11-20T14:00:00")
    sent_trail(vault_dir, 1)
    (vault_dir / "Logs" / "h0_2026-11-01.jsonl").write_text('not json\n{"torn": \n')
    (vault_dir / "Logs" / "gmail_mcp_2026-11-02.jsonl").mkdir()  # a day it must not even open
    code, out, err = h0_log(vault_dir, capsys, "--since", "2026-11-15")
    assert code == 0 and out.count(" id ") == 1 and err == ""
    code, out, err = h0_log(vault_dir, capsys)
    assert code == 0 and out.count(" id ") == 1 and "skipped 2 malformed line(s)" in err


# ----------------------------------------------------------------------------------- one note


def test_a_sent_note_is_traced_from_ingest_to_filing_under_the_name_it_was_filed_as(vault_dir, clock, capsys):
    ids = sent_trail(vault_dir, 1, done="Done/REPLY_EMAIL_m1 (2).md")
    sent_trail(vault_dir, 2)  # another email and reply: not in the trail

    for note in ("REPLY_EMAIL_m1", "[[REPLY_EMAIL_m1]]", "Done/REPLY_EMAIL_m1 (2).md", "Approved/REPLY_EMAIL_m1.md"):
        code, out, err = h0_log(vault_dir, capsys, note)
        assert code == 0 and err == "", note
        assert out.splitlines()[0] == "Done/REPLY_EMAIL_m1 (2).md — 7 event(s), oldest first:"
        assert trail_events(out) == [
            "email_ingested",
            "triage_decision",
            "draft_approved",
            "pre_send_audit",
            "email_sent",
            "source_filed",
            "email_filed",
        ], note
    lines = out.splitlines()
    assert "ingest" in lines[1] and "Needs_Action/EMAIL_m1.md" in lines[1] and "(provider id 18c0001)" in lines[1]
    assert "→ draft Drafts/REPLY_EMAIL_m1.md" in lines[2] and "moved into Approved/" in lines[3]
    assert ids["rfc"] in lines[4] and "provider id 19a0001 via gmail" in lines[5]
    assert lines[7].endswith("Approved/REPLY_EMAIL_m1.md  → Done/REPLY_EMAIL_m1 (2).md")
    assert "--all shows them" in lines[8] and "m2" not in out

    code, out, _ = h0_log(vault_dir, capsys, "--all", "REPLY_EMAIL_m1")
    assert code == 0 and trail_events(out).count("note_moved") == 2 and trail_events(out).count("email_sent") == 2
    code, out, _ = h0_log(vault_dir, capsys, "--json", "EMAIL_m1")  # the email: its reply's trail comes with it
    assert [r["event"] for r in json.loads(out)][:2] == ["email_ingested", "triage_decision"]
    assert {"stage": "filing", "stream": "h0"}.items() <= json.loads(out)[-1].items()


def test_a_reused_name_traces_the_latest_note_and_points_to_the_earlier_one(vault_dir, clock, capsys):
    clock.set("2026-11-19T15:00:00")
    sent_trail(vault_dir, 1, draft="followup.md", done="Done/followup.md", subject="Re: Week 46")
    clock.set("2026-11-20T15:00:00")
    sent_trail(vault_dir, 2, draft="followup.md", done="Done/followup (2).md", subject="Re: Week 47")

    code, out, _ = h0_log(vault_dir, capsys, "followup")
    assert code == 0 and out.startswith("Done/followup (2).md — 7 event(s)")
    assert "Week 47" in out and "Week 46" not in out
    assert out.splitlines()[-1] == 'Another note had this name: Done/followup.md — h0 log "Done/followup.md"'
    code, out, _ = h0_log(vault_dir, capsys, "Done/followup.md")
    assert code == 0 and "Week 46" in out and "Week 47" not in out and "Another note" not in out


def test_refusals_failures_and_a_second_approval_show_in_between(vault_dir, clock, capsys):
    h0, mail, _ = streams(vault_dir)
    h0.write("draft_approved", path="Approved/offer.md", arrival="written", note_hash="c1")
    h0.write(
        "send_refused",
        "error",
        path="Approved/offer.md",
        returned_to="Drafts/offer.md",
        reason="invalid_request",
        message="The draft has no recipient.",
        field="to",
    )
    h0.write("draft_approved", path="Approved/offer.md", arrival="moved", note_hash="c2")
    mail.write(
        "pre_send_audit",
        rfc822_message_id="<h0.o@h0.local>",
        idempotency_key="n-o",
        backend="smtp",
        note_path="Approved/offer.md",
        note_hash="c2",
        to="dee@example.com",
        subject="Offer",
    )
    mail.write(
        "send_failed",
        "error",
        rfc822_message_id="<h0.o@h0.local>",
        idempotency_key="n-o",
        backend="smtp",
        error="send_failed",
        reason="connection reset",
        retryable=True,
        outcome="failed",
        note_path="Approved/offer.md",
    )
    h0.write(
        "send_failed",
        "error",
        retry_in=2.0,
        path="Approved/offer.md",
        to="dee@example.com",
        subject="Offer",
        error="send_failed",
        message="connection reset",
    )
    mail.write(
        "email_sent",
        rfc822_message_id="<h0.o@h0.local>",
        idempotency_key="n-o",
        provider_message_id="<smtp-1>",
        backend="smtp",
        note_path="Approved/offer.md",
    )
    h0.write("email_filed", path="Approved/offer.md", done_path="Done/offer.md", idempotency_key="n-o")
    h0.write("daemon_stopped", pid=1)

    code, out, _ = h0_log(vault_dir, capsys, "offer.md")
    assert code == 0
    assert trail_events(out) == [
        "draft_approved",
        "send_refused",
        "draft_approved",
        "pre_send_audit",
        "send_failed",
        "send_failed",
        "email_sent",
        "email_filed",
    ]
    assert "invalid_request: The draft has no recipient. → back in Drafts/offer.md" in out
    assert "send_failed: connection reset (retry in 2 s)" in out
    assert "written in Approved/ (sent once quiet)" in out


def test_a_second_reply_to_the_same_email_does_not_pull_in_its_sibling(vault_dir, clock, capsys):
    sent_trail(vault_dir, 1)
    h0, _mail, _ = streams(vault_dir)
    (vault_dir / "Drafts" / "more.md").write_text(
        "---\nto: sam@example.org\nsubject: More\nreply_to_message_id: '18c0001'\n---\nAlso…\n"
    )
    h0.write("draft_approved", path="Approved/more.md", arrival="moved", note_hash="d1")
    h0.write(
        "send_held",
        "warning",
        path="Approved/more.md",
        returned_to="Drafts/more.md",
        reason="already_answered",
        message="Already answered.",
        answered_by="Approved/REPLY_EMAIL_m1.md",
    )

    code, out, _ = h0_log(vault_dir, capsys, "more")
    assert code == 0 and out.startswith("Drafts/more.md — 3 event(s)")
    assert trail_events(out) == ["email_ingested", "draft_approved", "send_held"]  # its email, then itself


# ----------------------------------------------------------------------------------- hostile input


def test_a_strangers_subject_and_name_reach_the_terminal_without_control_characters(vault_dir, clock, capsys):
    evil = "Re: Invoice\x1b]0;pwned\x07\x1b[2J\r\nFake: header\u202e\x9b31m"
    sent_trail(vault_dir, 1, subject=evil, to="eve@example.com\x1b[8m")
    h0, _, _ = streams(vault_dir)
    h0.write(
        "email_ingested",
        path="Needs_Action/EMAIL_m1.md",
        message_id="18c0001",
        subject=evil,
        sender="Eve\x07 <eve@example.com>",
    )
    for args in ((), ("REPLY_EMAIL_m1",), ("--all", "EMAIL_m1")):
        code, out, err = h0_log(vault_dir, capsys, *args)
        assert code == 0
        assert not any(ch in out + err for ch in "\x1b\x07\x9b\r\u202e"), args
        assert all(line.isprintable() for line in out.splitlines()), args
    code, out, _ = h0_log(vault_dir, capsys, "--json")
    assert json.loads(out)[0]["subject"] == evil and "\x1b" not in out  # JSON escapes it


def test_malformed_log_lines_are_skipped_and_counted(vault_dir, clock, capsys):
    ids = sent_trail(vault_dir, 1)
    day = clock.now.date().isoformat()
    with open(vault_dir / "Logs" / f"gmail_mcp_{day}.jsonl", "ab") as handle:
        handle.write(
            b'not json at all\n[1, 2]\n{"event": "email_sent"}\n{"timestamp": "2026-11-20T14:00:00.000Z", '
            b'"event": "email_sent", "provider_message_id": "x"\n\xff\xfe\n'
        )
    code, out, err = h0_log(vault_dir, capsys)
    assert code == 0 and ids["pid"] in out and out.count(" id ") == 1
    assert err == "h0 log: skipped 5 malformed line(s) in Logs/ (not JSON records).\n"
    code, out, err = h0_log(vault_dir, capsys, "REPLY_EMAIL_m1")
    assert code == 0 and "skipped 5 malformed" in err and "email_filed" in out


def test_a_note_argument_outside_the_vault_is_a_usage_error(vault_dir, clock, capsys):
    sent_trail(vault_dir, 1)
    (vault_dir.parent / "secret.md").write_text("---\nidempotency_key: n-key1\n---\n")
    for note in ("../secret.md", "Done/../../secret.md", "..", str(vault_dir.parent / "secret.md")):
        code, out, err = h0_log(vault_dir, capsys, note)
        assert code == 2 and out == "" and err.startswith("h0 log: NOTE") and err.count("\n") == 1, note
    assert h0_log(vault_dir, capsys, "Done/../Done/REPLY_EMAIL_m1.md")[0] == 0  # stays inside: fine


def test_an_unknown_note_or_an_empty_log_is_one_line_and_exit_1(vault_dir, clock, capsys):
    code, out, err = h0_log(vault_dir, capsys)
    assert (code, out) == (1, "") and err == "h0 log: no message was sent (nothing in Logs/ says so).\n"
    code, out, err = h0_log(vault_dir, capsys, "anything")
    assert code == 1 and out == "" and err.count("\n") == 1 and "'anything'" in err
    sent_trail(vault_dir, 1)
    (vault_dir / "Done" / "never-sent.md").write_text("---\nto: a@example.com\n---\nhi\n")
    for note in ("nope", "Done/never-sent.md", "[[nope|alias]]"):
        code, out, err = h0_log(vault_dir, capsys, note)
        assert code == 1 and out == "" and err.count("\n") == 1, note
    os.rename(vault_dir / "Logs", vault_dir / "Logs-gone")
    assert h0_log(vault_dir, capsys)[0] == 1


@pytest.mark.parametrize(
    "args",
    [
        ("--today", "--since", "2026-11-01"),
        ("--since", "2026-13-01"),
        ("--until", "yesterday"),
        ("--days", "0"),
        ("--limit", "-1"),
        ("--since", "2026-11-20", "--until", "2026-11-19"),
        ("NOTE", "--to", "bob@"),
        ("",),
    ],
)
def test_bad_options_are_usage_errors(vault_dir, capsys, args):
    code, out, err = h0_log(vault_dir, capsys, *args)
    assert code == 2 and out == "" and err.startswith("h0 log: ") and err.count("\n") == 1


# ----------------------------------------------------------------------------------- the real daemon


def test_real_daemon_gmail_inbox_to_sent_reply_then_h0_log_traces_it_end_to_end(vault_dir, gmail, token_path, capsys):
    """Given a question in the (fake) Gmail inbox, when H0 ingests it, triages it, the human approves the
    edited draft and H0 sends and files it, then `h0 log <draft>` shows every step in order, with Gmail's id."""
    from h0.config import load_settings
    from h0.triage import Triager, ensure_rules_file
    from tests.pipeline.harness import approve, edit_template, frontmatter, running_daemon, wait_until

    ensure_rules_file(vault_dir)
    triager = Triager.from_settings(load_settings(vault_path=vault_dir), vault_dir)
    msg_id = gmail.add_message(
        sender="Dana Rivera <dana@example.com>",
        subject="Friday review?",
        body="Could we move the review to Friday?",
        thread_id="thread-77",
    )
    overrides = {
        "mail_backend": "gmail",
        "gmail_token_path": token_path,
        "gmail_api_endpoint": gmail.api_endpoint,
        "gmail_token_uri": gmail.token_uri,
    }
    draft = f"REPLY_EMAIL_{msg_id}.md"
    with running_daemon(vault_dir, triager=triager, ingest=True, **overrides) as daemon:
        daemon.request_ingest()
        # The triage's audit line is written just after its notes (one line per batch): a human
        # reads the draft for seconds, the test approves in milliseconds, so it waits for the line.
        assert wait_until(
            lambda: (
                (vault_dir / "Drafts" / draft).exists()
                and frontmatter(vault_dir, f"Needs_Action/EMAIL_{msg_id}.md")["status"] != "pending"
                and any(AuditLog(vault_dir / "Logs", "h0").records(event="triage_decision"))
            )
        )
        edit_template(vault_dir, draft)
        approve(vault_dir, draft)
        assert wait_until(
            lambda: (vault_dir / "Done" / draft).exists() and (vault_dir / f"Done/EMAIL_{msg_id}.md").exists()
        )
    (sent,) = gmail.sent

    code, out, err = h0_log(vault_dir, capsys, draft[:-3])
    assert code == 0 and err == ""
    assert out.startswith(f"Done/{draft} — 7 event(s)")
    assert trail_events(out) == [
        "email_ingested",
        "triage_decision",
        "draft_approved",
        "pre_send_audit",
        "email_sent",
        "source_filed",
        "email_filed",
    ]
    assert f"provider id {msg_id}" in out and f"provider id {sent.id} via gmail" in out
    assert "moved into Approved/" in out and f"→ Done/{draft}" in out
    code, out, _ = h0_log(vault_dir, capsys, "--to", "DANA@")
    assert code == 0 and f"Done/{draft}  id {sent.id}" in out and '"Re: Friday review?"' in out


def test_real_daemon_refused_then_fixed_and_filed_under_a_new_name_is_one_trail(vault_dir, capsys):
    """Given an email note in Needs_Action/ and a Done/ note already named like its reply, when the human
    approves the unedited template (refused, back in Drafts/), fixes it and approves again, then the trail
    shows the refusal between the two approvals and follows the reply to 'name (2).md'."""
    from h0.config import load_settings
    from h0.triage import Triager, ensure_rules_file
    from tests.pipeline.harness import approve, edit_template, frontmatter, running_daemon, wait_until

    ensure_rules_file(vault_dir)
    received = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # today: no reply owed yet, no follow-up event
    (vault_dir / "Needs_Action" / "EMAIL_q7.md").write_text(
        "---\ntype: email\nstatus: pending\nmessage_id: q7\nthread_id: t-q7\nfrom: 'Sam <sam@example.org>'\n"
        f"to: me@example.com\nsubject: 'Dinner?'\nreceived: {received}\n---\nFree on Sunday?\n"
    )
    (vault_dir / "Done" / "REPLY_EMAIL_q7.md").write_text("---\nstatus: sent\n---\nan older reply\n")
    triager = Triager.from_settings(load_settings(vault_path=vault_dir), vault_dir)
    with running_daemon(vault_dir, triager=triager):
        assert wait_until(
            lambda: (
                frontmatter(vault_dir, "Needs_Action/EMAIL_q7.md").get("status") == "awaiting_approval"
                and any(AuditLog(vault_dir / "Logs", "h0").records(event="triage_decision"))
            )
        )  # see above
        approve(vault_dir, "REPLY_EMAIL_q7.md")
        refused = vault_dir / "Drafts/REPLY_EMAIL_q7.md"  # absent while the note sits in Approved/
        assert wait_until(
            lambda: refused.exists() and frontmatter(vault_dir, "Drafts/REPLY_EMAIL_q7.md").get("status") == "not_sent"
        )
        edit_template(vault_dir, "REPLY_EMAIL_q7.md")
        approve(vault_dir, "REPLY_EMAIL_q7.md")
        assert wait_until(lambda: (vault_dir / "Done/REPLY_EMAIL_q7 (2).md").exists())
    sent_id = frontmatter(vault_dir, "Done/REPLY_EMAIL_q7 (2).md")["gmail_message_id"]

    for note in ("REPLY_EMAIL_q7", "Done/REPLY_EMAIL_q7 (2).md"):
        code, out, _ = h0_log(vault_dir, capsys, note)
        assert code == 0 and out.startswith("Done/REPLY_EMAIL_q7 (2).md — 8 event(s)"), out
        assert trail_events(out) == [
            "triage_decision",
            "draft_approved",
            "send_refused",
            "draft_approved",
            "pre_send_audit",
            "email_sent",
            "source_filed",
            "email_filed",
        ]
        assert f"provider id {sent_id} via outbox" in out
    assert h0_log(vault_dir, capsys, "Done/REPLY_EMAIL_q7.md")[0] == 1  # the older note: nothing logged
