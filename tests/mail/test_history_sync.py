"""Gmail history sync (issue 11): new mail → a note, for a few quota units, never twice, never lost.

Everything runs against the fake Gmail (tests/fakes/fake_gmail.py) through the real
google-api-python-client, the real MailService and the real ingest handler writing into a
real vault; only the MCP hop is left out (the tools are called in-process, as the mail
server's tool functions call them).
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from h0.errors import InternalError, InvalidRequest
from h0.handlers.context import HandlerContext
from h0.handlers.ingest import ingest_new_mail
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.mail.providers.backend import ChangesUnreadable
from h0.vault import AuditLog, Vault
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import gmail_settings_for
from tests.statedb import crash_edit

INGESTED = "H0/ingested"


@pytest.fixture
def ctx(vault_dir: Path, service: MailService) -> HandlerContext:
    return HandlerContext.local(
        service.settings, Vault(vault_dir), mail=LocalMail(service), audit=AuditLog(vault_dir / "Logs", "h0")
    )


def audit(vault_dir: Path) -> list[dict]:
    """The daemon side's audit records (h0_*.jsonl)."""
    return [
        json.loads(line)
        for log in sorted((vault_dir / "Logs").glob("h0_*.jsonl"))
        for line in log.read_text().splitlines()
    ]


def email_notes(vault_dir: Path) -> list[str]:
    """Every email note in the vault, wherever triage or the human filed it."""
    return sorted(p.name for p in vault_dir.rglob("EMAIL_*.md"))


def note_for(message_id: str) -> str:
    return f"EMAIL_{message_id}.md"


def ingested(gmail: FakeGmail, message_id: str) -> bool:
    label = gmail.label_named(INGESTED)
    return label is not None and label["id"] in gmail.message(message_id).labels


def cursor(service: MailService, gmail: FakeGmail) -> int | None:
    row = service.state.mail_sync(f"gmail:{gmail.address}")  # the sync's cursor is kept per account
    return int(row["cursor"]) if row and row.get("cursor") is not None else None


def methods(gmail: FakeGmail) -> list[str]:
    return [name for name, _ in gmail.quota]


def synced(ctx: HandlerContext, gmail: FakeGmail) -> None:
    """Given a mailbox H0 already follows: the first run's catch-up is over."""
    before = gmail.history_id
    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up" and report.failed == 0
    assert (
        cursor(ctx.mail.service, gmail) == before
    )  # the profile's, read before the query (labelling moves Gmail's on)


# -- new mail, and nothing new ------------------------------------------------------------


def test_first_run_catches_up_by_query_then_new_mail_becomes_a_note_from_history(ctx, gmail, vault_dir, service):
    """Given two unread messages before H0's first run, when ingest runs, then both become notes
    (catch-up by query) and the cursor is the profile's historyId; when a third arrives, the
    next pass finds it through history.list and writes its note."""
    first = [gmail.add_message(subject=f"before {i}") for i in range(2)]
    profile = gmail.history_id
    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up" and len(report.written) == 2
    assert email_notes(vault_dir) == sorted(note_for(m) for m in first)
    assert all(ingested(gmail, m) for m in first)
    assert cursor(service, gmail) == profile

    new = gmail.add_message(sender="Bob <bob@example.com>", subject="After", body="Fresh mail")
    gmail.reset_quota()
    report = ingest_new_mail(ctx)
    assert report.mode == "history" and report.written == [f"Needs_Action/{note_for(new)}"]
    note = Vault(vault_dir).read_note(f"Needs_Action/{note_for(new)}")
    assert note.frontmatter["from"] == "Bob <bob@example.com>" and "Fresh mail" in note.body
    assert ingested(gmail, new)
    # One history call, one read, one label: 2 + 5 + 5 units.
    assert sorted(methods(gmail)) == ["history.list", "messages.get", "messages.modify"]
    assert cursor(service, gmail) >= max(
        r["id"] for r in gmail.history if r["message_id"] == new and r["type"] == "messageAdded"
    )


def test_nothing_new_is_one_history_call_of_two_quota_units(ctx, gmail, service):
    """Given a synced mailbox, when three polls find nothing new, then each is exactly one
    history.list (2 units) and nothing else: no profile, no search, no batch."""
    gmail.add_message(subject="old")
    synced(ctx, gmail)
    gmail.reset_quota()
    for _ in range(3):
        report = ingest_new_mail(ctx)
        assert report.written == [] and report.mode == "history"
    assert gmail.quota == [("history.list", 2)] * 3
    assert gmail.batches == []


