"""The first hour, scripted as one user's session (issue 24): a fresh home with no settings, the
installed `h0` as processes; the demo on a copy of the bundled vault and its reset; `h0 init` on a
new folder; `h0 import` of an mbox of 20 messages of varied shape (HTML only, attachments,
non-UTF-8, a thread with Cc, the owner's own sent mail); a sweep; a draft edited and approved; then
status and log. Every line and exit code the user sees is asserted as text a person can act on.

APPROVAL_SETTLE_SECONDS=0 stands for the few seconds a person takes between approving and running
`h0 sweep` (the window itself is tested in tests/security/test_seen_before_approval.py)."""

from __future__ import annotations

import mailbox
import shutil
import subprocess
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.conftest import H0_BIN, ROOT, subprocess_env
from tests.test_cli_import import message as imported_message

pytestmark = pytest.mark.slow


def message(
    sender: str, subject: str, body: str, *, hour: int = 9, to: str = "alex@home.example", **parts: object
) -> EmailMessage:
    """tests/test_cli_import.py's builder, to the owner of this session, at an hour of 24 November."""
    return imported_message(sender, subject, body, to=to, date=f"Tue, 24 Nov 2026 {hour:02d}:30:00 +0000", **parts)  # type: ignore[arg-type]


def twenty_messages(path: Path) -> None:
    box = mailbox.mbox(path)
    box.add(
        message(
            "Dana Rivera <dana@acme.example>",
            "Friday review",
            "Could we move the review to Friday?",
            cc="Lee Park <lee@acme.example>, Alex <alex@home.example>",
            msg_id="<t1@acme.example>",
        )
    )
    box.add(
        message(
            "Lee Park <lee@acme.example>",
            "Re: Friday review",
            "Friday works for me, what time?",
            cc="Dana Rivera <dana@acme.example>",
            msg_id="<t2@acme.example>",
            reply_to="<t1@acme.example>",
            hour=10,
        )
    )
    mine = message(
        "Alex <alex@home.example>",
        "Re: Friday review",
        "Hi Dana,\n\nFriday 10:00 it is.\n\nCheers,\nAlex",
        to="dana@acme.example",
        msg_id="<t3@home.example>",
        reply_to="<t2@acme.example>",
        hour=11,
    )
    mine["X-Gmail-Labels"] = "Sent"  # a Takeout export says it was sent (a From alone is not the owner: issue 29)
    box.add(mine)
    box.add(
        message(
            "Deals <news@shop.example>",
            "Weekly deals",
            "",
            html="<p>Our <b>weekly</b> deals</p>",
            msg_id="<n1@shop.example>",
        )
    )
    box.add(
        message(
            "Jörg Weiß <joerg@bau.example>",
            "Angebot",
            "Schöne Grüße aus Köln. Können Sie bis Freitag antworten?",
            charset="iso-8859-1",
            msg_id="<j1@bau.example>",
        )
    )
    box.add(
        message(
            "Sam Okafor <sam@globex.example>",
            "Quote",
            "Can you check the attached quote?",
            attachment=b"%PDF-1.4 quote",
            msg_id="<s1@globex.example>",
        )
    )
    for n in range(14):
        box.add(
            message(
                f"Person {n} <p{n}@example.org>",
                f"Question {n}",
                f"Could you send me the file {n}?",
                msg_id=f"<q{n}@example.org>",
                hour=12,
            )
        )
    box.flush()
    assert len(box) == 20


