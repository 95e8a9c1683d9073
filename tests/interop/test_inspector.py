"""The vault server driven by an independent MCP client: the MCP Inspector CLI (TypeScript SDK).

The Inspector's client validates `structuredContent` against each tool's `outputSchema`
itself, so a result that only our Python client accepts fails here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import H0_BIN, subprocess_env
from tests.mcp.test_vault_server import VAULT_TOOLS

pytestmark = pytest.mark.interop

READ_ONLY = {
    "read_note",
    "read_notes",
    "list_notes",
    "search_notes",
    "related_notes",
    "notes_for_address",
    "draft_context",
    "free_slots",
    "health_check",
}
NOTE = "Needs_Action/EMAIL_interop-001.md"
NOTE_TEXT = """\
---
type: email
status: pending
message_id: interop-001
from: "Dana Rivera <dana.rivera@example.com>"
subject: Can we move Thursday's review to Friday?
received: 2026-11-20T09:14:00Z
labels: [INBOX, UNREAD]
---
Hi,

Could we move the design review to Friday at 10:00?
"""


def inspect(inspector: Path, vault: Path, *method: str) -> dict[str, Any]:
    """Run `mcp-inspector --cli h0 mcp vault --method …` and return the JSON it prints."""
    proc = subprocess.run(
        [str(inspector), "--cli", H0_BIN, "mcp", "vault", *method],
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
        env=subprocess_env(VAULT_PATH=str(vault), LOG_LEVEL="WARNING"),
    )
    assert proc.returncode == 0, (
        f"inspector exited {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    )
    return json.loads(proc.stdout)


@pytest.fixture
def vault_with_note(vault_dir: Path) -> Path:
    (vault_dir / NOTE).write_text(NOTE_TEXT, encoding="utf-8")
    return vault_dir


def test_tools_list_shows_every_vault_tool_with_schemas_and_annotations(inspector_bin: Path, vault_dir: Path) -> None:
    tools = {tool["name"]: tool for tool in inspect(inspector_bin, vault_dir, "--method", "tools/list")["tools"]}

    assert set(tools) == VAULT_TOOLS
    for name, tool in tools.items():
        assert tool["description"], name
        assert tool["inputSchema"]["type"] == "object", name
        assert tool["outputSchema"]["type"] == "object", name
        assert tool["outputSchema"].get("properties"), name
        hints = tool["annotations"]
        assert hints["readOnlyHint"] is (name in READ_ONLY), name
        assert hints["openWorldHint"] is False, name
    assert tools["write_note"]["annotations"]["destructiveHint"] is True
    assert tools["move_note"]["annotations"]["destructiveHint"] is False
    assert tools["read_note"]["inputSchema"]["required"] == ["path"]
    assert set(tools["read_note"]["outputSchema"]["required"]) == {"path", "frontmatter", "body", "hash"}


def test_read_note_returns_structured_content(inspector_bin: Path, vault_with_note: Path) -> None:
    result = inspect(
        inspector_bin,
        vault_with_note,
        "--method",
        "tools/call",
        "--tool-name",
        "read_note",
        "--tool-arg",
        f"path={NOTE}",
    )

    assert not result.get("isError")
    data = result["structuredContent"]
    assert data["path"] == NOTE
    assert data["frontmatter"]["status"] == "pending"
    assert data["frontmatter"]["labels"] == ["INBOX", "UNREAD"]
    assert data["frontmatter"]["received"] == "2026-11-20T09:14:00Z"
    assert data["body"] == NOTE_TEXT.split("---\n", 2)[2]
    assert data["hash"]
    # The text content carries the same JSON, for clients that read only text.
    assert json.loads(result["content"][0]["text"]) == data


def test_list_notes_with_a_filter(inspector_bin: Path, vault_with_note: Path) -> None:
    result = inspect(
        inspector_bin, vault_with_note,
        "--method", "tools/call", "--tool-name", "list_notes",
        "--tool-arg", "directory=Needs_Action", "--tool-arg", "filter=labels:UNREAD", "--tool-arg", "limit=5",
    )  # fmt: skip

    assert not result.get("isError")
    assert result["structuredContent"]["notes"] == [NOTE]


@pytest.mark.parametrize(
    "tool_args",
    [
        pytest.param(["--tool-name", "read_note", "--tool-arg", "path=../../etc/passwd"], id="read-escape"),
        pytest.param(["--tool-name", "read_note", "--tool-arg", "path=/etc/passwd"], id="read-absolute-outside"),
        pytest.param(
            [
                "--tool-name",
                "write_note",
                "--tool-arg",
                "path=Approved/sneaky.md",
                "--tool-arg",
                'frontmatter={"to": "dana@example.com", "subject": "hi"}',
                "--tool-arg",
                "body=Send it.",
            ],
            id="write-into-approved",
        ),
        pytest.param(
            ["--tool-name", "move_note", "--tool-arg", f"source={NOTE}", "--tool-arg", "destination=Approved/"],
            id="move-into-approved",
        ),
    ],
)
def test_refusals_are_error_results_without_structured_content(
    inspector_bin: Path, vault_with_note: Path, tool_args: list[str]
) -> None:
    before = sorted(p.relative_to(vault_with_note).as_posix() for p in vault_with_note.rglob("*.md"))

    result = inspect(inspector_bin, vault_with_note, "--method", "tools/call", *tool_args)

    assert result["isError"] is True
    assert "structuredContent" not in result
    error = json.loads(result["content"][0]["text"])
    assert error["error"] == "permission_denied"
    assert error["message"]
    assert isinstance(error["details"], dict)
    after = sorted(p.relative_to(vault_with_note).as_posix() for p in vault_with_note.rglob("*.md"))
    assert after == before
    assert not list((vault_with_note / "Approved").iterdir())