def test_the_cursor_moves_only_after_the_notes_are_written_and_never_back(service, gmail):
    """Given new mail, when list_new_emails answers, then the cursor has not moved; only the
    acknowledgement (label first, then cursor) moves it; an older or forged token never moves it back."""
    gmail.add_message(subject="seed")
    first = service.list_new_emails(25)
    service.ack_new_emails(first.cursor, [e.id for e in first.emails])
    start = cursor(service, gmail)

    message = gmail.add_message(subject="new")
    listed = service.list_new_emails(25)
    assert [e.id for e in listed.emails] == [message] and listed.mode == "history"
    assert cursor(service, gmail) == start and not ingested(gmail, message)

    acked = service.ack_new_emails(listed.cursor, [message])
    assert acked.labelled == 1 and ingested(gmail, message)
    moved = cursor(service, gmail)
    assert moved > start

    # A late acknowledgement of the first slice cannot take the cursor back.
    service.ack_new_emails(first.cursor, [])
    assert cursor(service, gmail) == moved
    with pytest.raises(InvalidRequest):
        service.ack_new_emails(listed.cursor[:-4] + "0000", [])
    kind, value, mac = listed.cursor.split(".")
    with pytest.raises(InvalidRequest):  # a cursor pushed past mail nobody saw
        service.ack_new_emails(f"{kind}.{int(value) + 1000}.{mac}", [])
    assert cursor(service, gmail) == moved


# -- expired history and a lost cursor ------------------------------------------------------


def test_expired_history_catches_up_by_query_without_duplicates(ctx, gmail, vault_dir, service):
    """Given a synced mailbox whose history Gmail no longer keeps (404 on the cursor), when new
    mail arrived meanwhile, then a catch-up by query writes exactly the new notes (nothing
    ingested before comes back) and history resumes from the profile's historyId."""
    old = gmail.add_message(subject="already a note")
    synced(ctx, gmail)
    missed = [gmail.add_message(subject=f"while away {i}") for i in range(3)]
    gmail.expire_history()
    gmail.reset_quota()

    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up" and sorted(report.written) == sorted(f"Needs_Action/{note_for(m)}" for m in missed)
    assert "messages.list" in methods(gmail) and methods(gmail)[0] == "history.list"
    assert email_notes(vault_dir) == sorted(note_for(m) for m in [old, *missed])
    assert cursor(service, gmail) == gmail.history_floor  # the profile's historyId when the catch-up began

    later = gmail.add_message(subject="after the catch-up")
    report = ingest_new_mail(ctx)
    assert report.mode == "history" and report.written == [f"Needs_Action/{note_for(later)}"]
    assert len(email_notes(vault_dir)) == 5


def test_a_lost_cursor_never_duplicates_a_note_the_label_is_the_truth(ctx, gmail, vault_dir, service):
    """Given ingested mail, when H0's sync row is gone (a new state database), then the next pass
    catches up by query and writes no second note for anything labelled H0/ingested."""
    ids = [gmail.add_message(subject=f"m{i}") for i in range(4)]
    synced(ctx, gmail)
    assert crash_edit(service.state.path, "DELETE FROM mail_sync")
    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up" and report.written == [] and report.duplicates == 0
    assert email_notes(vault_dir) == sorted(note_for(m) for m in ids)


# -- volume, batches and Gmail's concurrency limit -----------------------------------------


@pytest.mark.parametrize("size", [120, pytest.param(500, marks=pytest.mark.stress)])
def test_a_burst_of_messages_becomes_as_many_notes_exactly_once_in_batches_of_at_most_50(
    ctx, gmail, vault_dir, service, size: int
):
    """Given a synced mailbox, when a burst of messages arrives at once (120: three batches, the last
    one partial; 500 under `-m stress`), then one pass writes a note for each, each message is read
    in a batch request of at most 50 calls and labelled once, and a second pass finds nothing."""
    synced(ctx, gmail)
    burst = [gmail.add_message(subject=f"burst {i}", body=f"body {i}") for i in range(size)]
    gmail.reset_quota()
    report = ingest_new_mail(ctx)
    assert len(report.written) == size and report.failed == 0 and report.duplicates == 0
    assert email_notes(vault_dir) == sorted(note_for(m) for m in burst)
    assert all(ingested(gmail, m) for m in burst)
    assert gmail.batches and max(gmail.batches) <= 50
    assert methods(gmail).count("messages.get") == size  # each read once, no re-read
    labelled = methods(gmail).count("messages.modify") + 1000 * methods(gmail).count("messages.batchModify")
    assert labelled >= size
    again = ingest_new_mail(ctx)
    assert again.written == [] and again.mode == "history"


