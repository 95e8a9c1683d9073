"""Every use H0 makes of the `mcp` SDK's private internals, in one place.

Each hook buys measured speed that the public API has no switch for. All of them rest on
attributes the SDK does not promise to keep, so `tests/mcp/test_sdk_hooks.py` asserts
each attribute and signature relied on here, and pyproject.toml pins `mcp` to the minor
release those tests passed on. An SDK upgrade that moves any of them fails that test by
name, instead of silently losing the speed-up or breaking the stdio wire.

- `serve_stdio_without_threads`: the SDK reads stdin in a worker thread, one hop per
  line; H0 serves fd 0/1 as asyncio pipes (relies on `MCPServer._lowlevel_server`).
- `skip_output_revalidation`: the server re-validates each result it has just built
  from the very pydantic model that defines its output schema (relies on
  `MCPServer._tool_manager` and `FuncMetadata.output_model`).
- `trust_tool_results`: the client re-validates each result against the output schema
  with `jsonschema` (relies on `ClientSession.validate_tool_result`, an instance
  attribute that can be replaced).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

MAX_MESSAGE_BYTES = 256 * 1024 * 1024  # one JSON-RPC line; a 50 MB note escaped as JSON fits


# --------------------------------------------------------------------------- server side


async def serve_stdio_without_threads(server: Any) -> None:
    """Serve `server` (an `MCPServer`) on fd 0/1 through asyncio pipes: no worker-thread hop
    per line read or written. The caller checks first that fd 0/1 are pipes or sockets."""
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server
    stdin, stdout = await _stdio_pipes()
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def skip_output_revalidation(server: Any, tool_name: str) -> None:
    """Keep the tool's published outputSchema, but let its `CallToolResult` pass unchanged
    instead of being validated again against the output model (a fifth of a 2,500-note
    listing). Only for tools whose every result is built from that model."""
    registered = server._tool_manager.get_tool(tool_name)
    if registered is not None and registered.fn_metadata.output_schema is not None:
        registered.fn_metadata.output_model = None


# --------------------------------------------------------------------------- client side


def trust_tool_results(client: Any) -> None:
    """Stop an `mcp.Client` from re-validating structured content against the output schema.

    For H0's own servers only: they build every result from the model that defines the
    schema (pinned by the contract tests), and the check cost the daemon ~1 ms of CPU per
    call, growing with the result.
    """
    client.session.validate_tool_result = _trusted_result


async def _trusted_result(name: str, result: Any) -> None:
    return None


# --------------------------------------------------------------------------- stdio without threads


class _StdinLines:
    """`async for line in …` over an asyncio pipe (the SDK's default reads each line in a worker thread)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _StdoutPipe:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


async def _stdio_pipes() -> tuple[_StdinLines, _StdoutPipe]:
    """Private duplicates of fd 0/1 as asyncio pipes; fd 0 then reads /dev/null and fd 1 goes to
    stderr, so a stray print (or a child process) can never corrupt the protocol stream."""
    loop = asyncio.get_running_loop()
    wire_in = os.fdopen(os.dup(0), "rb", buffering=0)
    wire_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), wire_in)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, wire_out)
    return _StdinLines(reader), _StdoutPipe(asyncio.StreamWriter(transport, protocol, None, loop))
