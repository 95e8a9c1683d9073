"""What H0 does differently on Linux, macOS and Windows lives in this package, and only here.

Today: running `h0 watch` at login (`service`: a systemd user unit, a launchd agent).
Other OS-specific primitives (locks, no-replace rename, full fsync) are to move here too.
"""

from __future__ import annotations

import sys

LINUX = "linux"
MACOS = "macos"
WINDOWS = "windows"


def current_platform() -> str:
    """`linux`, `macos` or `windows` for this machine; `sys.platform` itself for anything else."""
    if sys.platform.startswith("linux"):
        return LINUX
    if sys.platform == "darwin":
        return MACOS
    if sys.platform == "win32":
        return WINDOWS
    return sys.platform
