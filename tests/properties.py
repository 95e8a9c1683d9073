"""How many examples a property test (hypothesis) runs.

Each test states its full count, `examples(full)`. The default run — the README's command, CI — runs
a quarter of it, derandomized: the same examples on every run, so a run never fails on a case the
previous run did not try. `pytest --hypothesis-profile=thorough` runs the full counts with fresh
random examples each time (docs/testing.md). The profiles are registered in tests/conftest.py.
"""

from __future__ import annotations

from hypothesis import settings

DEFAULT = "h0-default"
THOROUGH = "thorough"
SHARE_BY_DEFAULT = 4


def register_profiles() -> None:
    settings.register_profile(DEFAULT, derandomize=True, deadline=None)
    settings.register_profile(THOROUGH, derandomize=False, deadline=None)
    settings.load_profile(DEFAULT)  # `--hypothesis-profile` (hypothesis's pytest plugin) loads another later


def examples(full: int) -> int:
    """`full` under the thorough profile; a quarter of it (at least 10) otherwise."""
    if settings.get_current_profile_name() == THOROUGH:
        return full
    return max(10, full // SHARE_BY_DEFAULT)
