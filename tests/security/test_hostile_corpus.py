"""The hostile corpus, all at once, through `h0 sweep` and `h0 status` as real processes.

One vault holds one note of every hostile class issue 9 names — crashing frontmatter, header
injection by encoded words, control characters, hidden text, attachments from H0's own records
or Obsidian's settings, a `source:` that escapes Needs_Action/, an email note no parser may
read — beside one ordinary approved draft. Proof for each class: the typed error on the note
(or the note untouched, byte for byte), nothing sent but the ordinary draft, no handler error,
no traceback, and the same result when swept again.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.conftest import H0_BIN, subprocess_env
from tests.pipeline.harness import events, frontmatter, outbox, write_draft
from tests.security.test_hostile_notes import sweep

DEEP = "---\nto: " + "[" * 60_000 + "\n---\nHi\n"  # ruamel segfaulted past ~30,000 levels
WIDE = "---\n" + "".join(f"k{i}: {i}\n" for i in range(30_000)) + "---\nHi\n"  # past the key limit
HUGE_VALUE = "---\nto: bob@example.com\nsubject: " + "x" * 70_000 + "\n---\nHi\n"  # past the value limit
ALIAS_BOMB = (
    "---\na: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)
    )
    + "---\nHi\n"
)

# Notes in Approved/ the daemon must refuse, each with the code it must write on the returned draft.
REFUSED = {
    "inject-subject.md": ({"subject": "'=?utf-8?q?Hi=0D=0ABcc:_eve@evil.example?='"}, "invalid_request"),
    "inject-name.md": ({"to": "'=?utf-8?q?Bob=0D=0ABcc:_eve@evil.example?= <bob@example.com>'"}, "invalid_request"),
    "bell.md": ({"subject": '"Ring\\aring \\e[31mred"'}, "invalid_request"),
    "attach-log.md": ({"attachments": "[Logs/secret.json]"}, "permission_denied"),
    "attach-settings.md": ({"attachments": "[.obsidian/app.json]"}, "permission_denied"),
}
UNREADABLE = ("deep.md", "wide.md", "huge-value.md", "alias-bomb.md")
HIDDEN = "---\nto: bob@example.com\nsubject: Hi\n---\nThanks!\n%% and Bcc the board %%\n"


def _settled(path: Path) -> None:
    """As if written a minute ago: past the approval settle period."""
    then = time.time() - 60
    os.utime(path, (then, then))


def _corpus(vault_dir: Path) -> dict[str, bytes]:
    """Write the corpus; return the notes that must stay byte-identical (path → bytes)."""
    (vault_dir / "Logs").mkdir(exist_ok=True)
    (vault_dir / "Logs" / "secret.json").write_text('{"token": "not for mailing"}')
    (vault_dir / ".obsidian").mkdir(exist_ok=True)
    (vault_dir / ".obsidian" / "app.json").write_text('{"apiKey": "sk-not-for-mailing"}')
    for name, (fields, _) in REFUSED.items():
        fields = dict(fields)
        to = fields.pop("to", "bob@example.com")
        subject = fields.pop("subject", None)
        path = write_draft(vault_dir, "Approved", name, to=to, **fields)
        if subject is not None:  # raw YAML, so the escapes reach the parser as written
            path.write_text(path.read_text().replace("subject: 'Hello'", f"subject: {subject}"))
            _settled(path)
    (vault_dir / "Approved" / "hidden.md").write_text(HIDDEN)
    _settled(vault_dir / "Approved" / "hidden.md")
    write_draft(
        vault_dir,
        "Approved",
        "escape.md",
        to="amy@example.org",
        subject="Re: rules",
        source="Needs_Action/../H0_Rules.md",
    )
    write_draft(vault_dir, "Approved", "fine.md", to="amy@example.org", subject="Lunch")
    untouched = {}
    for folder, name, text in [
        ("Approved", "deep.md", DEEP),
        ("Approved", "wide.md", WIDE),
        ("Approved", "huge-value.md", HUGE_VALUE),
        ("Approved", "alias-bomb.md", ALIAS_BOMB),  # each given back to Drafts/ unchanged: see UNREADABLE
        ("Needs_Action", "EMAIL_deep.md", DEEP.replace("to:", "from:")),
        ("Needs_Action", "EMAIL_bomb.md", ALIAS_BOMB),
        ("Drafts", "deep-draft.md", DEEP),
    ]:
        (vault_dir / folder / name).write_text(text)
        _settled(vault_dir / folder / name)
        untouched[f"{folder}/{name}"] = text.encode()
    rules = vault_dir / "H0_Rules.md"
    if rules.exists():
        untouched["H0_Rules.md"] = rules.read_bytes()
    return untouched


def test_given_the_whole_hostile_corpus_when_swept_twice_then_only_the_ordinary_draft_is_sent(vault_dir: Path):
    untouched = _corpus(vault_dir)
    for _ in range(2):
        result = sweep(vault_dir)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Traceback" not in result.stderr and "Segmentation" not in result.stderr
    sent = outbox(vault_dir)
    assert sorted(m["To"] for m in sent) == ["amy@example.org", "amy@example.org"]  # fine.md and escape.md
    assert all(m["Bcc"] is None and "eve@evil.example" not in m.as_string() for m in sent)
    assert not any("not for mailing" in m.as_string() for m in sent)
    for name, (_, code) in REFUSED.items():
        returned = frontmatter(vault_dir, f"Drafts/{name}")
        assert returned["h0_error_code"] == code, (name, returned.get("h0_error"))
        assert returned["status"] == "not_sent" and returned["h0_error"]
    assert frontmatter(vault_dir, "Drafts/hidden.md")["h0_error_code"] == "invalid_request"
    for rel, data in untouched.items():
        if rel.removeprefix("Approved/") in UNREADABLE:  # not sent, given back as it was: nothing to send it by
            assert not (vault_dir / rel).exists()
            rel = rel.replace("Approved/", "Drafts/")
        assert (vault_dir / rel).read_bytes() == data, f"{rel} changed"
    unreadable = {
        e["path"]: e["reason"] for e in events(vault_dir, event="send_refused") if e["reason"] == "parse_error"
    }
    assert unreadable == {f"Approved/{name}": "parse_error" for name in UNREADABLE}
    # reported once each, not once per sweep
    assert len(events(vault_dir, event="send_refused")) == len(REFUSED) + 1 + len(UNREADABLE)
    assert not events(vault_dir, event="handler_error")


def test_given_the_hostile_corpus_when_h0_status_runs_then_it_reports_and_exits_0(vault_dir: Path):
    _corpus(vault_dir)
    env = subprocess_env(VAULT_PATH=str(vault_dir))
    result = subprocess.run(
        [H0_BIN, "status", "--json"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert isinstance(json.loads(result.stdout), dict)
