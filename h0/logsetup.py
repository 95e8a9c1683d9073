"""Configure loguru once, on stderr only: stdout belongs to the MCP stdio protocol."""

from __future__ import annotations

import sys

from loguru import logger

_FORMAT = "<green>{time:HH:mm:ss.SSS}</green> <level>{level: <7}</level> {message}"
_configured = False


def setup_logging(level: str = "INFO") -> None:
    """Send H0's log lines to stderr at `level`; safe to call more than once."""
    global _configured
    logger.remove()
    logger.add(sys.stderr, level=level.upper(), format=_FORMAT, backtrace=False, diagnose=False)
    _configured = True
