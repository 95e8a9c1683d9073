"""Find and kill child processes by command line (for tests that kill an MCP server)."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def descendants(pid: int | None = None) -> list[int]:
    root = pid or os.getpid()
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def find_children(fragment: str, pid: int | None = None) -> list[int]:
    return [p for p in descendants(pid) if fragment in cmdline(p)]


def kill_children(
    fragment: str, sig: int = getattr(signal, "SIGKILL", signal.SIGTERM), pid: int | None = None
) -> list[int]:
    victims = find_children(fragment, pid)
    for victim in victims:
        try:
            os.kill(victim, sig)
        except ProcessLookupError:
            pass
    return victims
