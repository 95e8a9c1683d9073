"""Pinned tool contracts (SC-004): any change to a tool's schema fails a test until re-pinned.

Re-pin on purpose with `H0_UPDATE_CONTRACTS=1 pytest tests/mcp -k contract`, and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CONTRACTS = Path(__file__).resolve().parent.parent / "contracts"


def describe(tools: list[Any]) -> dict[str, Any]:
    return {
        tool.name: {
            "description": tool.description,
            "inputSchema": tool.input_schema,
            "outputSchema": tool.output_schema,
            "annotations": tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations else None,
        }
        for tool in sorted(tools, key=lambda t: t.name)
    }


def check_contract(name: str, tools: list[Any]) -> None:
    current = describe(tools)
    path = CONTRACTS / f"{name}.json"
    if os.environ.get("H0_UPDATE_CONTRACTS") == "1" or not path.exists():
        if not path.exists() and os.environ.get("H0_UPDATE_CONTRACTS") != "1":
            raise AssertionError(f"no pinned contract at {path}; run with H0_UPDATE_CONTRACTS=1 to create it")
        path.write_text(json.dumps(current, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    pinned = json.loads(path.read_text())
    assert current == pinned, f"tool contract {name} changed; re-pin deliberately (see tests/mcp/contracts.py)"
