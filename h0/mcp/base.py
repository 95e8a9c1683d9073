"""What both H0 MCP servers share: typed results, typed errors, never a traceback.

A tool is a plain function returning a pydantic model. `H0Server.typed_tool` wraps it so
that success becomes a CallToolResult (its wire form, `Answer`) with `structuredContent` (and the
same JSON as text, for clients that read only text), and any `H0Error` becomes
`{"error", "message", "details"}` in the text content with `isError` and no
structured content — TypeScript-SDK clients such as Claude Code validate structured
content against the output schema even on errors (typescript-sdk#1943).

A server built with `answer_within` answers every tool call within that many seconds: a tool still
running then is answered with its `overrun` error ("try again", typed) while it goes on in its
thread, so no call outlives its client's timeout (the mail server: a slow provider).

Built on the SDK's public low-level `Server` (its `on_list_tools` / `on_call_tool`
handlers) and served by the public `mcp.server.runner.serve_loop` — H0 uses no private
part of the SDK. That is also what keeps it fast, measured by scripts/bench/bench_vault.py:
- the tool's input model and output schema are built once from its signature and its
  result model; a result built from that model a moment ago is not validated against it
  again (a fifth of a 2,500-note listing), and no per-call function-metadata machinery runs;
- `serve_loop` serves the handshake protocol era only: on the 2026-07-28 era the SDK builds a
  connection per request and re-checks its envelope (0.3 ms of a read_note). A 2026-only
  client is answered in the handshake era, which every current client speaks;
- stdin and stdout are asyncio pipes where the OS allows (`h0.mcp.stdio`, `h0.platform.proc.thread_free_stdio`),
  handed to the SDK's public `stdio_server(stdin, stdout)`: no worker-thread hop per line;
- the SDK's high-level `MCPServer` (and the client, HTTP and OAuth modules it imports) is
  never imported: a third of a server's start-up;
- no OpenTelemetry span per message (the SDK's default middleware, dropped as it documents): H0 has no
  exporter, and building the no-op spans cost ~40 us of CPU a call.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import inspect
import json
import typing
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import anyio
import anyio.to_thread
from loguru import logger
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, ListToolsResult, Tool, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import to_json

from h0.errors import H0Error, InternalError, InvalidRequest
from h0.mcp.stdio import stdio_pipes
from h0.platform.proc import thread_free_stdio

ModelT = TypeVar("ModelT", bound=BaseModel)

# The request context of the tool call running, whose client (its handshake's clientInfo) is named in the record of
# who changed a note (h0.vault.last_change). Set per call; tools in worker threads see it (anyio copies the context).
_CALL: ContextVar[Any] = ContextVar("h0_mcp_call", default=None)
MAX_CLIENT_CHARS = 80


def current_client() -> str | None:
    """'name version' of the MCP client calling the current tool, as it introduced itself; None if unnamed."""
    return _client_of(_CALL.get())


def _client_of(context: Any) -> str | None:
    try:
        info = context.session.client_params.client_info
    except Exception:  # noqa: BLE001 - no session, no handshake params, or an SDK without them: unnamed
        return None
    name = " ".join(str(part) for part in (getattr(info, "name", None), getattr(info, "version", None)) if part)
    # A client names itself: printable text only, bounded (it ends up in logs and on notes).
    cleaned = "".join(ch if ch.isprintable() else "?" for ch in name).strip()[:MAX_CLIENT_CHARS]
    return cleaned or None


READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def vault_write(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """What a tool that changes notes declares: it writes, and only on this machine (no open world)."""
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
    )


@dataclass(frozen=True, slots=True)
class Dumped:
    """A tool's result already in its output model's JSON shape, built by the tool from values that are JSON data
    already (a note read: its path, frontmatter, body and hash): answered as it is, with no model built, validated
    and dumped on the way. The output schema is still the model's; the tool keeps to it (its tests validate it)."""

    data: dict[str, Any]


