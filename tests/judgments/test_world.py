"""The labelled world: generated from a fixed seed, the same bytes every time; at least 1,000 messages over
two years in English, German and French, of every kind real mail has; each with its truth in the sidecar
(labels.jsonl) and none in the mailbox, where H0 could read it; and `h0 import` reads every message."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from h0.mail.incoming.importer import export_labels
from scripts.world.generate import generate_world, write_world
from scripts.world.model import Truth


def test_given_the_seed_when_the_world_is_generated_again_then_it_is_the_same_bytes(world: Path, tmp_path: Path):
    again = write_world(generate_world(), tmp_path / "again")
    for name in ("world.mbox", "labels.jsonl"):
        assert (again / name).read_bytes() == (world / name).read_bytes(), name
    notes = sorted(p.relative_to(again / "vault") for p in (again / "vault").rglob("*.md"))
    assert notes == sorted(p.relative_to(world / "vault") for p in (world / "vault").rglob("*.md"))


def test_the_world_holds_two_years_of_mail_in_three_languages_of_every_kind(truths: list[Truth]):
    assert len(truths) >= 1000
    dates = sorted(dt.datetime.fromisoformat(t.date) for t in truths)
    assert (dates[-1] - dates[0]).days >= 700
    assert set(Counter(t.lang for t in truths)) == {"en", "de", "fr"}
    kinds = Counter(t.category for t in truths)
    for kind in ("person", "owner", "receipt", "notification", "invitation", "newsletter", "auto_reply", "attack"):
        assert kinds[kind] >= 10, kind
    attacks = Counter(t.attack["kind"] for t in truths if t.attack)
    assert set(attacks) == {"lookalike", "display_name", "spoofed", "compromised", "credentials"}
    shapes = Counter(value for t in truths if t.sent for value in t.shape.values())
    for shape in ("thanks", "greeting", "block", "mobile", "top", "bottom", "gmail-de", "outlook-fr", "apple-en"):
        assert shapes[shape] > 0, shape
    assert sum(1 for t in truths if t.meeting) >= 50
    assert sum(1 for t in truths if t.owed) >= 50 and sum(1 for t in truths if t.awaited) >= 3


def test_the_truth_lives_beside_the_mailbox_never_in_it(world: Path):
    mailbox = (world / "world.mbox").read_bytes()
    for word in (b"needs_reply", b"X-World", b"reply_text", b"imitates"):
        assert word not in mailbox


def test_given_the_world_when_read_as_h0_import_reads_it_then_every_message_is_there(all_reads, truths, hard_truths):
    assert len(all_reads) == len(truths) + len(hard_truths)
    for read in all_reads:  # the owner's sent mail is Takeout's label Sent, as in a real export
        assert (
            "sent" in {label.lower() for label in export_labels(read.message.fetched.headers)}
        ) == read.truth.sent, read.truth.name
