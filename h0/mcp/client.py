"""H0's MCP client: one persistent stdio session per server, reconnecting, callable from threads.

Each `McpConnection` owns a private asyncio loop on a daemon thread. A supervisor task
keeps one `mcp.Client` session open to the server process, pings it, and reopens it
with backoff whenever a call finds it dead or hung. Worker threads call `call()`, which
returns the tool's structured result or raises a typed `H0Error`:

- the server answered with a typed error → that error (`NotFound`, `SendFailed`, …);
- the server could not be reached, died, or timed out → `McpUnavailable`.

A call is never retried here: it waits at most a few seconds for a session to open, then answers, and
whoever asked decides when to call again (the daemon: its work queue). The supervisor's backoff paces
only how often a server that keeps failing to start is started again.

`Fallback(primary, fallback, ...)` (`with_fallback`) adds the fallback protocol (docs/decisions.md) on top of
the vault's typed seam (`h0.vault.api.VaultAPI`): attempt → on `McpUnavailable` log `mcp_fallback` → the
same verb on the fallback → if that fails too, log `mcp_escalation` and raise. Nothing is skipped
silently.
"""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
import contextlib
import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

from loguru import logger

from h0.config import Settings
from h0.errors import H0Error, InternalError, McpUnavailable, error_from_dict
from h0.retry import Backoff
from h0.vault import AuditLog
from h0.vault.api import Applied, Change, ListQuery, VaultAPI
from h0.vault.note import Note

T = TypeVar("T")

DEFAULT_CALL_TIMEOUT = 30.0
PING_INTERVAL = 10.0
_RECONNECT_BACKOFF = Backoff(0.05, 2.0, cap=5.0)  # after each failed session, reset once one opens


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """How to start one MCP server: a name for logs, argv, and extra environment."""

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str]

    @classmethod
    def h0(cls, name: str, server: str, env: Mapping[str, str]) -> ServerCommand:
        """`python -I -m h0 mcp <server>` with the current interpreter (no PATH lookup). Isolated
        mode: an `h0.py` or `h0/` in the daemon's working folder, or PYTHON* variables, are
        never imported or obeyed — the servers run the installed H0 only."""
        return cls(name, (sys.executable, "-I", "-m", "h0", "mcp", server), env)


@dataclass(frozen=True, slots=True)
class InProcessServer:
    """An MCP server served in this process over the SDK's in-memory transport, for tests: the same
    tools, wire format and session as over stdio, without starting a Python process. `build` makes
    a fresh server object for each session (a reconnect gets a new one, as a restarted process would)."""

    name: str
    build: Callable[[], Any]