# A tool call's result in its wire form: a CallToolResult's JSON. The SDK's runner takes a handler's dict as it is
# (mcp.server.context.HandlerResult) and checks it against the protocol's CallToolResult before it is sent, as it
# checks a model; built here, it is not built as a model, dumped and copied on the way (~6 us of CPU a call).
Answer = dict[str, Any]


def success(result: BaseModel | Dumped) -> Answer:
    data = result.data if isinstance(result, Dumped) else result.model_dump(mode="json", by_alias=True)
    return {
        # pydantic-core's serializer: the same JSON as json.dumps(ensure_ascii=False), ~5x faster.
        "content": [{"type": "text", "text": to_json(data).decode("utf-8")}],
        "structuredContent": data,
        "isError": False,
        "resultType": "complete",  # as CallToolResult's own dump: the protocol's eras each take what they know
    }


def failure(error: H0Error) -> Answer:
    text = json.dumps(error.to_dict(), ensure_ascii=False, default=str)
    return {"content": [{"type": "text", "text": text}], "isError": True, "resultType": "complete"}


def _validation_message(exc: ValidationError) -> tuple[str, list[dict[str, Any]]]:
    problems = [
        {"field": ".".join(str(part) for part in err["loc"]) or "(arguments)", "problem": err["msg"]}
        for err in exc.errors(include_url=False, include_input=False)
    ]
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
    return f"Invalid arguments — {summary}", problems


def still_running(tool: str, seconds: float) -> H0Error:
    """A tool's answer when it is still running after `seconds`: try again (it goes on meanwhile)."""
    return InternalError(
        f"{tool} did not finish within {seconds:.0f} s (the provider is slow); it may still finish. Try again later.",
        tool=tool,
        retryable=True,
        retry_after=OVERRUN_RETRY_AFTER_S,
    )


OVERRUN_RETRY_AFTER_S = 5.0


@dataclass(frozen=True, slots=True)
class _Registered:
    tool: Tool  # as published by tools/list
    arguments: type[BaseModel]  # validates a call's arguments
    run: Callable[..., Answer]
    inline: bool
    json_fields: frozenset[str]  # arguments that may arrive as JSON text (see _arguments)
    names: frozenset[str]  # every argument it takes, by the name a client sends
    fields: tuple[tuple[str, str], ...]  # (field of `arguments`, the function's parameter) of each
    overrun: Callable[[str, float], H0Error]  # the answer when it runs past the server's `answer_within`


class _Arguments(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)


