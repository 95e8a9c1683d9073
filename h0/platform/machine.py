"""This computer, as the vault's sending claim names it (h0.vault.sending_computer): an id that stays the same across runs
and differs between computers, and the name the owner knows it by.

The id is a hash of what the OS says identifies the machine (Linux's /etc/machine-id, else the network card's
address) and its host name; nothing is stored. The H0_MACHINE setting names it outright (a container whose id
changes at every start): the name is then the id too.
"""

from __future__ import annotations

import hashlib
import socket
import uuid
from dataclasses import dataclass

_MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


@dataclass(frozen=True, slots=True)
class Machine:
    id: str
    name: str

    @classmethod
    def this(cls, named: str = "") -> Machine:
        """The computer this process runs on (`named`: the H0_MACHINE setting, when it is set)."""
        named = named.strip()
        if named:
            return cls(named[:64], named[:64])
        host = socket.gethostname() or "this computer"
        seed = f"{_os_machine_id()}:{host}"
        return cls(hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16], host[:64])


def _os_machine_id() -> str:
    for path in _MACHINE_ID_FILES:
        try:
            with open(path, encoding="ascii", errors="replace") as handle:
                found = handle.read(64).strip()
        except OSError:
            continue
        if found:
            return found
    return f"{uuid.getnode():012x}"
