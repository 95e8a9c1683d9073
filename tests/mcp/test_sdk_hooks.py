"""The private `mcp` SDK internals H0 relies on (h0.mcp.sdk_hooks) are still there.

Each test names one attribute or signature a hook uses. When an SDK upgrade fails one of
them, fix the hook (or drop it) and re-measure with scripts/bench/bench_vault.py, then
move the `mcp` pin in pyproject.toml to the release this file passed on.
"""

from __future__ import annotations

import contextlib
import importlib.util
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
from mcp.client.stdio import StdioServerParameters
from mcp.server import runner
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.server.stdio import stdio_server
from packaging.requirements import Requirement

from h0.mcp.sdk_hooks import LEFT_OUT_ON_STDIO, import_sdk_for_stdio, skip_output_revalidation, trust_tool_results
from h0.mcp.vault_server import build_vault_server
from tests.conftest import H0_BIN, subprocess_env

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
    """Given an H0 server, then `_lowlevel_server` (lifespan, create_initialization_options) and
    `_tool_manager.get_tool(...).fn_metadata.output_model/output_schema` exist as used."""
    server = build_vault_server(tmp_path)
    assert isinstance(server, MCPServer)
    lowlevel = server._lowlevel_server
    assert isinstance(lowlevel, Server)
    assert isinstance(lowlevel.lifespan(lowlevel), contextlib.AbstractAsyncContextManager)
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


def test_the_handshake_era_loop_takes_what_h0_passes_it():
    """Given `mcp.server.runner._serve_legacy_stream`, then it still takes the server, both
    streams and, by keyword, the lifespan state, session id, init options and raise flag."""
    parameters = inspect.signature(runner._serve_legacy_stream).parameters
    assert list(parameters)[:3] == ["server", "read_stream", "write_stream"]
    keywords = {name for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert keywords == {"lifespan_state", "session_id", "init_options", "raise_exceptions"}
    assert inspect.iscoroutinefunction(runner._serve_legacy_stream)


async def test_a_client_offering_2026_07_28_is_served_2025_11_25(tmp_path: Path):
    """Given `h0 mcp vault`, when the stock client connects as it does by default (probing the
    2026-07-28 era first), then it is refused that era, falls back to the initialize handshake,
    and is served 2025-11-25: no per-request envelope to build, copy and check on each call."""
    params = StdioServerParameters(command=H0_BIN, args=["mcp", "vault", "--vault", str(tmp_path)],
                                   env=subprocess_env(LOG_LEVEL="WARNING"))
    async with Client(params) as client:
        assert client.protocol_version == "2025-11-25"
        listed = await client.call_tool("list_notes", {"directory": ""})
    assert not listed.is_error and listed.structured_content["notes"] == []


def test_a_server_reading_a_file_on_stdin_is_served_with_the_sdks_threads(tmp_path: Path):
    """Given `h0 mcp vault < request`, where stdin cannot be an asyncio pipe, then the SDK's
    threaded stdio serves it, in the same protocol era, and it exits cleanly at the file's end.
    (Only `initialize` is answered inline: the SDK ends the session at EOF, before tool calls.)"""
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    request = tmp_path / "request.jsonl"
    request.write_text(json.dumps(initialize) + "\n")
    vault = tmp_path / "vault"
    vault.mkdir()
    with request.open() as stdin:
        done = subprocess.run(
            [sys.executable, "-I", "-m", "h0", "mcp", "vault", "--vault", str(vault)], stdin=stdin, check=False,
            capture_output=True, text=True, timeout=60, env={**os.environ, "H0_ENV_FILE": "", "LOG_LEVEL": "WARNING"},
        )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    assert answer["result"]["serverInfo"]["name"] == "h0-vault"
    assert done.returncode == 0


def test_every_module_left_out_on_stdio_is_still_part_of_the_sdk():
    """Given the modules `import_sdk_for_stdio` leaves out, then each still exists: a renamed one
    would silently be imported again, and the start-up it saved with it."""
    missing = [name for name in LEFT_OUT_ON_STDIO if importlib.util.find_spec(name) is None]
    assert missing == []


def test_importing_for_stdio_once_the_sdk_is_loaded_changes_nothing():
    """Given a process that already imported `mcp` (this one, and its client), then the hook
    leaves it alone: no placeholder may replace a client someone is using."""
    finders = list(sys.meta_path)
    assert import_sdk_for_stdio() is False
    assert sys.meta_path == finders
    assert type(sys.modules["mcp.client"]).__name__ == "module"


_STDIO_ONLY_PROCESS = """
import json, sys
from pathlib import Path
from h0.mcp.sdk_hooks import NotImportedForStdio, import_sdk_for_stdio

assert import_sdk_for_stdio() is True
from h0.mcp.vault_server import build_vault_server
build_vault_server(Path(sys.argv[1]))
loaded = sorted({name.split(".")[0] for name in sys.modules})
import mcp
try:
    mcp.Client("x")
except NotImportedForStdio as exc:
    refused = str(exc)
import starlette
print(json.dumps({"loaded": loaded, "refused": refused, "starlette": starlette.__file__, "placeholders": [
    name for name in ("mcp.client", "mcp_types._v2026_07_28", "mcp.server.streamable_http")
    if type(sys.modules[name]).__name__ == "_AbsentModule"]}))
"""


def test_a_stdio_server_process_loads_no_http_stack_and_fails_loudly_if_it_reaches_for_it(tmp_path: Path):
    """Given a fresh process that imports the SDK for stdio, when it builds the vault server,
    then starlette, uvicorn, sse_starlette and httpx2 were never loaded, the SDK's client, HTTP
    transport and 2026-era wire models are placeholders that raise when used, and a later
    `import starlette` gets the real package."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", _STDIO_ONLY_PROCESS, str(tmp_path)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "H0_ENV_FILE": ""}, check=True,
    )
    found = json.loads(done.stdout)
    assert not {"starlette", "uvicorn", "sse_starlette", "httpx2"} & set(found["loaded"])
    assert {"mcp", "mcp_types", "pydantic"} <= set(found["loaded"])
    assert found["placeholders"] == ["mcp.client", "mcp_types._v2026_07_28", "mcp.server.streamable_http"]
    assert "mcp.client.client.Client" in found["refused"] and "stdio" in found["refused"]
    assert found["starlette"].endswith("starlette/__init__.py")


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
