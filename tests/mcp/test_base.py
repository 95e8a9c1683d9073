"""H0Server, the shared base of both MCP servers, on the SDK's public low-level API: typed tools,
typed errors, arguments some clients send as JSON text, and the calling client's name reaching
the tool (the record of who changed a note, h0.vault.last_change) — in worker threads and inline."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from mcp import Client
from mcp_types import CallToolResult, Implementation, TextContent
from pydantic import BaseModel, Field
from pydantic_core import to_json

from h0.errors import NotFound
from h0.mcp.base import Dumped, H0Server, current_client, failure, success


class Echo(BaseModel):
    client: str | None
    items: list[str]
    options: dict[str, int]


def server() -> H0Server:
    srv = H0Server("test-server", version="1")

    @srv.typed_tool(Echo)
    def echo(
        items: Annotated[list[str], Field(description="Some items.")],
        options: Annotated[dict[str, int], Field(description="Some options.")] = {},  # noqa: B006
    ) -> Echo:
        """Answer what was asked, and who asked."""
        return Echo(client=current_client(), items=items, options=options)

    @srv.typed_tool(Echo, inline=True)
    def echo_inline(items: list[str]) -> Echo:
        return Echo(client=current_client(), items=items, options={})

    @srv.typed_tool(Echo)
    def missing(path: str) -> Echo:
        raise NotFound(f"No note at {path}.", path=path)

    @srv.typed_tool(Echo)
    def broken() -> Echo:
        raise RuntimeError("a bug")

    return srv


def error_of(result) -> dict:
    assert result.is_error and result.structured_content is None
    return json.loads(result.content[0].text)


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["echo", "echo_inline"])
async def test_the_calling_clients_name_reaches_the_tool_in_a_thread_and_inline(tool: str):
    async with Client(server(), client_info=Implementation(name="probe-agent", version="0.1")) as client:
        result = await client.call_tool(tool, {"items": ["a"]})
    assert result.structured_content["client"] == "probe-agent 0.1"


@pytest.mark.anyio
async def test_a_client_naming_itself_with_control_characters_is_recorded_printable_and_bounded():
    info = Implementation(name="evil\x1b[2J\nagent" + "x" * 500, version="1")
    async with Client(server(), client_info=info) as client:
        name = (await client.call_tool("echo", {"items": []})).structured_content["client"]
    assert name.isprintable() and len(name) <= 80 and name.startswith("evil?[2J?agent")


@pytest.mark.anyio
async def test_object_arguments_sent_as_json_text_are_parsed_and_the_schemas_are_published():
    async with Client(server()) as client:
        result = await client.call_tool("echo", {"items": '["a", "b"]', "options": '{"n": 2}'})
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert result.structured_content["items"] == ["a", "b"] and result.structured_content["options"] == {"n": 2}
    assert tools["echo"].input_schema["properties"]["items"]["description"] == "Some items."
    assert tools["echo"].input_schema["required"] == ["items"]
    assert tools["echo"].output_schema == Echo.model_json_schema(mode="serialization")
    assert tools["echo"].description == "Answer what was asked, and who asked."


@pytest.mark.anyio
async def test_errors_are_typed_unknown_tools_wrong_arguments_h0_errors_and_bugs():
    async with Client(server()) as client:
        unknown = error_of(await client.call_tool("nope", {}))
        wrong = error_of(await client.call_tool("echo", {"items": 3}))
        missing = error_of(await client.call_tool("missing", {"path": "Drafts/x.md"}))
        bug = error_of(await client.call_tool("broken", {}))
    assert unknown["error"] == "invalid_request" and "nope" in unknown["message"]
    assert wrong["error"] == "invalid_request" and wrong["details"]["problems"][0]["field"] == "items"
    assert (missing["error"], missing["message"], missing["details"]) == (
        "not_found",
        "No note at Drafts/x.md.",
        {"path": "Drafts/x.md"},
    )
    assert bug["error"] == "internal_error" and "a bug" not in bug["message"]  # no traceback, no internals


@pytest.mark.anyio
async def test_a_misspelled_argument_is_named_with_the_arguments_the_tool_takes():
    """A wrong argument name gets more than 'Field required' for the right one: the wrong name, the
    likely intended one, and every argument the tool takes."""
    async with Client(server()) as client:
        typo = error_of(await client.call_tool("echo", {"itmes": ["a"]}))
        stray = error_of(await client.call_tool("missing", {"path": "x.md", "force": True}))
    assert typo["error"] == "invalid_request"
    assert typo["message"] == (
        "echo does not take the argument 'itmes' (did you mean 'items'?); it takes: items (required), options."
    )
    assert typo["details"]["unknown"] == ["itmes"] and typo["details"]["expected"] == ["items", "options"]
    assert "'force'" in stray["message"] and "path (required)" in stray["message"]


def test_a_tools_answer_is_the_sdks_own_dump_of_the_result_model():
    """The servers answer the wire form themselves (a dict the SDK's runner takes as it takes a model, and checks
    against the protocol's CallToolResult): it is exactly what the SDK would have made of the model, for a result
    with structured content, one answered as it is (`Dumped`), and a typed error."""
    data = {"client": None, "items": ["a", "é"], "options": {"n": 2}}
    as_model = CallToolResult(
        content=[TextContent(type="text", text=to_json(data).decode())], structured_content=data
    ).model_dump(by_alias=True, mode="json", exclude_none=True)
    assert success(Echo.model_validate(data)) == as_model == success(Dumped(data))
    error = NotFound("No note at x.md.", path="x.md")
    assert failure(error) == CallToolResult(
        content=[TextContent(type="text", text=json.dumps(error.to_dict(), ensure_ascii=False))], is_error=True
    ).model_dump(by_alias=True, mode="json", exclude_none=True)