def test_429_too_many_concurrent_requests_is_retried_and_nothing_is_lost(ctx, gmail, vault_dir, service):
    """Given Gmail refuses the parts of a batch past 7 with 429 "Too many concurrent requests for
    user", when 60 messages arrive, then every refused part is retried, every message becomes
    one note, and later batches stay within what Gmail accepted."""
    synced(ctx, gmail)
    gmail.concurrency_limit = 7
    gmail.concurrency_retry_after = 0.01
    burst = [gmail.add_message(subject=f"c{i}") for i in range(60)]
    gmail.reset_quota()
    report = ingest_new_mail(ctx)
    assert len(report.written) == 60 and report.failed == 0
    assert email_notes(vault_dir) == sorted(note_for(m) for m in burst)
    assert all(ingested(gmail, m) for m in burst)
    assert gmail.batches[0] == min(50, 60) or gmail.batches[0] <= 50
    assert all(size <= 7 for size in gmail.batches[1:])  # learned: no more parts than Gmail took
    assert methods(gmail).count("messages.get") == 60  # a refused part is not charged, a retried one once


def test_429_on_the_history_call_ends_the_pass_at_once_and_a_later_pass_brings_the_message(ctx, gmail, vault_dir):
    """Given Gmail answers the history call 429 twice, when ingest passes run, then each of the first two
    makes one history call and ends with Gmail's Retry-After said (the mail server answers at once; the
    daemon's work queue decides when to look again), nothing is lost, and the third pass writes the note."""
    synced(ctx, gmail)
    message = gmail.add_message(subject="behind a 429")
    gmail.fail_next(
        429,
        count=2,
        retry_after=7,
        path_contains="/history",
        message="Too many concurrent requests for user.",
        reason="rateLimitExceeded",
    )
    before = len([p for _, p in gmail.requests if "/history" in p])
    for _ in range(2):
        assert ingest_new_mail(ctx).written == []
    assert len([p for _, p in gmail.requests if "/history" in p]) == before + 2  # one call a pass, no retry inside
    refused = [r for r in audit(vault_dir) if r["event"] == "ingest_failed"]
    assert len(refused) == 2 and all(r["error"] == "rate_limited" for r in refused)
    report = ingest_new_mail(ctx)
    assert report.written == [f"Needs_Action/{note_for(message)}"] and report.mode == "history"


# -- hostile answers ----------------------------------------------------------------------


def _record_id(answer: dict) -> dict:
    answer["history"][0]["id"] = "12abc"
    return answer


def _no_message(answer: dict) -> dict:
    answer["history"][0]["messagesAdded"] = [{"labelIds": ["INBOX"]}]
    return answer


def _odd_message_id(answer: dict) -> dict:
    answer["history"][0]["messagesAdded"][0]["message"]["id"] = "../../Approved/x"
    return answer


def _history_id(answer: dict) -> dict:
    return {**answer, "historyId": "99999999999999999999999"}  # 23 digits: not a uint64


def _not_a_list(answer: dict) -> dict:
    return {**answer, "history": {"id": "1"}}


def _records_not_objects(answer: dict) -> dict:
    return {**answer, "history": ["1", 2]}


def _added_not_a_list(answer: dict) -> dict:
    answer["history"][0]["messagesAdded"] = 7
    return answer


HOSTILE = [_record_id, _no_message, _odd_message_id, _history_id, _not_a_list, _records_not_objects, _added_not_a_list]


@pytest.mark.parametrize("corrupt", HOSTILE, ids=[f.__name__.strip("_") for f in HOSTILE])
def test_a_history_answer_h0_cannot_read_is_a_typed_error_and_nothing_is_lost(ctx, gmail, vault_dir, service, corrupt):
    """Given a synced mailbox, when history.list answers something its API does not promise,
    then the backend raises ChangesUnreadable (no cursor comes from it), the pass catches up by
    query instead, the new message becomes one note, and history resumes afterwards."""
    synced(ctx, gmail)
    stored = cursor(service, gmail)
    message = gmail.add_message(subject="behind a broken history")

    gmail.rewrite_next(corrupt, path_contains="/history")
    with pytest.raises(ChangesUnreadable) as raised:
        service.backend.changes_since(stored, label="INBOX", limit=10)
    assert isinstance(raised.value, InternalError) and raised.value.details.get("retryable") is False
    assert "Traceback" not in raised.value.message and cursor(service, gmail) == stored

    gmail.rewrite_next(corrupt, path_contains="/history")
    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up" and report.written == [f"Needs_Action/{note_for(message)}"]
    assert cursor(service, gmail) >= stored
    later = gmail.add_message(subject="after")
    assert ingest_new_mail(ctx).written == [f"Needs_Action/{note_for(later)}"]
    assert len(email_notes(vault_dir)) == 2


