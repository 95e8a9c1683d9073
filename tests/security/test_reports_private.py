"""Issue 40: every report H0 writes where an agent can read it asks the gate (h0.vault.disclosure).

Given a vault with private emails — one marked private itself, one the owner moved into a private folder
(its reply waits in Drafts/), one of a private thread, one from a private person (the owner's doctor: a
People note marked private names her address) and a reply sent to her — each with words of its own, and
one public email, when the real dashboard writer writes H0_Dashboard.md and today's briefing and the
learned profile rewrites H0_Profile.md's table, then an MCP client reading those notes through a real
`h0 mcp vault` process never sees a private email's subject, sender, address or words — only how many
there are; and `h0 status` (text and --json) says the same.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from h0.cli import main
from h0.config import load_settings
from h0.drafting.learning import refresh_learned_profile
from h0.drafting.profile import LEARNED_HEADING, ensure_profile_file
from h0.drafting.service import Drafting
from h0.report.audittail import AuditTail
from h0.report.briefing import BRIEFINGS, collect_day, render_briefing
from h0.report.collect import collect_status
from h0.report.dashboard import DASHBOARD_NOTE
from h0.report.dashwriter import DashboardWriter
from h0.report.privacy import report_view
from h0.state import state_dir_for
from h0.vault import AuditLog, Vault
from h0.vault.api import LocalVault, Notes
from tests.conftest import H0_BIN, subprocess_env
from tests.drafting.conftest import sent_by_h0

pytestmark = pytest.mark.usefixtures("loguru_restored")

PRIVATE_FOLDERS = "Health"
LIVE = {"running": True, "pid": 4242, "started": "2026-01-01T00:00:00.000Z"}
OWNER = "alex@northwind.example"

# Each private email's words: its subject, its sender's name and address, its body, why H0 decided.
SECRETS = {
    "mark": ("ZQMARKSUBJ", "Zqmona", "mona@zqmark.example", "ZQMARKBODY", "ZQMARKWHY"),
    "folder": ("ZQFOLDERSUBJ", "Zqfay", "fay@zqfolder.example", "ZQFOLDERBODY", "ZQFOLDERWHY"),
    "thread": ("ZQTHREADSUBJ", "Zqted", "ted@zqthread.example", "ZQTHREADBODY", "ZQTHREADWHY"),
    "person": ("ZQPERSONSUBJ", "Zqkim", "kim@zqperson.example", "ZQPERSONBODY", "ZQPERSONWHY"),
}
OTHER_SECRETS = ("ZQOLDSUBJ", "ZQDRAFTBODY", "ZQSENTSUBJ", "ZQSENTBODY", "ZQPEOPLENOTE", "ZQREFUSED", "ZQTEDAGAIN")
WORDS = tuple(word for words in SECRETS.values() for word in words) + OTHER_SECRETS


def write(root: Path, rel: str, head: dict[str, object], body: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key}: {json.dumps(value)}\n" for key, value in head.items())
    path.write_text(f"---\n{lines}---\n{body}\n", encoding="utf-8")


def email(name: str, *, subject: str, sender: str, body: str, why: str, **head: object) -> dict[str, object]:
    return {
        "type": "email",
        "message_id": f"m-{name}",
        "thread_id": f"T-{name}",
        "from": sender,
        "to": OWNER,
        "subject": subject,
        "received": "2026-03-10T09:00:00Z",
        "reasoning": why,
        **head,
    }


def private_vault(root: Path) -> None:
    """The private emails (SECRETS), a public one, what H0 did with them (Logs/), and replies sent earlier."""
    ensure_profile_file(root)
    needs = {"status": "needs_info", "decision": "needs_info"}
    for key, folder, head in (
        ("mark", "Needs_Action", {**needs, "private": "Yes"}),  # its own mark, as people spell it
        ("folder", PRIVATE_FOLDERS, {"status": "awaiting_approval", "decision": "draft_reply"}),  # moved there
        ("thread", "Needs_Action", {"status": "pending", "decision": "urgent", "thread_id": "T-old"}),
        ("person", "Needs_Action", {"status": "delegated", "decision": "delegate", "delegate_to": "Sam"}),
    ):
        subject, name, address, body, why = SECRETS[key]
        write(
            root,
            f"{folder}/EMAIL_{key}.md",
            email(key, subject=subject, sender=f"{name} <{address}>", body=body, why=why, **head),
            f"```text\n{body}\n```",
        )
    # The thread's earlier message is private by its tag, so the new one in Needs_Action/ is private too.
    write(
        root,
        "Done/EMAIL_old.md",
        email("old", subject="ZQOLDSUBJ", sender="Zqted <ted@zqthread.example>", body="x", why="x", thread_id="T-old")
        | {"tags": ["Private"], "status": "done"},
        "```text\nold\n```",
    )
    # H0's reply to the email in the private folder waits in Drafts/: private by its thread.
    write(
        root,
        "Drafts/REPLY_EMAIL_folder.md",
        {
            "to": "fay@zqfolder.example",
            "subject": "Re: ZQFOLDERSUBJ",
            "status": "pending_approval",
            "thread_id": "T-folder",
        },
        "Hi Fay,\n\nZQDRAFTBODY\n\nBest,\nAlex",
    )
    # The doctor's People note is private; the owner wrote to her before, and to the public sender, and to Ted
    # (whose other thread is private) in a thread of its own.
    write(root, "People/Dr Zqkim.md", {"email": "kim@zqperson.example", "private": True}, "ZQPEOPLENOTE")
    for name, to, subject, text, thread in (
        ("REPLY_person", "kim@zqperson.example", "Re: ZQSENTSUBJ", "Dear Dr Zqkim,\n\nZQSENTBODY", "T-sent"),
        ("REPLY_public", "paula@public.example", "Re: Budget", "Hi Paula,\n\nThe budget is fine.", "T-pub"),
        ("REPLY_ted", "ted@zqthread.example", "Re: ZQTEDAGAIN", "Hi Ted,\n\nZQTEDAGAIN", "T-ted"),
    ):
        write(
            root,
            f"Done/{name}.md",
            {
                "to": to,
                "subject": subject,
                "status": "sent",
                "sent_at": "2026-03-09T10:00:00Z",
                "thread_id": thread,
                "rfc822_message_id": f"<{name}@northwind.example>",
            },
            f"{text}\n\nCheers,\nAlex",
        )
    write(
        root,
        "Needs_Action/EMAIL_public.md",
        email(
            "public",
            subject="Public budget question",
            sender="Paula <paula@public.example>",
            body="How much?",
            why="asks for a number",
            **needs,
        ),
        "```text\nHow much?\n```",
    )
    log = AuditLog(root / "Logs", "h0")
    public = ("Public budget question", "Paula", "paula@public.example", "", "asks for a number")
    for key, (subject, name, address, _, why) in {**SECRETS, "public": public}.items():
        where = f"Needs_Action/EMAIL_{key}.md"  # where ingest wrote it, before the owner moved one away
        log.write("email_ingested", path=where, message_id=f"m-{key}", subject=subject, sender=f"{name} <{address}>")
        log.write("triage_decision", note=where, sender=name, subject=subject, decision="needs_info", reasoning=why)
    AuditLog(root / "Logs", "gmail_mcp").write(
        "email_sent",
        path="Approved/REPLY_person.md",
        to="kim@zqperson.example",
        recipients={"to": ["kim@zqperson.example"], "cc": [], "bcc": []},
        subject="Re: ZQSENTSUBJ",
        idempotency_key="k-person",
    )
    log.write(
        "email_filed", path="Approved/REPLY_person.md", idempotency_key="k-person", done_path="Done/REPLY_person.md"
    )
    log.write(
        "send_refused",
        "error",
        path="Approved/REPLY_EMAIL_folder.md",
        returned_to="Drafts/REPLY_EMAIL_folder.md",
        message="ZQREFUSED for fay@zqfolder.example",
    )


@pytest.fixture
def reports(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The private vault, with the dashboard, today's briefing and the learned profile written by the real code."""
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("PRIVATE_FOLDERS", PRIVATE_FOLDERS)
    monkeypatch.setenv("OWNER_EMAILS", OWNER)
    private_vault(vault_dir)
    sent_by_h0(vault_dir, Path(os.environ["H0_STATE_DIR"]))
    settings = load_settings()
    DashboardWriter(settings, live=lambda: dict(LIVE)).refresh()
    assert refresh_learned_profile(Notes(LocalVault(Vault(vault_dir))), Drafting.build(settings))
    return vault_dir


