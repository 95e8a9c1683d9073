"""A server whose client went away stops quietly: no traceback in the log it shares with the daemon.

A daemon killed while an answer is on its way (or a client that closes its end first) leaves its server an
answer nobody can read; the server stops as it would at the end of its input, and says so in one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import H0_BIN, subprocess_env

HANG_GUARD_S = 60.0  # a hang guard only: the server stops at its first answer that cannot be written


def _line(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


def test_a_server_whose_client_closed_its_end_stops_without_a_traceback(vault_dir: Path):
    server = subprocess.Popen(
        [H0_BIN, "mcp", "vault"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(VAULT_PATH=str(vault_dir), LOG_LEVEL="INFO"),
    )
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "gone", "version": "1"}}
    server.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    server.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    server.stdout.close()  # the client is gone: what the server answers next has nowhere to go
    call = {"name": "list_notes", "arguments": {"directory": "Drafts"}}
    server.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
    server.stdin.flush()
    try:
        code = server.wait(HANG_GUARD_S)  # stdin stays open: it is the failed answer that stops the server
    finally:
        server.kill()
        server.stdin.close()
    log = server.stderr.read().decode()
    server.stderr.close()
    assert "Traceback" not in log, log
    assert code == 0
    assert "closed its end of the pipe" in log