class H0Server(Server[Any]):
    """A low-level MCP `Server` whose every tool answers a typed result or a typed error."""

    def __init__(
        self,
        name: str,
        *,
        title: str | None = None,
        version: str = "",
        instructions: str | None = None,
        answer_within: float | None = None,
    ):
        self.answer_within = answer_within  # seconds a tool call may run before it is answered (None: no bound)
        self._tools: dict[str, _Registered] = {}
        self._on_start: list[Callable[[], object]] = []
        self._on_stop: list[Callable[[], object]] = []
        super().__init__(
            name,
            version=version,
            title=title,
            instructions=instructions,
            on_list_tools=self._on_list_tools,
            # It answers the wire form (`Answer`), which the runner takes as it takes a model (HandlerResult).
            on_call_tool=cast(Any, self._on_call_tool),
            lifespan=_lifespan,
        )
        # The SDK wraps every message in an OpenTelemetry span by default, a no-op until an exporter is installed;
        # H0 installs none, and the no-op span cost ~40 us of a read_note's ~300 us in the server (SDK's opt-out).
        self.middleware = []

    def on_start(self, hook: Callable[[], object]) -> None:
        """Call `hook` when the server starts serving (its lifespan begins): background work, watchers."""
        self._on_start.append(hook)

    def on_stop(self, hook: Callable[[], object]) -> None:
        """Call `hook` when the server stops serving."""
        self._on_stop.append(hook)

    # ------------------------------------------------------------------ the protocol handlers

    async def _on_list_tools(self, ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=await self.list_tools())

    async def _on_call_tool(self, ctx: Any, params: Any) -> Answer:
        return await self.answer(params.name, params.arguments or {}, ctx)

    async def list_tools(self) -> list[Tool]:
        return [registered.tool for registered in self._tools.values()]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        """`answer`, as the model an MCP client reads: for a caller in this process (tests drive a server so)."""
        return CallToolResult.model_validate(await self.answer(name, arguments, context))

    async def answer(self, name: str, arguments: dict[str, Any], context: Any = None) -> Answer:
        """Validate the arguments, run the tool (on the loop if inline, else in a worker thread,
        with the calling client's name in `current_client`), answer its result or a typed error."""
        registered = self._tools.get(name)
        if registered is None:
            return failure(InvalidRequest(f"Unknown tool {name!r}.", tool=name))
        if not registered.names.issuperset(arguments):
            return failure(_unknown_arguments(name, registered.arguments, arguments))
        try:
            given = _arguments(registered, arguments) if registered.json_fields & arguments.keys() else arguments
            values = registered.arguments.model_validate(given)
        except ValidationError as exc:
            message, problems = _validation_message(exc)
            return failure(InvalidRequest(message, tool=name, problems=problems))
        kwargs = {parameter: getattr(values, key) for key, parameter in registered.fields}
        token = _CALL.set(context)
        try:
            if registered.inline:
                return registered.run(**kwargs)
            # anyio runs it in a copy of this context: the tool sees current_client().
            run = functools.partial(registered.run, **kwargs)
            if self.answer_within is None:
                return await anyio.to_thread.run_sync(run)
            with anyio.move_on_after(self.answer_within):
                return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
            logger.warning("tool {} still running after {:.1f} s: answered, it goes on", name, self.answer_within)
            return failure(registered.overrun(name, self.answer_within))
        finally:
            _CALL.reset(token)

    # ------------------------------------------------------------------ registration

    def typed_tool(
        self,
        output: type[ModelT],
        *,
        annotations: ToolAnnotations | None = None,
        title: str | None = None,
        inline: bool = False,
        overrun: Callable[[str, float], H0Error] = still_running,
    ) -> Callable[[Callable[..., ModelT | Dumped]], Callable[..., Answer]]:
        """Register a sync function returning `output` as a tool with an output schema.

        Its parameters (`Annotated[type, Field(description=…)]`, with defaults) are the input
        schema; `output`'s JSON schema is the output schema. `inline=True` runs the function on
        the event loop instead of a worker thread: for quick tools (one small file) the thread
        hop costs more than the work. `overrun(tool, seconds)`: the answer when it is still running
        after the server's `answer_within` (it goes on).
        """

        def decorate(fn: Callable[..., ModelT | Dumped]) -> Callable[..., Answer]:
            def run(*args: Any, **kwargs: Any) -> Answer:
                try:
                    return success(fn(*args, **kwargs))
                except H0Error as err:
                    return failure(err)
                except Exception:  # noqa: BLE001 - any bug becomes a typed internal_error, never a traceback
                    logger.exception("tool {} raised", fn.__name__)
                    return failure(InternalError(f"{fn.__name__} failed unexpectedly; see the server log."))

            arguments, json_fields = _arguments_model(fn)
            tool = Tool(
                name=fn.__name__,
                title=title,
                description=inspect.getdoc(fn),
                input_schema=arguments.model_json_schema(by_alias=True),
                output_schema=output.model_json_schema(mode="serialization"),
                annotations=annotations,
            )
            fields = tuple((key, field.alias or key) for key, field in arguments.model_fields.items())
            self._tools[fn.__name__] = _Registered(
                tool,
                arguments,
                functools.wraps(fn)(run),
                inline,
                json_fields,
                frozenset(parameter for _, parameter in fields),
                fields,
                overrun,
            )
            return run

        return decorate

    # ------------------------------------------------------------------ serving

    def serve(self, transport: str = "stdio") -> None:
        """Serve until the client closes the pipe (named apart from the SDK's own `Server.run`, which takes
        the streams and which H0's serving loop calls)."""
        if transport != "stdio":
            raise ValueError(f"H0's servers speak stdio only, not {transport!r}")
        try:
            anyio.run(self.run_stdio_async)
        except* (BrokenPipeError, ConnectionResetError):
            # The client went away while an answer was on its way (it was killed, or closed its end first):
            # nobody is left to read, so the server stops as it would at the end of its input.
            logger.info("mcp {}: the client closed its end of the pipe; stopping", self.name)

    async def run_stdio_async(self) -> None:
        """Serve stdin/stdout until the client closes them (see the module docstring)."""
        streams = stdio_server(*await stdio_pipes()) if thread_free_stdio((0, 1)) else stdio_server()  # type: ignore[arg-type]
        async with streams as (read_stream, write_stream), self.lifespan(self) as state:
            await serve_loop(
                self, read_stream, write_stream, lifespan_state=state, init_options=self.create_initialization_options()
            )


