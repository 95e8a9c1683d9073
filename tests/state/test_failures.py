"""A damaged state database is one typed error, worded the same wherever it is met (Database.failure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.errors import InternalError
from h0.mail.owner import Evidence, Observed, OwnerAuthority
from h0.state import StateDB
from h0.state.history import MailHistory
from tests.statedb import crash_edit


def test_given_a_file_that_is_no_database_when_opened_then_it_cannot_be_opened(tmp_path: Path):
    (tmp_path / "state.db").write_bytes(b"not a database, just bytes " * 100)
    with pytest.raises(InternalError, match=r"^H0's state database .*state\.db cannot be opened: "):
        StateDB(tmp_path)
    assert (tmp_path / "state.db").read_bytes().startswith(b"not a database")  # nothing lost


def test_given_tables_gone_underneath_when_read_or_written_then_each_store_says_the_same(tmp_path: Path):
    db = StateDB(tmp_path)
    for table in ("history", "import_work", "owner_messages", "ingested", "sends"):
        crash_edit(db.path, f"DROP TABLE {table}")
    said = rf"^H0's state database {db.path}: no such table: "
    with pytest.raises(InternalError, match=said + "history$"):
        MailHistory(db).known(["k"])
    with pytest.raises(InternalError, match=said + "import_work$"):
        MailHistory(db).release(["k"])
    with pytest.raises(InternalError, match=said + "owner_messages$"):
        OwnerAuthority(db).record([Observed("k", next(iter(Evidence)), "imap", "me@example.com")])
    with pytest.raises(InternalError, match=said + "ingested$"):
        db.record_ingested("gmail", [("m1", None)])
    with pytest.raises(InternalError, match=said + "sends; nothing was sent$"):
        db.claim_send(key="k", rfc822_message_id="<k@t>", content_hash="c", caps=(), in_flight_s=60.0)