class McpConnection:
    """A persistent, self-healing session to one MCP server over stdio (or in memory: `InProcessServer`)."""

    def __init__(
        self,
        command: ServerCommand | InProcessServer,
        *,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        errlog: TextIO | None = None,
    ) -> None:
        self.command = command
        self.errlog = errlog  # where a spawned server's stderr goes (None: this process's stderr)
        self.name = command.name
        self.call_timeout = call_timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name=f"mcp-{self.name}", daemon=True)
        self._client: Any = None
        self._ready = threading.Event()
        self._opened = asyncio.Event()  # the loop's own view of `_ready`: a call waiting for a session awaits it
        self._lost: asyncio.Event | None = None
        self._closing = False
        self._supervisor: concurrent.futures.Future[None] | None = None
        self.connects = 0
        self.last_error: str | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> McpConnection:
        self._thread.start()
        self._supervisor = asyncio.run_coroutine_threadsafe(self._supervise(), self._loop)
        return self

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Close the session (the SDK closes stdin, waits, then terminates the process)."""
        if self._closing:
            return
        self._closing = True
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._signal_lost)
            if self._supervisor is not None:
                with contextlib.suppress(Exception):  # shutting down; the log has the cause
                    self._supervisor.result(timeout)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)

    def restart(self) -> None:
        """Drop the current session; the supervisor opens a new one."""
        self._loop.call_soon_threadsafe(self._signal_lost)

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def _signal_lost(self) -> None:
        if self._lost is not None:
            self._lost.set()
        if self._closing:
            self._opened.set()  # wakes the calls waiting for a session: they see it closed

    def _server(self) -> Any:
        """What the SDK's `Client` connects to: the command's stdio parameters, or a new in-process server."""
        if isinstance(self.command, InProcessServer):
            return self.command.build()
        from mcp.client.stdio import StdioServerParameters

        argv, env = self.command.argv, self.command.env
        params = StdioServerParameters(command=argv[0], args=list(argv[1:]), env=dict(env))
        if self.errlog is None:
            return params
        from mcp.client.stdio import stdio_client

        return stdio_client(params, errlog=self.errlog)

    async def _supervise(self) -> None:
        from mcp import Client

        failures = 0
        while not self._closing:
            self._lost = asyncio.Event()
            try:
                async with Client(self._server(), mode="legacy") as client:
                    self._client = client
                    self.connects += 1
                    self._ready.set()
                    self._opened.set()
                    failures = 0
                    if self.connects > 1:
                        logger.info("mcp {}: reconnected", self.name)
                    await self._watch(client)
            except Exception as exc:  # noqa: BLE001 - any failure means "reconnect"
                self.last_error = _describe(exc)
                if not self._closing:
                    logger.warning("mcp {}: session lost ({}); reconnecting", self.name, self.last_error)
            finally:
                self._client = None
                self._ready.clear()
                self._opened.clear()
            if self._closing:
                break
            await asyncio.sleep(_RECONNECT_BACKOFF.delay(failures))
            failures += 1

    async def _watch(self, client: Any) -> None:
        """Hold the session until a call reports it lost, or a ping fails."""
        assert self._lost is not None
        while not self._lost.is_set():
            try:
                await asyncio.wait_for(self._lost.wait(), PING_INTERVAL)
            except TimeoutError:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # ping is deprecated after 2026-07-28; we speak legacy
                        await asyncio.wait_for(client.send_ping(), 5.0)
                except Exception as exc:  # noqa: BLE001
                    self.last_error = f"ping failed: {type(exc).__name__}: {exc}"
                    return

    # ------------------------------------------------------------------ calls

    def call(self, tool: str, arguments: Mapping[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
        """Call a tool from any thread; see the module docstring for what it raises."""
        if self._closing:
            raise McpUnavailable(f"The {self.name} MCP session is closed.", server=self.name, tool=tool)
        limit = self.call_timeout if timeout is None else timeout
        future = asyncio.run_coroutine_threadsafe(self._call(tool, dict(arguments), limit), self._loop)
        try:
            return future.result(limit + 5.0)
        except FutureTimeout:
            future.cancel()
            self.restart()
            raise McpUnavailable(
                f"{self.name}.{tool} did not answer in {limit:.0f}s.", server=self.name, tool=tool
            ) from None

    async def _call(self, tool: str, arguments: dict[str, Any], timeout: float) -> dict[str, Any]:
        client = self._client
        if client is None:
            try:
                await asyncio.wait_for(self._wait_connected(), min(timeout, 5.0))
            except TimeoutError:
                raise McpUnavailable(
                    f"The {self.name} MCP server is not connected ({self.last_error or 'starting'}).",
                    server=self.name,
                    tool=tool,
                ) from None
            client = self._client
            if client is None:
                raise McpUnavailable(f"The {self.name} MCP session is closed.", server=self.name, tool=tool)
        try:
            result = await asyncio.wait_for(_call_own_tool(client, tool, arguments), timeout)
        except TimeoutError:
            self._signal_lost()  # a hung server is restarted
            raise McpUnavailable(
                f"{self.name}.{tool} timed out after {timeout:.0f}s.", server=self.name, tool=tool
            ) from None
        except Exception as exc:  # noqa: BLE001 - transport failures of every kind
            self.last_error = _describe(exc)
            self._signal_lost()
            raise McpUnavailable(
                f"The {self.name} MCP server failed during {tool}: {self.last_error}", server=self.name, tool=tool
            ) from None
        return _unwrap(result, self.name, tool)

    async def _wait_connected(self) -> None:
        while self._client is None and not self._closing:
            await self._opened.wait()


async def _call_own_tool(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """`tools/call` on one of H0's own servers, through the session's public `send_request`.

    Not `Client.call_tool`, which validates every structured result against the tool's output
    schema with jsonschema (~1 ms of the daemon's CPU a call, growing with the result): H0's
    servers build each result from the pydantic model that defines the schema, and the contract
    tests pin that schema. Any MCP client still validates, as it should, against untrusted servers.
    """
    from mcp_types import CallToolRequest, CallToolRequestParams, CallToolResult

    request = CallToolRequest(params=CallToolRequestParams(name=tool, arguments=arguments))
    return await client.session.send_request(request, CallToolResult)


def _describe(exc: BaseException) -> str:
    """A one-line cause, looking inside the exception groups anyio wraps failures in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _unwrap(result: Any, server: str, tool: str) -> dict[str, Any]:
    text = next((block.text for block in result.content if getattr(block, "type", None) == "text"), "")
    if result.is_error:
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict) and "error" in body:
            raise error_from_dict(body)
        raise InternalError(f"{server}.{tool} failed: {text[:500]}", server=server, tool=tool)
    if result.structured_content is not None:
        return dict(result.structured_content)
    try:
        body = json.loads(text)
    except ValueError:
        return {"text": text}
    return body if isinstance(body, dict) else {"result": body}


