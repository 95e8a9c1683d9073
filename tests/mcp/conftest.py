"""Fixtures of the MCP tests: the vault server in memory behind the stock `mcp` client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from h0.mcp.vault_server import build_vault_server


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
async def client(vault_dir: Path):
    async with Client(build_vault_server(vault_dir)) as c:
        yield c


def error_of(result) -> dict:
    """The typed error a tool answered: text content only (TS clients would validate structured
    content against the output schema), the wire shape, no traceback."""
    assert result.is_error, result
    assert result.structured_content is None
    body = json.loads(result.content[0].text)
    assert set(body) >= {"error", "message", "details"}
    assert "Traceback" not in result.content[0].text
    return body
