"""Every IMAP server (issue 25): one that keeps no custom keywords still ingests, exactly once.

The server is a real pymap, configured like the one the other IMAP tests use but declaring no
keywords, so its PERMANENTFLAGS hold only the system flags (no `\\*`) and a STORE of
`H0-ingested` is silently dropped — what hosted Exchange-style servers do. Before this, every
message failed with "did not keep the keyword" and `h0 doctor` exited 1.
"""

# ruff: noqa: F811 — the IMAP fixtures are imported from tests.mail.imap_fixtures, then named as parameters
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from loguru import logger

from h0.handlers.ingest import ingest_new_mail
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.vault import Vault
from tests.fakes.imap_server import PymapServer
from tests.mail.imap_fixtures import imap_settings, raw_message, relay  # noqa: F401
from tests.security.conftest import handler_context


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PymapServer]:
    server = PymapServer(tmp_path_factory.mktemp("pymap-no-keywords"), keywords=()).start()
    yield server
    server.stop()


@pytest.fixture
def bare(bare_server: PymapServer) -> PymapServer:
    for folder in ("INBOX", "Sent", "Archive"):
        bare_server.empty(folder)
    return bare_server


@pytest.fixture
def said() -> Iterator[list[str]]:
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(str(message)), level="WARNING", format="{message}")
    yield lines
    logger.remove(sink)


def service_for(vault_dir: Path, server: PymapServer, relay) -> MailService:
    return MailService(imap_settings(vault_dir, server, relay[0]), trusted_caller=True)


def ingest(vault_dir: Path, service: MailService):
    return ingest_new_mail(handler_context(vault_dir, LocalMail(service)))


def subjects(vault_dir: Path, paths: list[str]) -> list[str]:
    return [Vault(vault_dir).read_note(p).frontmatter["subject"] for p in paths]


def email_notes(vault_dir: Path) -> list[str]:
    return sorted(p.name for p in (vault_dir / "Needs_Action").glob("EMAIL_*.md"))


def test_given_the_server_keeps_no_keywords_then_it_says_so(bare):
    client = bare.client()
    try:
        flags = client.select_folder("INBOX")[b"PERMANENTFLAGS"]
    finally:
        client.logout()
    assert b"\\*" not in flags and b"H0-ingested" not in flags


def test_given_a_server_without_keywords_when_ingest_runs_then_each_message_is_one_note_and_h0_keeps_the_mark(
    vault_dir, bare, relay, said
):
    """Given three messages in INBOX of a server that keeps no keywords, When ingest runs twice and a
    fourth message arrives, Then three notes are written, then none, then one; the server carries no
    H0 keyword and nothing is marked read; H0's state database records each message by its
    UIDVALIDITY-UID and Message-ID; and the log says once that the mailbox itself is not marked."""
    uids = [bare.deliver(raw_message(f"Message {i}", message_id=f"<m{i}@example.org>")) for i in range(3)]
    service = service_for(vault_dir, bare, relay)
    try:
        first = ingest(vault_dir, service)
        assert first.failed == 0 and sorted(subjects(vault_dir, first.written)) == [
            "Message 0",
            "Message 1",
            "Message 2",
        ]
        assert all(bare.flags(uid) == set() for uid in uids)  # no keyword, and not marked \Seen
        assert ingest(vault_dir, service).written == []
        later = bare.deliver(raw_message("Later", message_id="<later@example.org>"))
        third = ingest(vault_dir, service)
        assert third.mode == "history" and subjects(vault_dir, third.written) == ["Later"]
        assert bare.flags(later) == set()
        assert ingest(vault_dir, service).written == []
        source = f"imap:{bare.user}@{bare.host}"
        state = service.state
        ids = [Vault(vault_dir).read_note(p).frontmatter["message_id"] for p in [*first.written, *third.written]]
        assert state.ingested_among(source, ids) == set(ids)
        assert state.ingested_among(source, [], ["<m0@example.org>", "<later@example.org>"]) == {
            "<m0@example.org>",
            "<later@example.org>",
        }
    finally:
        service.close()
    notices = [line for line in said if "keeps no custom keywords" in line]
    assert len(notices) == 1 and "not marked" in notices[0] and "state database" in notices[0]
    assert not [line for line in said if "did not keep the keyword" in line]


