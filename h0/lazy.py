"""A package's exported names loaded when first asked for (PEP 562), for packages whose parts are costly
to import and not all needed by every command (`h0 status` starts a fresh process each time).

    __getattr__ = lazy_names(__name__, {"OwnerCalendar": "h0.calendar.service", ...})

The package names them for type checkers under `if TYPE_CHECKING:`; a name asked once is kept in the
package, so later look-ups never come here again.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name in `homes` imported from the module named there."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
