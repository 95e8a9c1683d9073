"""Configure loguru once, on stderr only: stdout belongs to the MCP stdio protocol.

Every line's message passes through `h0.printable`: a note's name or a subject holding a line
break, an ESC sequence or a bidi control is shown escaped, so no name can forge a log line or
repaint the terminal (the same goes for `h0 service logs` and the journal, which read stderr).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from loguru import logger

if TYPE_CHECKING:
    from loguru import Record

from h0.printable import printable

_FORMAT = "<green>{time:HH:mm:ss.SSS}</green> <level>{level: <7}</level> {extra[h0_line]}\n{exception}"
_configured = False


def _format(record: Record) -> str:
    # The message goes in through `extra`, never into the format string: its braces and `<tags>`
    # stay text, and its controls are escaped.
    record["extra"]["h0_line"] = printable(record["message"])
    return _FORMAT


def setup_logging(level: str = "INFO") -> None:
    """Send H0's log lines to stderr at `level`; safe to call more than once."""
    global _configured
    logger.remove()
    logger.add(sys.stderr, level=level.upper(), format=_format, backtrace=False, diagnose=False)
    _configured = True
