"""Attacks through the real pipeline (`h0 sweep`, rules backend, outbox) and the send path's hold (issue 41).

Given the owner wrote to Sabine at kranich-logistik.example (H0's own send, in the state database's ledger):
an attacker's look-alike sitting in Needs_Action/ is flagged and never makes Sabine's own next email look
suspect (it used to: every sender in Needs_Action/ counted as known); her hijacked account asking for new
bank details is a "confirm by phone", not an impostor; an approved reply to a flagged email is held at send
with the reason unless the draft says `send_anyway: true`; a reply to Sabine is sent even with the
attacker's confusable domain in the inbox; a hand-written draft one letter away from her domain is held.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.state import StateDB
from tests.pipeline.harness import frontmatter, outbox, write_draft

pytestmark = pytest.mark.usefixtures("loguru_restored")

SABINE = "Sabine Kranich <sabine@kranich-logistik.example>"


@pytest.fixture
def owner_vault(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("OWNER_EMAILS", "lena@studio.example")
    db = StateDB.for_vault(vault_dir, load_settings(vault_path=vault_dir).h0_state_dir)
    db.claim_send(key="k1", rfc822_message_id="<k1@h0>", content_hash="c", caps=[], in_flight_s=60, recipients=SABINE)
    db.mark_sent("<k1@h0>", provider_message_id=None, thread_id=None, sent_at="2026-01-01T00:00:00Z", backend="outbox")
    return vault_dir


def email(vault_dir: Path, name: str, sender: str, subject: str, body: str, dmarc: str = "pass") -> str:
    (vault_dir / "Needs_Action" / name).write_text(
        f"---\ntype: email\nstatus: pending\nmessage_id: {name}\nfrom: {json.dumps(sender)}\nto: lena@studio.example\n"
        f"subject: {json.dumps(subject)}\nreceived: 2026-11-10T09:00:00Z\nauth: {{spf: pass, dkim: pass, dmarc: {dmarc}}}\n"
        f"---\n```text\n{body}\n```\n",
        encoding="utf-8",
    )
    return f"Needs_Action/{name}"


def sweep(capsys) -> str:
    assert main(["sweep"]) == 0
    return capsys.readouterr().out


def drafts(vault_dir: Path) -> list[str]:
    return sorted(p.name for p in (vault_dir / "Drafts").glob("*.md"))


def test_given_an_attackers_look_alike_in_the_inbox_when_the_real_client_writes_then_only_the_attacker_is_flagged(
    owner_vault: Path, capsys
):
    confusable = email(owner_vault, "EMAIL_a.md", "Sabine <sabine@kranich-1ogistik.example>", "Hi", "Can you call me?")
    one_off = email(owner_vault, "EMAIL_b.md", "Jonas <jonas@kranich-logistlk.example>", "Rechnung", "Neue IBAN?")
    real = email(owner_vault, "EMAIL_c.md", SABINE, "Entwürfe", "Schaffst du die Entwürfe bis Freitag?")
    sweep(capsys)
    for path, how in ((confusable, "looks like"), (one_off, "is one letter away from")):
        note = frontmatter(owner_vault, path)
        assert note["suspected_phishing"] is True and note["phishing_kind"] == "lookalike"
        assert note["resembles"] == "kranich-logistik.example" and how in note["phishing_reason"]
        assert note["status"] == "needs_info" and "draft" not in note
    real_note = frontmatter(owner_vault, real)
    assert "suspected_phishing" not in real_note and real_note["status"] == "awaiting_approval"
    assert drafts(owner_vault) == ["REPLY_EMAIL_c.md"]
    assert main(["status", "--json"]) == 0
    attacks = json.loads(capsys.readouterr().out)["suspected_attacks"]
    assert attacks["total"] == 2 and {a["resembles"] for a in attacks["items"]} == {"kranich-logistik.example"}
    text = sweep_status(capsys)
    assert "Suspected attacks (no reply drafted): 2" in text
    assert "suspected phishing (resembles kranich-logistik.example)" in text


def sweep_status(capsys) -> str:
    assert main(["status"]) == 0
    return capsys.readouterr().out


def test_given_the_real_clients_hijacked_account_asks_for_new_bank_details_then_confirm_by_phone_no_draft(
    owner_vault: Path, capsys
):
    path = email(owner_vault, "EMAIL_iban.md", SABINE, "Re: Rechnung", "Unsere Bankverbindung hat sich geändert.")
    sweep(capsys)
    note = frontmatter(owner_vault, path)
    assert note["phishing_kind"] == "payment_change" and note["problem"].startswith("payment-detail change: confirm")
    assert "phishing" not in note["problem"] and drafts(owner_vault) == []
    assert "payment-detail change: confirm by phone" in sweep_status(capsys)


def test_given_an_approved_reply_to_a_flagged_email_then_it_is_held_until_send_anyway(owner_vault: Path, capsys):
    """A stranger borrowing Sabine's name (not a look-alike domain, so only the flag can hold it): the owner's
    reply to it is held with the reason; with `send_anyway: true` it goes."""
    path = email(owner_vault, "EMAIL_x.md", "Sabine Kranich <sabine.office@freemail.example>", "Kurz", "Zeit?")
    sweep(capsys)
    assert frontmatter(owner_vault, path)["phishing_kind"] == "display_name"
    write_draft(owner_vault, "Approved", "reply.md", to="sabine.office@freemail.example", source="'[[EMAIL_x]]'")
    sweep(capsys)
    held = frontmatter(owner_vault, "Drafts/reply.md")
    assert held["status"] == "held" and held["h0_error_code"] == "suspected_attack"
    assert "Needs_Action/EMAIL_x.md" in held["h0_error"] and "kranich-logistik.example" in held["h0_error"]
    assert "send_anyway: true" in held["h0_error"] and outbox(owner_vault) == []

    draft = owner_vault / "Drafts/reply.md"
    draft.write_text(draft.read_text().replace("---\n", "---\nsend_anyway: true\n", 1))
    os.utime(draft, (time.time() - 60, time.time() - 60))
    os.rename(draft, owner_vault / "Approved/reply.md")
    sweep(capsys)
    assert [m["To"] for m in outbox(owner_vault)] == ["sabine.office@freemail.example"]


def test_given_an_attackers_confusable_domain_in_the_inbox_then_a_reply_to_the_real_client_is_sent(
    owner_vault: Path, capsys
):
    email(owner_vault, "EMAIL_a.md", "Sabine <sabine@kranich-1ogistik.example>", "Hi", "Ruf mich an.")
    write_draft(owner_vault, "Approved", "real.md", to="sabine@kranich-logistik.example")
    sweep(capsys)
    assert [m["To"] for m in outbox(owner_vault)] == ["sabine@kranich-logistik.example"]


def test_given_a_draft_one_letter_away_from_a_domain_the_owner_wrote_to_then_it_is_held(owner_vault: Path, capsys):
    write_draft(owner_vault, "Approved", "typo.md", to="jonas@kranich-logistlk.example")
    sweep(capsys)
    held = frontmatter(owner_vault, "Drafts/typo.md")
    assert held["h0_error_code"] == "lookalike_domain" and "kranich-logistik.example" in held["h0_error"]
    assert outbox(owner_vault) == []
