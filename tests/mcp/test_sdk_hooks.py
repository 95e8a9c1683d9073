"""The private `mcp` SDK internals H0 relies on (h0.mcp.sdk_hooks) are still there.

Each test names one attribute or signature a hook uses. When an SDK upgrade fails one of
them, fix the hook (or drop it) and re-measure with scripts/bench/bench_vault.py, then
move the `mcp` pin in pyproject.toml to the release this file passed on.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.server.stdio import stdio_server
from packaging.requirements import Requirement

from h0.mcp.sdk_hooks import skip_output_revalidation, trust_tool_results
from h0.mcp.vault_server import build_vault_server

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _pinned_mcp() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return next(Requirement(dep) for dep in project["dependencies"] if Requirement(dep).name == "mcp")


def test_the_installed_sdk_is_inside_the_pinned_range():
    """Given the hooks were checked on one minor release, when another is installed, then say so here first."""
    requirement = _pinned_mcp()
    assert requirement.name == "mcp"
    assert requirement.specifier.contains(version("mcp")), f"mcp {version('mcp')} is outside {requirement}"
    assert any(spec.operator == "<" for spec in requirement.specifier), "pin an upper bound: the hooks use private internals"


def test_the_server_hooks_find_the_private_attributes_they_use(tmp_path: Path):
    """Given an H0 server, then `_lowlevel_server` (run, create_initialization_options) and
    `_tool_manager.get_tool(...).fn_metadata.output_model/output_schema` exist as used."""
    server = build_vault_server(tmp_path)
    assert isinstance(server, MCPServer)
    lowlevel = server._lowlevel_server
    assert isinstance(lowlevel, Server)
    assert list(inspect.signature(lowlevel.run).parameters)[:3] == ["read_stream", "write_stream", "initialization_options"]
    lowlevel.create_initialization_options()
    tool = server._tool_manager.get_tool("list_notes")
    assert isinstance(tool.fn_metadata, FuncMetadata)
    assert "output_model" in FuncMetadata.model_fields and "output_schema" in FuncMetadata.model_fields
    # Applied by typed_tool: the schema is published, the re-validation is off.
    assert tool.fn_metadata.output_schema is not None
    assert tool.fn_metadata.output_model is None
    skip_output_revalidation(server, "no_such_tool")  # a missing tool is not an error


def test_stdio_server_accepts_the_streams_h0_hands_it():
    """Given `stdio_server(stdin, stdout)`, then it still takes H0's line iterator and writer."""
    assert list(inspect.signature(stdio_server).parameters) == ["stdin", "stdout"]


def test_the_client_result_check_is_a_replaceable_coroutine():
    """Given the client session, then `validate_tool_result(name, result)` is an async method H0 may replace."""
    method = ClientSession.validate_tool_result
    assert inspect.iscoroutinefunction(method)
    assert list(inspect.signature(method).parameters) == ["self", "name", "result"]


async def test_trusting_results_skips_the_schema_check_and_nothing_else(tmp_path: Path):
    """Given a client that trusts results, when a tool answers, then the SDK's check is not run and the result arrives."""
    async with Client(build_vault_server(tmp_path)) as client:
        original = client.session.validate_tool_result
        trust_tool_results(client)
        assert client.session.validate_tool_result is not original
        listed = await client.call_tool("list_notes", {"directory": ""})
        assert not listed.is_error
        assert listed.structured_content["notes"] == []


def test_a_server_over_pipes_answers_without_reader_threads(tmp_path: Path):
    """Given `h0 mcp vault` on pipes, when a client initializes and calls a tool, then it answers
    over the thread-free transport (and stdout stays the protocol's alone)."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_notes", "arguments": {"directory": ""}}},
    ]
    env = {**os.environ, "H0_ENV_FILE": "", "LOG_LEVEL": "WARNING"}
    with subprocess.Popen(
        [sys.executable, "-I", "-m", "h0", "mcp", "vault", "--vault", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    ) as proc:
        try:
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
            proc.stdin.flush()
            answers = {}
            while 2 not in answers:
                line = proc.stdout.readline()
                assert line, "the server closed stdout before answering"
                message = json.loads(line)  # every stdout line is a protocol message
                answers[message["id"]] = message
        finally:
            proc.stdin.close()
            proc.wait(30)
    assert answers[1]["result"]["serverInfo"]["name"] == "h0-vault"
    assert answers[2]["result"]["structuredContent"]["notes"] == []
    assert proc.returncode == 0