def assert_no_secret(text: str, where: str) -> None:
    for word in WORDS:
        assert word.lower() not in text.lower(), f"{word} in {where}"
    assert "zq" not in text.lower(), where  # no address, name or path of a private email either


def test_the_reports_gate_sees_a_mark_a_folder_a_thread_and_a_person_as_the_index_does(vault_dir: Path):
    """The reports ask the disclosure gate through the vault index: a note private by its mark, its folder, its
    thread or a private person's mail is private; a private person is one only private People notes name."""
    private_vault(vault_dir)
    # A colleague with a private note about her (her medical leave) and a People note in the open: only
    # the private note is private, not the person.
    write(vault_dir, "People/Lena.md", {"email": "lena@work.example"}, "Lena runs the budget.")
    write(vault_dir, "People/Lena - personal.md", {"email": "lena@work.example", "private": True}, "On leave.")
    view = report_view(load_settings(vault_path=vault_dir, private_folders=PRIVATE_FOLDERS), Vault(vault_dir))
    for rel in (
        "Needs_Action/EMAIL_mark.md",
        f"{PRIVATE_FOLDERS}/EMAIL_folder.md",
        "Needs_Action/EMAIL_thread.md",  # Done/EMAIL_old.md, tagged private, shares its thread
        "Needs_Action/EMAIL_person.md",  # from the doctor
        "Drafts/REPLY_EMAIL_folder.md",  # the reply to the email in the private folder
        "Done/REPLY_person.md",  # sent to the doctor
    ):
        assert view.private(rel), rel
    assert not view.private("Needs_Action/EMAIL_public.md") and not view.private("Done/REPLY_ted.md")
    # The doctor is a private person; the other side of a private email is not (the gate's rule: that email is
    # private, their other mail is not); nor the owner, nor a colleague a public People note names.
    assert view.person("kim@zqperson.example") and view.person(" Kim@ZQperson.example")
    for address in ("mona@zqmark.example", "ted@zqthread.example", OWNER, "paula@public.example", "lena@work.example"):
        assert not view.person(address), address
    # A record whose note moved (Needs_Action/ → the private folder) is judged by the note where it is now.
    assert view.note_at("Needs_Action/EMAIL_folder.md") and not view.note_at("Needs_Action/EMAIL_public.md")
    assert view.note_at("Approved/gone.md")  # a note found nowhere: not named (fail closed)


