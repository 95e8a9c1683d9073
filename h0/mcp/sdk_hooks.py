"""Every use H0 makes of the `mcp` SDK's private internals, in one place.

Each hook buys measured speed that the public API has no switch for. All of them rest on
attributes the SDK does not promise to keep, so `tests/mcp/test_sdk_hooks.py` asserts
each attribute and signature relied on here, and pyproject.toml pins `mcp` to the minor
release those tests passed on. An SDK upgrade that moves any of them fails that test by
name, instead of silently losing the speed-up or breaking the stdio wire.

- `serve_stdio`: the SDK reads stdin in a worker thread, one hop per line; H0 serves
  fd 0/1 as asyncio pipes. And it serves the handshake protocol era only (2025-11-25 and
  older): on the 2026-07-28 era the SDK builds a connection per request, copies and
  re-checks its envelope and stamps every result — 0.3 ms of server CPU and 0.15 ms of
  the stock client's per call, a fifth of a read_note. A 2026 client's probe is refused
  and it falls back to `initialize`, as the protocol says (relies on
  `MCPServer._lowlevel_server`, `Server.lifespan` and `mcp.server.runner._serve_legacy_stream`).
- `skip_output_revalidation`: the server re-validates each result it has just built
  from the very pydantic model that defines its output schema (relies on
  `MCPServer._tool_manager` and `FuncMetadata.output_model`).
- `trust_tool_results`: the client re-validates each result against the output schema
  with `jsonschema` (relies on `ClientSession.validate_tool_result`, an instance
  attribute that can be replaced).
- `import_sdk_for_stdio`: `import mcp` loads the SDK's client, HTTP transports, OAuth and
  the web stack under them (starlette, uvicorn, httpx2), and the 2026-07-28 wire models — a
  third of a server's start-up, none of it used by `serve_stdio` (relies on the module
  names in `LEFT_OUT_ON_STDIO`).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
from typing import Any

MAX_MESSAGE_BYTES = 256 * 1024 * 1024  # one JSON-RPC line; a 50 MB note escaped as JSON fits


# --------------------------------------------------------------------------- server side


async def serve_stdio(server: Any, *, threads: bool = False) -> None:
    """Serve `server` (an `MCPServer`) on stdio, in the handshake protocol era only.

    Without `threads`, fd 0/1 are served through asyncio pipes: no worker-thread hop per line
    read or written (the caller checks first that they are pipes or sockets); with it, through
    the SDK's own stdio streams. Either way this is `Server.run` less the 2026-07-28 era.
    """
    from mcp.server.runner import _serve_legacy_stream
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server
    streams = stdio_server() if threads else stdio_server(*await _stdio_pipes())  # type: ignore[arg-type]
    async with streams as (read_stream, write_stream):
        try:
            async with lowlevel.lifespan(lowlevel) as state:
                await _serve_legacy_stream(
                    lowlevel,
                    read_stream,
                    write_stream,
                    lifespan_state=state,
                    session_id=None,
                    init_options=lowlevel.create_initialization_options(),
                    raise_exceptions=False,
                )
        finally:
            await write_stream.aclose()


def skip_output_revalidation(server: Any, tool_name: str) -> None:
    """Keep the tool's published outputSchema, but let its `CallToolResult` pass unchanged
    instead of being validated again against the output model (a fifth of a 2,500-note
    listing). Only for tools whose every result is built from that model."""
    registered = server._tool_manager.get_tool(tool_name)
    if registered is not None and registered.fn_metadata.output_schema is not None:
        registered.fn_metadata.output_model = None


# --------------------------------------------------------------------------- start-up

# What `mcp.server.mcpserver` and `mcp/__init__` import at module top only for the client, the
# HTTP transports and OAuth, and the wire models of the 2026-07-28 era, which `serve_stdio`
# never serves (mcp_types.methods files them under that version only). On stdio none is ever
# called; the server's own modules, the other mcp_types, anyio, opentelemetry (tracing spans)
# and cryptography (request state) stay real, and so do mcp.server.auth.settings and
# mcp.server.transport_security (fields of the server's settings).
LEFT_OUT_ON_STDIO = (
    "mcp_types._v2026_07_28",
    "mcp.client",  # re-exported by mcp/__init__; MCPServer imports it for in-memory sessions
    "mcp.server.sse",
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server._streamable_http_modern",
    "mcp.server.auth.handlers",
    "mcp.server.auth.middleware",
    "mcp.server.auth.provider",
    "mcp.server.auth.routes",
    "mcp.shared.auth",
    "mcp.shared._httpx_utils",
    "starlette",  # the ASGI app of the HTTP transports (and, through them, uvicorn and sse_starlette)
    "httpx2",  # HttpResource's fetch: resources served from a URL
)


class NotImportedForStdio(AttributeError):
    """A name from a module `import_sdk_for_stdio` left out was used: that part of the SDK
    (client, HTTP transports, OAuth, 2026-07-28 wire models) is not available in this process."""


def _left_out(name: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in LEFT_OUT_ON_STDIO)


class _Absent(type):
    """A name of a left-out module: fine to import, subclass or annotate with, loud when used."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotImportedForStdio(_why(f"{cls.__module__}.{cls.__qualname__}"))

    def __getattr__(cls, name: str) -> Any:
        raise NotImportedForStdio(_why(f"{cls.__module__}.{cls.__qualname__}.{name}"))


def _why(what: str) -> str:
    return f"{what} is not available: this process imported the mcp SDK for a stdio server only (h0.mcp.sdk_hooks)"


class _AbsentModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        absent = _Absent(name, (), {"__module__": self.__name__, "__qualname__": name})
        setattr(self, name, absent)
        return absent


class _LeaveOut(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True) if _left_out(fullname) else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _AbsentModule(spec.name)
        module.__path__ = []  # a package: its submodules are left out too
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def import_sdk_for_stdio() -> bool:
    """Import the SDK's server side without its client, HTTP transports, OAuth and 2026 era.

    For a process that only serves stdio (`h0 mcp vault|gmail`), called before anything
    imports `mcp`: the modules of `LEFT_OUT_ON_STDIO` become placeholders while the SDK
    loads, and any use of one raises `NotImportedForStdio`. Afterwards a new import of
    starlette or httpx2 gets the real package; the SDK keeps its placeholders. Does
    nothing (returns False) once `mcp` is imported: that process may well use the client.
    """
    if "mcp" in sys.modules:
        return False
    finder = _LeaveOut()
    sys.meta_path.insert(0, finder)
    try:
        for module in ("mcp.server.mcpserver", "mcp.server.stdio"):
            importlib.import_module(module)
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if _left_out(n) and not n.startswith(("mcp.", "mcp_types."))]:
            del sys.modules[name]
    return True


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
