"""Giving freed memory back to the OS. After a burst of allocations (the vault index's first build: a
10,000-note vault parsed and written) the C heap keeps the pages it freed, in every thread's arena, and
the process's resident memory stays at its peak; glibc's `malloc_trim` returns them (about 12 MB after a
build of 10,000 notes). Elsewhere (macOS, Windows, musl) nothing is done."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from typing import Any

_trim: Any = None


def release_free_memory() -> bool:
    """Return the C heap's free pages to the OS where the C library can (glibc); whether it could."""
    global _trim
    if not sys.platform.startswith("linux"):
        return False
    if _trim is None:
        try:
            _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
            _trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
            _trim = False
    if not _trim:
        return False
    _trim(0)
    return True