def test_without_a_vault_index_the_reports_name_nothing(vault_dir: Path):
    """Given a state folder whose index file is a folder (it can be neither opened nor rebuilt), the reports'
    gate counts every note and every address as private."""
    private_vault(vault_dir)
    settings = load_settings(vault_path=vault_dir, private_folders=PRIVATE_FOLDERS)
    index_path = state_dir_for(vault_dir, settings.h0_state_dir) / "index.db"
    index_path.mkdir(parents=True)
    view = report_view(settings, Vault(vault_dir))
    assert view.private("Needs_Action/EMAIL_public.md") and view.person("paula@public.example")
    assert view.note_at("Needs_Action/EMAIL_public.md")
    status = collect_status(settings, private=view, live=dict(LIVE))
    assert status["needs_you"] == [] and status["private"]["needs_you"] == 4


def test_an_agent_reading_the_dashboard_briefing_and_profile_over_mcp_sees_counts_never_a_private_email(reports):
    async def read_all() -> dict[str, str]:
        params = StdioServerParameters(
            command=H0_BIN,
            args=["mcp", "vault"],
            env=subprocess_env(VAULT_PATH=str(reports), PRIVATE_FOLDERS=PRIVATE_FOLDERS),
        )
        briefing = f"{BRIEFINGS}/{dt.date.today().isoformat()}.md"
        async with Client(params) as client:
            found = {}
            for rel in (DASHBOARD_NOTE, briefing, "H0_Profile.md"):
                result = await client.call_tool("read_note", {"path": rel})
                assert not result.is_error, result
                found[rel] = json.dumps(result.structured_content, ensure_ascii=False)
            return found

    import anyio

    notes = anyio.run(read_all)
    for rel, text in notes.items():
        assert_no_secret(text.replace("ted@zqthread.example", "").replace("Hi {first_name}", ""), rel)
    dashboard, briefing, profile = notes.values()
    # The public email is named; the private ones are counted.
    assert "Public budget question" in dashboard and "paula@public.example" in dashboard
    assert "3 private emails" in dashboard  # of the four that need the owner
    assert "1 private draft" in dashboard and "1 private send" in dashboard and "1 private error" in dashboard
    assert "Public budget question" in briefing and "4 private emails" in briefing  # arrived today
    # The learned table names the public correspondents, never the doctor: the reply to her is private mail (the
    # gate's private person), so it is no past reply at all. Ted is named: his other thread is private, but the
    # other side of a private email is no private person (the gate's rule), so his public thread is learned from.
    learned = profile.split(LEARNED_HEADING, 1)[1]
    assert "paula@public.example" in learned and "ted@zqthread.example" in learned and "kim@" not in learned


