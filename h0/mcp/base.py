"""What both H0 MCP servers share: typed results, typed errors, never a traceback.

A tool is a plain function returning a pydantic model. `H0Server.typed_tool` wraps it so
that success becomes a `CallToolResult` with `structured_content` (and the same JSON as
text, for clients that read only text), and any `H0Error` becomes
`{"error", "message", "details"}` in the text content with `is_error=True` and no
structured content — TypeScript-SDK clients such as Claude Code validate structured
content against the output schema even on errors (typescript-sdk#1943).
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, TypeVar

from loguru import logger
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from h0.errors import H0Error, InternalError, InvalidRequest
from h0.mcp.sdk_hooks import serve_stdio, skip_output_revalidation
from h0.platform.proc import thread_free_stdio

ModelT = TypeVar("ModelT", bound=BaseModel)

# The MCP client whose tool call is running (its handshake's clientInfo), for the record of who
# changed a note (h0.vault.seen). Set per call; tools in worker threads see it (anyio copies the context).
_CLIENT: ContextVar[str | None] = ContextVar("h0_mcp_client", default=None)
MAX_CLIENT_CHARS = 80


def current_client() -> str | None:
    """'name version' of the MCP client calling the current tool, as it introduced itself; None if unnamed."""
    return _CLIENT.get()


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


def success(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json", by_alias=True)
    return CallToolResult(
        # pydantic-core's serializer: the same JSON as json.dumps(ensure_ascii=False), ~5x faster.
        content=[TextContent(type="text", text=to_json(data).decode("utf-8"))],
        structured_content=data,
    )


def failure(error: H0Error) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(error.to_dict(), ensure_ascii=False, default=str))],
        is_error=True,
    )


def _validation_message(exc: ValidationError) -> tuple[str, list[dict[str, Any]]]:
    problems = [
        {"field": ".".join(str(part) for part in err["loc"]) or "(arguments)", "problem": err["msg"]}
        for err in exc.errors(include_url=False, include_input=False)
    ]
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
    return f"Invalid arguments — {summary}", problems


class H0Server(MCPServer):
    """An MCPServer whose every tool answers a typed result or a typed error."""

    async def run_stdio_async(self) -> None:
        """Serve stdio through asyncio pipes (no worker-thread hop per line read or written),
        in the handshake protocol era (see h0.mcp.sdk_hooks.serve_stdio for why)."""
        # Threads for a file on stdin, or on an OS where pipes are not safe for asyncio.
        await serve_stdio(self, threads=not thread_free_stdio((0, 1)))

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:  # type: ignore[override]
        token = _CLIENT.set(_client_of(context))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                message, problems = _validation_message(cause)
                return failure(InvalidRequest(message, tool=name, problems=problems))
            if str(exc).startswith("Unknown tool"):
                return failure(InvalidRequest(f"Unknown tool {name!r}.", tool=name))
            logger.opt(exception=cause or exc).error("tool {} failed unexpectedly", name)
            return failure(InternalError(f"{name} failed unexpectedly; see the server log.", tool=name))
        finally:
            _CLIENT.reset(token)

    def typed_tool(
        self,
        output: type[ModelT],
        *,
        annotations: ToolAnnotations | None = None,
        title: str | None = None,
        inline: bool = False,
    ) -> Callable[[Callable[..., ModelT]], Callable[..., CallToolResult]]:
        """Register a sync function returning `output` as a tool with an output schema.

        `inline=True` runs the function on the event loop instead of a worker thread:
        for quick tools (one small file) the thread hop costs more than the work.
        """

        def decorate(fn: Callable[..., ModelT]) -> Callable[..., CallToolResult]:
            def run(*args: Any, **kwargs: Any) -> CallToolResult:
                try:
                    return success(fn(*args, **kwargs))
                except H0Error as err:
                    return failure(err)
                except Exception:  # noqa: BLE001 - any bug becomes a typed internal_error, never a traceback
                    logger.exception("tool {} raised", fn.__name__)
                    return failure(InternalError(f"{fn.__name__} failed unexpectedly; see the server log."))

            if inline:

                @functools.wraps(fn)
                async def tool(*args: Any, **kwargs: Any) -> CallToolResult:
                    return run(*args, **kwargs)

            else:
                tool = functools.wraps(fn)(run)

            # Resolve string annotations against the tool's own module, then publish the
            # signature with `Annotated[CallToolResult, output]`: the SDK derives the
            # output schema from it and passes our CallToolResult through unchanged.
            hints = typing.get_type_hints(fn, include_extras=True)
            returns = Annotated[CallToolResult, output]
            signature = inspect.signature(fn)
            params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()]
            tool.__signature__ = signature.replace(parameters=params, return_annotation=returns)  # type: ignore[attr-defined]
            tool.__annotations__ = {**{p.name: p.annotation for p in params}, "return": returns}
            self.add_tool(tool, name=fn.__name__, title=title, description=inspect.getdoc(fn), annotations=annotations)
            # The result was built from `output` a moment ago: the contract tests pin the
            # schema, and success() is the only producer.
            skip_output_revalidation(self, fn.__name__)
            return tool

        return decorate
