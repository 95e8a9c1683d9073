"""The persistent MCP client: typed errors, reconnect after the server dies, the fallback protocol."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from h0.errors import McpUnavailable, NotFound, PermissionDenied
from h0.mcp.api import McpVault
from h0.mcp.client import McpConnection, ServerCommand, with_fallback
from h0.vault import AuditLog, Note, Vault
from h0.vault.api import LocalVault, Notes
from tests.conftest import subprocess_env
from tests.procs import kill_children


@pytest.fixture
def connection(vault_dir: Path):
    env = subprocess_env(VAULT_PATH=str(vault_dir), LOG_LEVEL="ERROR")
    conn = McpConnection(ServerCommand.h0("vault", "vault", env), call_timeout=10).start()
    assert conn.wait_ready(20), conn.last_error
    yield conn
    conn.close()


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_a_call_returns_the_structured_result(connection):
    assert connection.call("health_check", {})["status"] == "ok"


def test_a_typed_error_from_the_server_is_raised_as_that_error(connection):
    with pytest.raises(NotFound):
        connection.call("read_note", {"path": "Needs_Action/missing.md"})
    with pytest.raises(PermissionDenied):
        connection.call("read_note", {"path": "../../etc/passwd"})


def test_when_the_server_dies_calls_fail_fast_then_the_session_comes_back(connection):
    assert kill_children("mcp vault")
    with pytest.raises(McpUnavailable):
        for _ in range(50):  # the first call after the kill may still be in flight
            connection.call("health_check", {})
            time.sleep(0.02)
    assert wait_until(lambda: _ok(connection)), connection.last_error
    assert connection.connects >= 2


def _ok(connection) -> bool:
    try:
        return connection.call("health_check", {}, timeout=2)["status"] == "ok"
    except McpUnavailable:
        return False


def test_fallback_is_logged_then_used_when_the_server_is_down(connection, vault_dir: Path):
    """US4-2: the vault MCP is unavailable → the local fallback answers the same call, typed, and
    `mcp_fallback` is logged."""
    audit = AuditLog(vault_dir / "Logs", "h0")
    local = Vault(vault_dir)
    local.write_note("Drafts/x.md", {"to": "a@example.com"}, "hello\n")
    vault = Notes(with_fallback(McpVault(connection), LocalVault(local), audit, "vault"))
    assert vault.read("Drafts/x.md").hash == local.read_note("Drafts/x.md").hash  # over MCP, nothing logged
    assert list(audit.records()) == []
    connection.close()  # the server is gone for good
    note = vault.read("Drafts/x.md")
    assert isinstance(note, Note) and note.frontmatter == {"to": "a@example.com"} and note.body == "hello\n"
    (record,) = list(audit.records(event="mcp_fallback"))
    assert record["server"] == "vault" and record["tool"] == "read_many" and record["severity"] == "warning"


class BrokenVault:
    """A local vault whose disk fails: every verb raises."""

    def read_many(self, paths):
        raise OSError("disk on fire")

    def list(self, query):
        raise OSError("disk on fire")

    def apply(self, changes):
        raise OSError("disk on fire")


def test_when_the_fallback_fails_too_it_escalates(connection, vault_dir: Path):
    audit = AuditLog(vault_dir / "Logs", "h0")
    vault = Notes(with_fallback(McpVault(connection), BrokenVault(), audit, "vault"))
    connection.close()
    with pytest.raises(McpUnavailable):
        vault.read("Drafts/x.md")
    events = [r["event"] for r in audit.records()]
    assert events == ["mcp_fallback", "mcp_escalation"]


def test_without_a_fallback_the_outage_is_raised_as_it_is(connection, vault_dir: Path):
    audit = AuditLog(vault_dir / "Logs", "h0")
    vault = Notes(with_fallback(McpVault(connection), None, audit, "vault"))
    connection.close()
    with pytest.raises(McpUnavailable):
        vault.read("Drafts/x.md")
    assert list(audit.records()) == []


def test_a_typed_answer_is_not_an_outage_and_skips_the_fallback(connection, vault_dir: Path):
    audit = AuditLog(vault_dir / "Logs", "h0")
    vault = Notes(with_fallback(McpVault(connection), BrokenVault(), audit, "vault"))
    with pytest.raises(NotFound):
        vault.read("Drafts/none.md")
    assert list(audit.records()) == []


@pytest.mark.timeout(60)  # the point: an answer (McpUnavailable), not a hang
def test_a_server_that_never_starts_is_unavailable_not_a_hang(tmp_path: Path):
    conn = McpConnection(ServerCommand("broken", ("/bin/false",), {}), call_timeout=2).start()
    try:
        with pytest.raises(McpUnavailable):
            conn.call("health_check", {})
    finally:
        conn.close()