def test_h0_status_and_its_json_count_private_emails_and_name_none(reports, capsys):
    assert main(["status"]) == 0
    text = capsys.readouterr().out
    assert main(["status", "--json"]) == 0
    data = capsys.readouterr().out
    for out, where in ((text, "h0 status"), (data, "h0 status --json")):
        assert_no_secret(out, where)
    assert "3 private emails" in text and "Needs_Action/EMAIL_public.md" in text
    status = json.loads(data)
    assert status["totals"]["needs_you"] == 4 and [n["path"] for n in status["needs_you"]] == [
        "Needs_Action/EMAIL_public.md"
    ]
    assert status["private"]["needs_you"] == 3 and status["private"]["waiting_for_approval"] == 1
    assert status["private"]["recent_sends"] == 1 and status["private"]["recent_errors"] == 1


def test_a_busy_day_s_briefing_asks_the_gate_about_the_rows_it_shows_and_counts_the_rest(vault_dir: Path):
    """Given 55 emails arrived today, the newest five private, the briefing shows the latest 50 rows: 45
    named, 5 counted as private, and the 5 earlier ones counted as in Logs/."""
    log = AuditLog(vault_dir / "Logs", "h0")
    for i in range(55):
        head = {"type": "email", "subject": f"Newsletter {i}", "from": "news@public.example"}
        if i >= 50:
            head |= {"private": True, "from": f"friend{i}@home.example"}
        write(vault_dir, f"Needs_Action/EMAIL_{i:02}.md", head, "x")
        log.write("email_ingested", path=f"Needs_Action/EMAIL_{i:02}.md", subject=head["subject"], sender="n")
    view = report_view(load_settings(vault_path=vault_dir), Vault(vault_dir))
    today = collect_day(dt.date.today(), AuditTail(vault_dir / "Logs").refresh(), view)
    page = render_briefing(today, collect_status(load_settings(vault_path=vault_dir), private=view))
    arrived = page.split("## Arrived", 1)[1].split("##", 1)[0]
    assert arrived.startswith(" (55)") and "*…and 5 earlier ones (see Logs/).*" in arrived
    assert arrived.count("| [[EMAIL_") == 45 and "Newsletter 49 |" in arrived and "Newsletter 4 |" not in arrived
    assert "*…and 5 private emails, not named here.*" in arrived and "Newsletter 50" not in page


