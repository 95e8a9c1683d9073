"""User regexes cannot freeze H0 (issue 29), with a real `h0 watch` process: given a rules note whose
first rule backtracks catastrophically on every email in a pile of them, when the human approves a
draft while triage is matching that rule, then the draft goes out at once, and SIGTERM stops the
daemon promptly — the emails triage had not reached are left for the next start."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from h0.vault.marks import RULE_TIMEOUTS_KEY as TIMEOUTS_KEY
from tests.conftest import H0_BIN, subprocess_env
from tests.pipeline.harness import approve, frontmatter, wait_until, write_draft

EMAILS = 40
RULES = """---
type: h0-rules
---
# Rules

```yaml
rules:
  - name: Runaway
    when:
      body: "/(a|aa)+$/"
    decision: archive
  - name: Everything else
    decision: needs_info
```
"""


def test_a_send_and_sigterm_are_never_stuck_behind_a_runaway_rule(vault_dir: Path, tmp_path: Path) -> None:
    (vault_dir / "H0_Rules.md").write_text(RULES, encoding="utf-8")
    for n in range(EMAILS):
        (vault_dir / f"Needs_Action/EMAIL_h{n}.md").write_text(
            f"---\ntype: email\nstatus: pending\nmessage_id: h{n}\nfrom: x{n}@stranger.example\nsubject: Hi {n}\n"
            f"---\n```text\n{'a' * 80}!\n```\n",
            encoding="utf-8",
        )
    write_draft(vault_dir, "Drafts", "go.md")
    log = open(tmp_path / "watch.log", "w+")  # noqa: SIM115 - a file, not a pipe nobody reads while the daemon runs
    daemon = subprocess.Popen(
        [H0_BIN, "watch"], env=subprocess_env(VAULT_PATH=str(vault_dir), LOG_LEVEL="INFO"), stderr=log, text=True
    )
    try:
        # Triage has met the runaway pattern (it says so on the rules note) and is working through the pile.
        assert wait_until(lambda: TIMEOUTS_KEY in frontmatter(vault_dir, "H0_Rules.md"), timeout=60)

        approved = time.monotonic()
        approve(vault_dir, "go.md")
        assert wait_until(lambda: (vault_dir / "Done/go.md").exists(), timeout=30)
        sent_in = time.monotonic() - approved

        untriaged = [
            n for n in range(EMAILS) if frontmatter(vault_dir, f"Needs_Action/EMAIL_h{n}.md")["status"] == "pending"
        ]
        assert untriaged, "triage finished before the send: the test proved nothing"
        assert sent_in < 5.0, f"the approved draft took {sent_in:.1f} s while triage was matching"
    finally:
        stopped = time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(60)
        stop_took = time.monotonic() - stopped
        log.seek(0)
        err = log.read()
        log.close()
    assert code == 0, err
    assert frontmatter(vault_dir, "Done/go.md")["status"] == "sent"
    assert stop_took < 10.0, f"SIGTERM took {stop_took:.1f} s to stop the daemon"