def _unknown_arguments(tool: str, model: type[BaseModel], arguments: dict[str, Any]) -> InvalidRequest:
    """The refusal of arguments the tool does not take, naming the ones it does (and the likely intended one):
    'Field required' for the right name alone would not tell a caller what it got wrong."""
    fields = {(field.alias or key): field for key, field in model.model_fields.items()}
    unknown = [key for key in arguments if key not in fields]
    takes = ", ".join(f"{key}{' (required)' if field.is_required() else ''}" for key, field in fields.items())
    hints = []
    for key in unknown:
        close = difflib.get_close_matches(str(key), list(fields), n=1, cutoff=0.6)
        hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return InvalidRequest(
        f"{tool} does not take the argument{'s' if len(unknown) > 1 else ''} {', '.join(hints)}; it takes: {takes}.",
        tool=tool,
        unknown=[str(k) for k in unknown],
        expected=list(fields),
    )


@contextlib.asynccontextmanager
async def _lifespan(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
    assert isinstance(server, H0Server)
    for hook in server._on_start:
        hook()
    try:
        yield {}
    finally:
        for hook in server._on_stop:
            try:
                hook()
            except Exception:  # noqa: BLE001 - stopping: the next hook still runs
                logger.exception("a server stop hook failed")


def _arguments_model(fn: Callable[..., Any]) -> tuple[type[BaseModel], frozenset[str]]:
    """A pydantic model of `fn`'s parameters (names that clash with BaseModel's get an alias)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    json_fields = set()
    for parameter in inspect.signature(fn).parameters.values():
        annotation = hints.get(parameter.name, Any)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        key = parameter.name
        if hasattr(BaseModel, key):
            key = f"field_{key}"
            annotation = typing.Annotated[annotation, Field(alias=parameter.name)]
        fields[key] = (annotation, default)
        if not _is_text(annotation):
            json_fields.add(parameter.name)
    model = create_model(f"{fn.__name__}Arguments", __base__=_Arguments, **fields)
    return model, frozenset(json_fields)


def _is_text(annotation: Any) -> bool:
    base = typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation
    return base is str


def _arguments(registered: _Registered, arguments: dict[str, Any]) -> dict[str, Any]:
    """Some clients send an object or list argument as its JSON text: parse those (as the SDK does)."""
    parsed = dict(arguments)
    for name in registered.json_fields & parsed.keys():
        value = parsed[name]
        if isinstance(value, str):
            try:
                decoded = json.loads(value)
            except ValueError:
                continue
            if not isinstance(decoded, (str, int, float)):
                parsed[name] = decoded
    return parsed
