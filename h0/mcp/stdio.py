"""H0's servers' stdin and stdout as asyncio pipes: no worker-thread hop per line (h0.mcp.base serves them).

Private duplicates of fd 0/1; fd 0 then reads /dev/null and fd 1 goes to stderr, so a stray print (or a
child process) can never corrupt the protocol stream. Used where the OS allows it
(`h0.platform.proc.thread_free_stdio`); elsewhere the SDK's own `stdio_server()` reads in a thread.
"""

from __future__ import annotations

import asyncio
import os


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


class _WriteFlow(asyncio.Protocol):
    """Flow control of the stdout pipe through asyncio's documented protocol callbacks."""

    def __init__(self) -> None:
        self.writable = asyncio.Event()
        self.writable.set()
        self.lost = False

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.writable.set()


class _StdoutPipe:
    def __init__(self, transport: asyncio.WriteTransport, flow: _WriteFlow) -> None:
        self._transport = transport
        self._flow = flow

    async def write(self, text: str) -> None:
        if self._flow.lost or self._transport.is_closing():
            raise BrokenPipeError("the MCP client closed its end of stdout")
        self._transport.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._flow.writable.wait()  # the client reads slower than we write: wait for the pipe to drain


MAX_MESSAGE_BYTES = 256 * 1024 * 1024  # one JSON-RPC line; a 50 MB note escaped as JSON fits


async def stdio_pipes() -> tuple[_StdinLines, _StdoutPipe]:
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
    transport, flow = await loop.connect_write_pipe(_WriteFlow, wire_out)
    return _StdinLines(reader), _StdoutPipe(transport, flow)