# Words only the notes below hold: private by an inline `#private` in their text (past the first 4 KB too), or by
# their thread (a note elsewhere, private only by such a tag, shares its thread id).
INLINE = {
    "inline": ("ZQINLINESUBJ", "Zqiris", "iris@zqinline.example", "ZQINLINEWHY"),
    "mate": ("ZQMATESUBJ", "Zqmatt", "matt@zqmate.example", "ZQMATEWHY"),
}
FILLER = "Notes from the call, nothing in particular. " * 120  # ~5 KB before the tag


def inline_private_vault(root: Path) -> None:
    """Two emails that need the owner, one public one, and what H0 did with them (Logs/): the first private only
    by a `#private` written in its text after 5 KB of words, the second only because a note in Projects/, itself
    private only by such a tag, shares its thread."""
    needs = {"status": "needs_info", "decision": "needs_info"}
    subject, name, address, why = INLINE["inline"]
    write(
        root,
        "Needs_Action/EMAIL_inline.md",
        email("inline", subject=subject, sender=f"{name} <{address}>", body="", why=why, **needs),
        f"Owner's note: {FILLER}\n\nKeep this one to myself #private\n\n```text\nZQINLINEBODY\n```",
    )
    subject, name, address, why = INLINE["mate"]
    write(
        root,
        "Needs_Action/EMAIL_mate.md",
        email("mate", subject=subject, sender=f"{name} <{address}>", body="", why=why, thread_id="T-zqcall", **needs),
        "```text\nZQMATEBODY\n```",
    )
    write(root, "Projects/Call.md", {"thread_id": "T-zqcall"}, f"{FILLER}\n\nBetween us. #private/health")
    write(
        root,
        "Needs_Action/EMAIL_open.md",
        email("open", subject="Open question", sender="Olga <olga@open.example>", body="", why="asks", **needs),
        "```text\nWhen?\n```",
    )
    log = AuditLog(root / "Logs", "h0")
    for key, (subject, name, address, why) in {
        **INLINE,
        "open": ("Open question", "Olga", "olga@open.example", "asks"),
    }.items():
        where = f"Needs_Action/EMAIL_{key}.md"
        log.write("email_ingested", path=where, message_id=f"m-{key}", subject=subject, sender=f"{name} <{address}>")
        log.write("triage_decision", note=where, sender=name, subject=subject, decision="needs_info", reasoning=why)


def test_given_emails_private_only_by_an_inline_tag_or_their_thread_then_no_report_names_them(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    """Given an email private only by `#private` in its text (after 5 KB) and one whose thread a note tagged
    `#private/health` in its text shares, when the dashboard and today's briefing are written and `h0 status`
    runs, then each counts them and none names their subject, sender, address or words."""
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    inline_private_vault(vault_dir)
    DashboardWriter(load_settings(), live=lambda: dict(LIVE)).refresh()
    dashboard = (vault_dir / DASHBOARD_NOTE).read_text(encoding="utf-8")
    briefing = (vault_dir / BRIEFINGS / f"{dt.date.today().isoformat()}.md").read_text(encoding="utf-8")
    assert main(["status"]) == 0
    text = capsys.readouterr().out
    assert main(["status", "--json"]) == 0
    data = capsys.readouterr().out
    for out, where in ((dashboard, "dashboard"), (briefing, "briefing"), (text, "h0 status"), (data, "--json")):
        assert "zq" not in out.lower(), where  # no subject, sender, address, reason or path of theirs
        assert "Open question" in out or "EMAIL_open" in out, where  # the public one is named
    assert "2 private emails" in dashboard and "2 private emails" in briefing and "2 private emails" in text
    assert json.loads(data)["private"]["needs_you"] == 2