def test_the_first_hour_from_the_demo_to_ones_own_mail(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()

    def h0(*args: str, **env: str) -> tuple[int, str, str]:
        run = subprocess.run(
            [H0_BIN, *args],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=tmp_path,
            env=subprocess_env(HOME=str(home), USERPROFILE=str(home), APPROVAL_SETTLE_SECONDS="0", **env),
        )
        assert "Traceback" not in run.stderr, run.stderr
        return run.returncode, run.stdout, run.stderr

    # 1. The demo, on a copy of the bundled vault as cloned (its skeleton and the marker file, which makes it the
    # demo; the first sweep puts the examples in place).
    demo = tmp_path / "demo"
    shutil.copytree(ROOT / "vault", demo, ignore=shutil.ignore_patterns("*.jsonl", "*.eml", "*.md", ".h0", "Briefings"))
    code, out, err = h0("sweep", VAULT_PATH=str(demo))
    assert code == 0 and out.splitlines()[0] == "h0 sweep: 1 triaged", out + err
    (demo / "Drafts/reply-example-001.md").rename(demo / "Approved/reply-example-001.md")
    code, out, err = h0("sweep", VAULT_PATH=str(demo))
    assert code == 0 and out.splitlines()[0].startswith("h0 sweep: 1 sent"), out + err
    assert "✉ Approved/reply-example-001.md → to dana.rivera@example.com" in out
    assert len(list((demo / "Outbox").glob("*.eml"))) == 1
    code, out, err = h0("demo", "reset", VAULT_PATH=str(demo))
    assert code == 0 and "restored" in out.lower(), out + err
    assert (demo / "Drafts/reply-example-001.md").exists() and not list((demo / "Outbox").glob("*.eml"))

    # 2. A vault of one's own: init says what next.
    mine = tmp_path / "MyVault"
    mine.mkdir()
    code, out, err = h0("init", str(mine))
    assert code == 0 and f"Created in {mine}:" in out and "Next:" in out and f"VAULT_PATH={mine}" in out, out
    assert (mine / "H0_Profile.md").exists() and (mine / "Approved").is_dir()
    code, out, err = h0("doctor", "--no-servers", VAULT_PATH=str(mine))
    assert "this is the demo vault" not in out and "run `h0 init" not in out, out

    # 3. One's own mail without a mailbox: an mbox export.
    box = tmp_path / "export.mbox"
    twenty_messages(box)
    code, out, err = h0("import", str(box), VAULT_PATH=str(mine), OWNER_EMAILS="alex@home.example")
    assert code == 0, out + err
    assert out.splitlines()[0] == (  # the 18 questions are owed a reply at once (the newsletter is not)
        "h0 import: 19 new in Needs_Action/, 1 kept as history (1 of them yours), replies owed: 18, awaited: 0"
    )

    # 4. Sweep: every email triaged, one summary line (details only with -v).
    code, out, err = h0("sweep", VAULT_PATH=str(mine), OWNER_EMAILS="alex@home.example")
    assert code == 0, out + err
    summary = out.splitlines()[0]
    assert summary.startswith("h0 sweep: ") and "19 triaged" in summary, out
    drafts = sorted(p.name for p in (mine / "Drafts").glob("*.md"))
    assert drafts, "questions get reply drafts"
    lee = next(
        (
            mine / "Drafts" / name
            for name in drafts
            if "to: lee@acme.example" in (mine / "Drafts" / name).read_text(encoding="utf-8")
        ),
        None,
    )
    assert lee is not None, drafts  # the reply to Lee's message of the thread, which asks something
    text = lee.read_text(encoding="utf-8")
    head = text.split("---\n", 2)[1]
    assert "cc: dana@acme.example" in head and "alex@home.example" not in head  # all but the owner

    # 5. Edit a draft and approve it: it goes out, in its thread, to the thread's people.
    body = text.split("---\n", 2)[2]
    above, _, _ = body.partition("%% h0: not sent below %%")
    edited = text.replace(above, "Hi Lee,\n\nFriday 10:00, see you then.\n\nCheers,\nAlex\n\n", 1)
    lee.write_text(edited, encoding="utf-8")
    lee.rename(mine / "Approved" / lee.name)
    code, out, err = h0("sweep", VAULT_PATH=str(mine), OWNER_EMAILS="alex@home.example")
    assert code == 0 and out.splitlines()[0].startswith("h0 sweep: 1 sent"), out + err
    assert f"✉ Approved/{lee.name} → to lee@acme.example" in out
    (eml,) = (mine / "Outbox").glob("*.eml")
    sent = eml.read_text(encoding="utf-8", errors="replace")
    assert "In-Reply-To: <t2@acme.example>" in sent and "Friday 10:00, see you then." in sent
    assert "dana@acme.example" in sent  # Cc: the rest of the thread
    filed = (mine / "Done" / lee.name).read_text(encoding="utf-8")
    assert "Sent on " in filed and "move this note to Approved/" not in filed, err

    # 6. Status and log tell the same story.
    code, out, err = h0("status", VAULT_PATH=str(mine))
    assert code == 0 and f"Done/{lee.name} → to lee@acme.example" in out, out + err
    assert "Errors in the last 24 h: 0" in out
    code, out, err = h0("log", VAULT_PATH=str(mine))
    assert code == 0 and lee.name in out and "lee@acme.example" in out, out + err
