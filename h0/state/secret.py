"""The per-installation secret idempotency keys and Message-IDs derive from: created once, mode 0600,
next to the state database, so nobody who can only read the vault can mint them."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from h0.errors import InternalError

SECRET_FILE = "secret.key"


def load_or_create_secret(path: Path) -> bytes:
    """The secret stored at `path`, created there (32 random bytes, hex) if there is none."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    except FileExistsError:
        if hasattr(os, "fchmod") and path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)  # never leave the secret readable by others
        text = path.read_text(encoding="ascii").strip()
        if len(text) < 64:
            raise InternalError(f"H0's secret {path} is damaged; delete it only if nothing is pending.", path=str(path))
        return bytes.fromhex(text)
    value = secrets.token_hex(32)
    try:
        os.write(fd, value.encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return bytes.fromhex(value)
