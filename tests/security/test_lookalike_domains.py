"""Look-alike addresses (issue 20, class 6): a recipient domain that passes for one the vault has
corresponded with is held with a warning naming both; a first message to a new domain is marked.

Hostile inputs first — Cyrillic and Greek letters in a Latin name, punycode, digits for letters,
`rn` for `m`, an accent — each against a domain the vault knows from its send ledger or from an
email note. Then domains that only resemble each other and must pass, the sources of "known",
a FIFO named like a note (never opened), and the real send path through `h0 sweep`: held, then
sent once the note confirms the domain (`confirm_domains:`).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.mail.deception.lookalike import Correspondents, lookalikes, new_domains, skeleton
from h0.report.collect import collect_status
from h0.report.dashboard import render_dashboard
from h0.state import StateDB, state_dir_for
from tests.pipeline.harness import frontmatter, outbox, write_draft

pytestmark = pytest.mark.usefixtures("loguru_restored")

EMAIL_FROM_BANK = """\
---
type: email
status: done
from: "Bank of Example <ceo@bank.com>"
to: me@home.example
subject: Your statement
---
```text
Hello
```
"""

LOOKALIKES = {
    "Cyrillic а": ("b\u0430nk.com", "bank.com"),
    "punycode of the Cyrillic а": ("xn--bnk-6cd.com", "bank.com"),
    "Greek ο": ("g\u03bf\u03bfgle.com", "google.com"),
    "whole-script Cyrillic": ("\u0430\u0440\u0440\u04cf\u0435.com", "apple.com"),
    "digit one for l": ("paypa1.com", "paypal.com"),
    "digit zero for o": ("g00gle.com", "google.com"),
    "rn for m": ("arnazon.com", "amazon.com"),
    "an accent": ("b\u0101nk.com", "bank.com"),
    "fullwidth letters": ("\uff42ank.com", "bank.com"),
    "upper case": ("B\u0410NK.COM", "bank.com"),
}


@pytest.mark.parametrize(("domain", "known"), LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_given_a_look_alike_of_a_known_domain_then_they_share_a_skeleton(domain: str, known: str):
    assert skeleton(domain) == skeleton(known) and domain.lower() != known


@pytest.mark.parametrize(
    ("a", "b"),
    [("example.com", "example.org"), ("bank.com", "banks.com"), ("mail.com", "gmail.com"), ("münchen.de", "berlin.de")],
)
def test_given_different_looking_domains_then_their_skeletons_differ(a: str, b: str):
    assert skeleton(a) != skeleton(b)


def _state(vault_dir: Path) -> StateDB:
    return StateDB.for_vault(vault_dir, load_settings(vault_path=vault_dir).h0_state_dir)


def _ledger_send(db: StateDB, to: str, n: int = 1) -> None:
    key = f"k{n}"
    db.claim_send(key=key, rfc822_message_id=f"<{key}@h0>", content_hash="c", caps=[], in_flight_s=60, recipients=to)
    db.mark_sent(
        f"<{key}@h0>", provider_message_id=None, thread_id=None, sent_at="2026-01-01T00:00:00Z", backend="outbox"
    )


def test_known_domains_come_from_the_ledger_email_notes_and_sent_drafts(vault_dir: Path):
    """Given a send in the state database's ledger, an email note in Done/ and a sent draft with a Cc,
    When the correspondents are read, Then all their domains are known; a new one is not."""
    db = _state(vault_dir)
    _ledger_send(db, "Ann <ann@ledger.example>")
    (vault_dir / "Done/EMAIL_1.md").write_text(EMAIL_FROM_BANK)
    (vault_dir / "Done/reply.md").write_text("---\nto: x@to.example\ncc:\n  - y@cc.example\nstatus: sent\n---\nHi\n")
    known = Correspondents(vault_dir, db)
    assert {"ledger.example", "bank.com", "to.example", "cc.example"} <= known.domains()
    assert new_domains(["a@bank.com", "b@new.example", "c@new.example"], known) == ["new.example"]
    assert lookalikes(["b\u0430nk.com", "bank.com", "new.example"], known) == [("xn--bnk-6cd.com", "bank.com")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_given_a_fifo_named_like_a_note_then_reading_the_correspondents_never_blocks(vault_dir: Path):
    """Given a FIFO named EMAIL_x.md in Done/ (nobody will ever write to it), When the correspondents
    are read, Then it is skipped at once and the real notes are read."""
    os.mkfifo(vault_dir / "Done/EMAIL_fifo.md")
    (vault_dir / "Done/EMAIL_1.md").write_text(EMAIL_FROM_BANK)
    result: list[set[str]] = []
    reader = threading.Thread(target=lambda: result.append(Correspondents(vault_dir, None).domains()), daemon=True)
    reader.start()
    reader.join(10)
    assert result and "bank.com" in result[0]


@pytest.fixture
def sweep_env(monkeypatch: pytest.MonkeyPatch, vault_dir: Path):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    return monkeypatch


@pytest.mark.parametrize("to", ["ceo@b\u0430nk.com", "ceo@xn--bnk-6cd.com", "'Bank <ceo@b\u0430nk.com>'"])
def test_given_a_reply_to_a_look_alike_of_a_known_sender_then_it_is_held_naming_both(
    vault_dir: Path, sweep_env, capsys, to: str
):
    """Given an email once received from ceo@bank.com, When a draft to the Cyrillic look-alike (or its
    punycode) is approved and swept, Then nothing is sent and the draft is back in Drafts/ held, the
    warning naming both domains and the fix; When the note confirms the domain, Then it is sent."""
    (vault_dir / "Done/EMAIL_1.md").write_text(EMAIL_FROM_BANK)
    write_draft(vault_dir, "Approved", "pay.md", to=to)
    assert main(["sweep"]) == 0
    capsys.readouterr()
    held = frontmatter(vault_dir, "Drafts/pay.md")
    assert held["status"] == "held" and held["h0_error_code"] == "lookalike_domain"
    assert "bank.com" in held["h0_error"] and "xn--bnk-6cd.com" in held["h0_error"]
    assert "confirm_domains: [xn--bnk-6cd.com]" in held["h0_error"]
    assert outbox(vault_dir) == []

    path = vault_dir / "Drafts/pay.md"
    path.write_text(path.read_text().replace("---\n", "---\nconfirm_domains: [xn--bnk-6cd.com]\n", 1))
    os.utime(path, (time.time() - 60, time.time() - 60))  # a sweep sends only a settled note
    os.rename(path, vault_dir / "Approved/pay.md")
    assert main(["sweep"]) == 0
    assert len(outbox(vault_dir)) == 1


def test_given_a_look_alike_of_a_domain_only_written_to_then_it_is_held(vault_dir: Path, sweep_env, capsys):
    """Given a send to ops@paypal.com in the ledger (no note about it left), When a draft to
    ops@paypa1.com is swept, Then it is held naming both."""
    _ledger_send(_state(vault_dir), "ops@paypal.com")
    write_draft(vault_dir, "Approved", "ops.md", to="ops@paypa1.com")
    assert main(["sweep"]) == 0
    held = frontmatter(vault_dir, "Drafts/ops.md")
    assert held["h0_error_code"] == "lookalike_domain" and "paypal.com" in held["h0_error"]
    assert "paypa1.com" in held["h0_error"] and outbox(vault_dir) == []


def test_given_a_known_domain_and_a_new_one_then_only_the_first_message_is_sent_as_such(
    vault_dir: Path, sweep_env, capsys
):
    """A draft to a domain never corresponded with is marked as a first message in `h0 status` (text
    and JSON) and on the dashboard; one to a known domain is not; both are sent when approved."""
    (vault_dir / "Done/EMAIL_1.md").write_text(EMAIL_FROM_BANK)
    write_draft(vault_dir, "Drafts", "new.md", to="hello@fresh.example", status="pending_approval")
    write_draft(vault_dir, "Drafts", "old.md", to="ceo@bank.com", status="pending_approval")
    assert main(["status"]) == 0
    text = capsys.readouterr().out
    assert "(Drafts/new.md) (first message to fresh.example)" in text
    assert "(Drafts/old.md) (first" not in text
    assert main(["status", "--json"]) == 0
    details = {d["path"]: d for d in json.loads(capsys.readouterr().out)["waiting_for_approval_details"]}
    assert details["Drafts/new.md"]["new_domains"] == ["fresh.example"]
    assert details["Drafts/old.md"]["new_domains"] == []
    page = render_dashboard(collect_status(load_settings(vault_path=vault_dir)))
    (line,) = [line for line in page.splitlines() if "Drafts/new" in line]
    assert "**first message to** fresh.example" in line
    assert not any("Drafts/old" in line and "first message" in line for line in page.splitlines())
    assert state_dir_for(vault_dir, load_settings(vault_path=vault_dir).h0_state_dir)  # status created nothing odd
