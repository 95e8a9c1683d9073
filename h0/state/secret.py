"""The per-installation secret idempotency keys and Message-IDs derive from: created once, mode 0600,
next to the state database, so nobody who can only read the vault can mint them."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from h0.errors import InternalError
from h0.platform.fileio import write_secret

SECRET_FILE = "secret.key"
_HEX = re.compile(r"[0-9a-fA-F]{64,}")


def load_or_create_secret(path: Path) -> bytes:
    """The secret stored at `path`, created there (32 random bytes, hex) if there is none. Of several processes
    creating it at once, one file wins and every one of them reads it."""
    if not path.exists():
        value = secrets.token_hex(32)
        try:
            write_secret(path, value + "\n", replace=False)
        except FileExistsError:
            pass  # another process made it first: theirs is the secret
        else:
            return bytes.fromhex(value)
    if hasattr(os, "fchmod") and path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)  # never leave the secret readable by others
    text = path.read_text(encoding="ascii", errors="replace").strip()
    if not _HEX.fullmatch(text) or len(text) % 2:
        raise InternalError(f"H0's secret {path} is damaged; delete it only if nothing is pending.", path=str(path))
    return bytes.fromhex(text)
