"""The daemon's own vault server keeps no index until a tool asks for one (h0.mcp.live_index): no
walk of the vault and no second watcher at start; the first ask builds it, and it then stays fresh.
An MCP client's server (not lazy) builds and watches at once, as before."""

from __future__ import annotations

import os
from pathlib import Path

from h0.mcp.live_index import BUILD_WAIT_S, LiveIndex
from h0.state import state_dir_for
from tests.pipeline.harness import wait_until


def _note(vault_dir: Path, rel: str, text: str) -> None:
    (vault_dir / rel).write_text(f"---\ntype: note\n---\n{text}\n")


def test_a_lazy_index_is_built_on_the_first_ask_and_then_kept_fresh(vault_dir: Path):
    state = Path(os.environ["H0_STATE_DIR"])
    _note(vault_dir, "Done/atlas.md", "Project atlas kickoff")
    live = LiveIndex(vault_dir, state, lazy=True).start()
    try:
        assert not live.watching()
        assert not (state_dir_for(vault_dir, state) / "index.db").exists()  # nothing opened, nothing walked
        index = live.wait(BUILD_WAIT_S)  # a tool asks
        assert index is not None
        assert [h.path for h in index.search("atlas").hits] == ["Done/atlas.md"]
        assert wait_until(live.watching, timeout=10)
        _note(vault_dir, "Done/later.md", "atlas again, written after the build")
        assert wait_until(lambda: len(index.search("atlas").hits) == 2, timeout=10)
    finally:
        live.stop()


def test_an_eager_index_builds_and_watches_at_start(vault_dir: Path):
    state = Path(os.environ["H0_STATE_DIR"])
    live = LiveIndex(vault_dir, state).start()
    try:
        assert wait_until(live.watching, timeout=10)
    finally:
        live.stop()


def test_a_lazy_index_stopped_before_any_ask_never_starts(vault_dir: Path):
    state = Path(os.environ["H0_STATE_DIR"])
    live = LiveIndex(vault_dir, state, lazy=True).start()
    live.stop()
    assert live.get() is None and not live.watching()
    assert not (state_dir_for(vault_dir, state) / "index.db").exists()