def test_a_profile_with_a_non_numeric_history_id_is_a_typed_error_and_ingest_falls_back_to_the_query(
    ctx, gmail, vault_dir, service
):
    """Given a first run, when getProfile's historyId is not a number, then no cursor is stored and
    the pass falls back to the query-based ingest: the mail still becomes a note."""
    message = gmail.add_message(subject="first")
    gmail.rewrite_next(lambda answer: {**answer, "historyId": "NaN"}, path_contains="/profile")
    report = ingest_new_mail(ctx)
    assert report.mode == "query" and report.written == [f"Needs_Action/{note_for(message)}"]
    assert service.state.mail_sync(f"gmail:{gmail.address}") in (None,) or cursor(service, gmail) is None


# -- a note that cannot be written ------------------------------------------------------------


def test_a_message_whose_note_cannot_be_written_stays_unlabelled_and_is_caught_up_later(ctx, gmail, vault_dir, service):
    """Given a message whose note cannot be written (its name is taken by a folder), when ingest
    runs, then the message is not labelled, the cursor still moves (the mail behind it is not held
    up), and a catch-up by query brought forward picks it up once the obstacle is gone."""
    synced(ctx, gmail)
    blocked = gmail.add_message(subject="blocked")
    fine = gmail.add_message(subject="fine")
    (vault_dir / "Needs_Action" / note_for(blocked)).mkdir()
    report = ingest_new_mail(ctx)
    assert report.failed == 1 and report.written == [f"Needs_Action/{note_for(fine)}"]
    assert not ingested(gmail, blocked) and ingested(gmail, fine)
    row = service.state.mail_sync(f"gmail:{gmail.address}")
    assert row["failures"] == 1 and row["catch_up_due"] is not None

    (vault_dir / "Needs_Action" / note_for(blocked)).rmdir()
    service.sync.clock = lambda: row["catch_up_due"] + 1  # the backoff has passed
    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up" and report.written == [f"Needs_Action/{note_for(blocked)}"]
    assert ingested(gmail, blocked)
    assert email_notes(vault_dir) == sorted([note_for(blocked), note_for(fine)])


# -- the token --------------------------------------------------------------------------------


def test_an_expired_token_is_refreshed_once_and_persisted_0600(vault_dir, gmail, tmp_path):
    """Given an expired access token, when ingest syncs, then the token is refreshed, the new one is
    written back to token.json with mode 0600, and a second service uses it without refreshing."""
    folder = tmp_path / "secrets"
    folder.mkdir()
    token = gmail.write_token(folder / "token.json", expired=True)
    before = json.loads(token.read_text())["token"]
    gmail.add_message(subject="needs a fresh token")
    service = MailService(gmail_settings_for(vault_dir, gmail, token))
    try:
        ctx = HandlerContext.local(service.settings, Vault(vault_dir), mail=LocalMail(service))
        assert len(ingest_new_mail(ctx).written) == 1
    finally:
        service.close()
    assert gmail.token_refreshes == 1
    saved = json.loads(token.read_text())
    assert saved["token"] != before and saved["refresh_token"]
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    again = MailService(gmail_settings_for(vault_dir, gmail, token))
    try:
        gmail.add_message(subject="second")
        listed = again.list_new_emails(25)
        assert len(listed.emails) == 1
    finally:
        again.close()
    assert gmail.token_refreshes == 1


def test_a_new_message_gmail_will_not_give_is_looked_for_again_by_query(ctx, gmail, vault_dir, service):
    """Given a new message whose messages.get Gmail refuses (400, not a deletion), when ingest runs,
    then it is skipped and logged, the cursor moves on, and a catch-up by query is brought forward
    that ingests it once Gmail answers again."""
    synced(ctx, gmail)
    refused = gmail.add_message(subject="refused once")
    gmail.fail_next(400, path_contains=f"messages/{refused}")
    report = ingest_new_mail(ctx)
    assert report.skipped == 1 and report.written == [] and not ingested(gmail, refused)
    row = service.state.mail_sync(f"gmail:{gmail.address}")
    assert row["failures"] == 1 and row["catch_up_due"] is not None

    service.sync.clock = lambda: row["catch_up_due"] + 1
    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up" and report.written == [f"Needs_Action/{note_for(refused)}"]
    assert email_notes(vault_dir) == [note_for(refused)]