def test_given_a_lost_cursor_on_a_server_without_keywords_then_nothing_is_written_twice(vault_dir, bare, relay):
    """The state database's record is the truth there, as the keyword is elsewhere: with the sync cursor
    gone (a first sync again, catching up by query), only the message that is really new becomes a note."""
    for i in range(2):
        bare.deliver(raw_message(f"Old {i}"))
    service = service_for(vault_dir, bare, relay)
    assert len(ingest(vault_dir, service).written) == 2
    service.close()
    with sqlite3.connect(service.state.path) as db:
        db.execute("DELETE FROM mail_sync")  # the cursor is lost; the marks are not
    bare.deliver(raw_message("New one"))
    service = service_for(vault_dir, bare, relay)
    try:
        report = ingest(vault_dir, service)
        assert report.mode == "catch_up" and subjects(vault_dir, report.written) == ["New one"]
        assert len(email_notes(vault_dir)) == 3
    finally:
        service.close()


def test_given_more_mail_than_one_slice_on_a_server_without_keywords_then_the_catch_up_reaches_all_of_it(
    vault_dir, bare, relay
):
    """The query cannot leave out what H0 ingested (nothing is on the server), so the catch-up leaves it
    out itself: 60 messages at a first sync, in slices of 25, become 60 notes, each once."""
    for i in range(60):
        bare.deliver(raw_message(f"Bulk {i:02d}"))
    service = service_for(vault_dir, bare, relay)
    try:
        report = ingest_new_mail(handler_context(vault_dir, LocalMail(service)), max_results=25)
        assert report.failed == 0 and report.duplicates == 0
        assert sorted(subjects(vault_dir, report.written)) == [f"Bulk {i:02d}" for i in range(60)]
        assert ingest(vault_dir, service).written == []
    finally:
        service.close()


def test_given_a_renumbered_server_without_keywords_then_the_message_id_keeps_the_mark(vault_dir, tmp_path, relay):
    """Given two ingested messages, When the server loses its UID list (new UIDVALIDITY) and a third arrives,
    Then only the third becomes a note: the first two are known by their Message-ID."""
    server = PymapServer(tmp_path / "own", keywords=()).start()
    try:
        service = service_for(vault_dir, server, relay)
        for i in range(2):
            server.deliver(raw_message(f"Old {i}"))
        assert len(ingest(vault_dir, service).written) == 2
        service.close()
        server.renumber()
        server.deliver(raw_message("After the renumbering"))
        service = service_for(vault_dir, server, relay)
        report = ingest(vault_dir, service)
        assert report.mode == "catch_up" and subjects(vault_dir, report.written) == ["After the renumbering"]
        assert ingest(vault_dir, service).written == [] and len(email_notes(vault_dir)) == 3
        service.close()
    finally:
        server.stop()


def test_given_a_server_without_keywords_then_doctor_notes_it_and_does_not_fail(vault_dir, bare, relay):
    from h0.cli.doctor import FAIL, WARN, mail_checks

    checks = mail_checks(imap_settings(vault_dir, bare, relay[0]))
    assert not [c for c in checks if c.mark == FAIL], [c.line() for c in checks]
    (note,) = [c for c in checks if c.what == "IMAP keywords"]
    assert note.mark == WARN and "not marked" in note.detail and "state database" in note.detail


@pytest.mark.usefixtures("loguru_restored")
def test_given_a_server_without_keywords_then_the_doctor_command_exits_0(vault_dir, bare, relay, monkeypatch, capsys):
    from h0.cli import main

    settings = imap_settings(vault_dir, bare, relay[0])
    for name in (
        "vault_path",
        "mail_backend",
        "imap_host",
        "imap_port",
        "imap_secure",
        "imap_user",
        "smtp_host",
        "smtp_port",
        "smtp_secure",
        "smtp_from",
    ):
        monkeypatch.setenv(name.upper(), str(getattr(settings, name)))
    monkeypatch.setenv("IMAP_PASS", bare.password)
    assert main(["doctor", "--no-servers"]) == 0
    assert "IMAP keywords" in capsys.readouterr().out