class Fallback:
    """The fallback protocol, as a `VaultAPI` (its three verbs, typed).

    `Fallback(McpVault(...), LocalVault(...), audit, "vault")`: each call goes to the MCP
    implementation; on `McpUnavailable` it logs `mcp_fallback` and makes the same call on the
    fallback; if that fails too, it logs `mcp_escalation` and raises `McpUnavailable`. Typed errors
    the server returned (not_found, conflict, …) are answers, not outages: they are raised as they
    are, without a fallback. Without a fallback the outage is raised as it is. (Mail has none: an
    approved draft waits in Approved/ until its server is back.)
    """

    def __init__(self, primary: VaultAPI, fallback: VaultAPI | None, audit: AuditLog, server: str) -> None:
        self._primary = primary
        self._fallback = fallback
        self._audit = audit
        self.server = server

    def read_many(self, paths: Sequence[str]) -> list[Note | H0Error]:
        return self._call("read_many", lambda api: api.read_many(paths))

    def list(self, query: ListQuery) -> list[str]:
        return self._call("list", lambda api: api.list(query))

    def apply(self, changes: Sequence[Change]) -> builtins.list[Applied | H0Error]:
        return self._call("apply", lambda api: api.apply(changes))

    def _call(self, name: str, verb: Callable[[VaultAPI], T]) -> T:
        started = time.perf_counter()
        try:
            return verb(self._primary)
        except McpUnavailable as outage:
            if self._fallback is None:
                raise
            said: dict[str, Any] = {"server": self.server, "tool": name, "error": outage.message}  # both records say it
            elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
            self._audit.write("mcp_fallback", "warning", **said, elapsed_ms=elapsed_ms)
            logger.warning("mcp {}: {} unavailable, using the local fallback ({})", self.server, name, outage.message)
            try:
                return verb(self._fallback)
            except Exception as exc:
                if isinstance(exc, H0Error) and exc.code != "internal_error":
                    raise  # the fallback gave a typed answer (e.g. not_found): that is not an outage
                self._audit.write("mcp_escalation", "error", **said, fallback_error=f"{type(exc).__name__}: {exc}")
                logger.error("mcp {}: {} failed over MCP and in the fallback: {}", self.server, name, exc)
                raise McpUnavailable(f"{name} failed over MCP and in the fallback: {exc}", tool=name) from exc


def with_fallback(primary: VaultAPI, fallback: VaultAPI | None, audit: AuditLog, server: str) -> Fallback:
    """`primary` (the vault server's seam) guarded by the fallback protocol: itself a `VaultAPI`."""
    return Fallback(primary, fallback, audit, server)


def settings_env(settings: Settings) -> dict[str, str]:
    """The daemon's settings as environment variables, so its servers see the same configuration."""
    env = dict(os.environ)
    for name, value in settings.model_dump().items():
        if value is None:
            env.pop(name.upper(), None)
            continue
        if hasattr(value, "get_secret_value"):
            value = value.get_secret_value()
        env[name.upper()] = str(value)
    env["H0_ENV_FILE"] = ""
    return env
